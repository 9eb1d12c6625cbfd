/* Built outside the tree against an installed FTMW (tests/install). */
#include <ftmw.h>
#include <ftmw_farm.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, W, x = 0;
  FT_Status st;
  if (ft_init(&argc, &argv, &rank, &W) < 0)
    return 1;
  ft_farm_options o; /* the farm layer's header and symbols are there too */
  ft_farm_options_init(&o);
  int ok = o.depth >= 1;
  if (rank == 0) {
    for (int w = 1; w <= W; w++)
      ok &= ft_recv(&x, 1, FT_INT, w, 0, &st) == 1 && x == 10 * w;
    if (ok)
      printf("installed ftmw works with %d workers\n", W);
  } else {
    x = 10 * rank;
    ok = ft_send(&x, 1, FT_INT, 0, 0) == 1;
  }
  ft_finalize();
  return ok ? 0 : 1;
}
