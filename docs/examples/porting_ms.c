/* Porting guide, step 2: fault tolerant. The master logs its calls with
 * ms_* and, when a call reports a dead worker, ms_restore starts a new one
 * and replays what it needs (here: the value, then the answer is received
 * again). The sum is the same whatever worker dies, and when.
 * Run: ftmwrun -w 3 porting_ms */
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
      if (ms_send(&temp, 1, FT_INT, i, 1) == 0 && !ms_restore(i))
        return 1; /* no host or spare left */
    for (i = 1; i <= workers; i++) {
      if (ms_recv(&answer, 1, FT_INT, i, 1, &status) == 0 && !ms_restore(i))
        return 1;
      sum += answer; /* after ms_restore, the replay received it */
    }
    printf("sum %ld\n", sum);
  } else {
    /* A restored worker (ft_init returned 0) runs the same code: the
     * master's replay sends it what it missed. */
    ft_recv(&temp, 1, FT_INT, 0, 1, &status);
    answer = rank * temp;
    ft_send(&answer, 1, FT_INT, 0, 1);
  }

  ft_finalize();
  return 0;
}
