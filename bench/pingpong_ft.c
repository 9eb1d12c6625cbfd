/* Ping-pong through ft_send/ft_recv between the master and worker 1.
 * Prints "ftmw SIZE MEDIAN_US" lines (median round trip of batches).
 * Usage: ftmwrun -w 1 pingpong_ft [--quick] */
#include <ftmw.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"

#define BATCHES 15

int main(int argc, char **argv) {
  int rank, W;
  if (ft_init(&argc, &argv, &rank, &W) < 0)
    return 1;
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  char *buf = malloc(bench_sizes[BENCH_NSIZES - 1]);
  FT_Status st;
  int ok = 1;
  for (size_t s = 0; s < BENCH_NSIZES && ok; s++) {
    int n = (int)bench_sizes[s], iters = bench_iters(bench_sizes[s], quick);
    int per = iters / BATCHES > 0 ? iters / BATCHES : 1;
    double batch[BATCHES];
    for (int b = -1; b < BATCHES; b++) { /* batch -1 warms up */
      double t0 = bench_now();
      for (int i = 0; i < per && ok; i++) {
        if (rank == 0)
          ok = ft_send(buf, n, FT_BYTE, 1, 1) == n && ft_recv(buf, n, FT_BYTE, 1, 1, &st) == n;
        else if (rank == 1)
          ok = ft_recv(buf, n, FT_BYTE, 0, 1, &st) == n && ft_send(buf, n, FT_BYTE, 0, 1) == n;
      }
      if (b >= 0)
        batch[b] = (bench_now() - t0) / per * 1e6;
    }
    if (rank == 0 && ok)
      printf("ftmw %d %.2f\n", n, bench_median(batch, BATCHES));
  }
  if (!ok)
    fprintf(stderr, "pingpong_ft: %s\n", ft_strerror(ft_error()));
  free(buf);
  ft_finalize();
  return ok ? 0 : 1;
}
