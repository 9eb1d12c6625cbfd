/* Ping-pong between the master and worker 1, built twice: over FTMW
 * (pingpong_ft: ft_send/ft_recv) and over plain MPI (pingpong_mpi), see
 * twin.h. Prints "LABEL SIZE MEDIAN MIN MAX" lines, round trips in
 * microseconds over batches, LABEL being ftmw or mpi.
 * Usage: ftmwrun -w 1 pingpong_ft [--quick]
 *        mpiexec -n 2 pingpong_mpi [--quick] */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "twin.h"

#define BATCHES 15

#ifdef BENCH_PLAIN_MPI
#define LABEL "mpi"
#else
#define LABEL "ftmw"
#endif

int main(int argc, char **argv) {
  int rank, W, from, tag;
  if (twin_init(&argc, &argv, &rank, &W) < 0)
    return 1;
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  char *buf = malloc(bench_sizes[BENCH_NSIZES - 1]);
  int ok = buf != NULL;
  for (size_t s = 0; s < BENCH_NSIZES && ok; s++) {
    int n = (int)bench_sizes[s], iters = bench_iters(bench_sizes[s], quick);
    int per = iters / BATCHES > 0 ? iters / BATCHES : 1;
    double batch[BATCHES];
    for (int b = -1; b < BATCHES; b++) { /* batch -1 warms up */
      double t0 = bench_now();
      for (int i = 0; i < per && ok; i++) {
        if (rank == 0)
          ok = twin_send(buf, n, 1, 1) && twin_recv(buf, n, 1, 1, &from, &tag);
        else if (rank == 1)
          ok = twin_recv(buf, n, 0, 1, &from, &tag) && twin_send(buf, n, 0, 1);
      }
      if (b >= 0)
        batch[b] = (bench_now() - t0) / per * 1e6;
    }
    if (rank == 0 && ok) {
      char label[32];
      snprintf(label, sizeof(label), LABEL " %d", n);
      bench_report(label, batch, BATCHES);
    }
  }
  if (!ok)
    fprintf(stderr, "pingpong: rank %d: %s\n", rank, twin_failure());
  free(buf);
  twin_finalize();
  return ok ? 0 : 1;
}
