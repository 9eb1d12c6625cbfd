/* Figure 4.6 of the thesis: figure 4.5's program with ms_* calls. The tag
 * names the work cycle: a (tag 1) is a cycle of one call, replayed to every
 * new worker; b and c (tag 2) form the cycle that is replayed only if it
 * did not complete. ms_restore restarts the worker and replays; nothing
 * else is written for the failure. The loop is the figure's;
 * fig45_common.h has the rest. Run: ftmwrun -w 3 fig4_6 [ITERATIONS] */
#include "fig45_common.h"

int main(int argc, char *argv[]) {
  int a, b, c, i, ret, k = 0, niter;
  long sum = 0;
  FT_Status status;
  int workers = start(&argc, &argv, &niter);

  do {
    k++;
    a = k;
    b = 3 * k + 1;
    for (i = 1; i <= workers; i++)
      ms_send(&a, 1, FT_INT, i, 1);

    for (i = 1; i <= workers; i++) {
      ret = ms_send(&b, 1, FT_INT, i, 2);
      if (ret == 0)
        ms_restore(i);
    }

    for (i = 1; i <= workers; i++) {
      ret = ms_rcv(&c, 1, FT_INT, i, 2, &status);
      if (ret == 0)
        ms_restore(i);
      sum += c;
    }
  } while (k < niter);

  printf("sum %ld\n", sum);
  ft_finalize();
  return 0;
}
