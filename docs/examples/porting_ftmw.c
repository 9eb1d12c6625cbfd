/* Porting guide, step 1: the same program with ft_* calls. It runs with
 * workers on their own TCP connections and survives their deaths (the
 * master hears of one as a 0 return), but does not yet restore them.
 * Run: ftmwrun -w 3 porting_ftmw */
#include <stdio.h>

#include "ftmw.h"

int main(int argc, char *argv[]) {
  int rank, workers, temp = 7, answer, i;
  long sum = 0;
  FT_Status status;

  if (ft_init(&argc, &argv, &rank, &workers) < 0) {
    fprintf(stderr, "ft_init: %s\n", ft_strerror(ft_error()));
    return 1;
  }

  if (rank == 0) {
    for (i = 1; i <= workers; i++)
      ft_send(&temp, 1, FT_INT, i, 1);
    for (i = 1; i <= workers; i++) {
      if (ft_recv(&answer, 1, FT_INT, i, 1, &status) == 1)
        sum += answer;
      else
        fprintf(stderr, "worker %d: %s\n", i, ft_strerror(ft_error()));
    }
    printf("sum %ld\n", sum);
  } else {
    ft_recv(&temp, 1, FT_INT, 0, 1, &status);
    answer = rank * temp;
    ft_send(&answer, 1, FT_INT, 0, 1);
  }

  ft_finalize();
  return 0;
}
