/* A port that ignores ft_init's return value (a newcomer's mistake): with
 * a bad environment it must stop at its first call, saying why, instead
 * of running on as rank -1 (tests/integration/bad_input.sh). */
#include <stdio.h>

#include "ftmw.h"

int main(int argc, char **argv) {
  int rank = 7, workers = 7, task;
  ft_init(&argc, &argv, &rank, &workers);
  for (int i = 0; i < 1000; i++)
    if (ft_recv(&task, 1, FT_INT, 0, 1, NULL) == 0)
      printf("Worker %d\n", rank);
  ft_finalize();
  return 0;
}
