/* Figure 4.5 of the thesis, its second column: the master restores a dead
 * worker itself and resends by hand what the new worker needs, according
 * to the call at which it heard of the failure. The loop is the figure's;
 * fig45_common.h has the rest. Its answer must equal fig4_6's (the same
 * program with ms_* calls) whatever point a worker dies at.
 * Run: ftmwrun -w 3 fig4_5 [ITERATIONS] */
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
      ret = ft_send(&a, 1, FT_INT, i, 1);

    for (i = 1; i <= workers; i++) {
      ret = ft_send(&b, 1, FT_INT, i, 1);
      if (ret == 0) {
        ft_restore(i);
        ret = ft_send(&a, 1, FT_INT, i, 1);
        ret = ft_send(&b, 1, FT_INT, i, 1);
      }
    }

    for (i = 1; i <= workers; i++) {
      ret = ft_rcv(&c, 1, FT_INT, i, 1, &status);
      if (ret == 0) {
        ft_restore(i);
        ft_send(&a, 1, FT_INT, i, 1);
        ft_send(&b, 1, FT_INT, i, 1);
        ft_rcv(&c, 1, FT_INT, i, 1, &status);
      }
      sum += c;
    }
  } while (k < niter);

  printf("sum %ld\n", sum);
  ft_finalize();
  return 0;
}
