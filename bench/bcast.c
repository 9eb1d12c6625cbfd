/* Broadcast cost: N broadcasts of one int from rank 0, timed at the
 * master (ft_bcast, each copy acknowledged; or with BENCH_PLAIN_MPI,
 * MPI_Bcast). Prints "bcast IMPL workers W: US us each".
 * Usage: bcast [N]   (ftmwrun -w W bcast_ft; mpiexec -n W+1 bcast_mpi) */
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_PLAIN_MPI
#include <mpi.h>
#define IMPL "MPI_Bcast"
#else
#include "ftmw.h"
#define IMPL "ft_bcast"
#endif

int main(int argc, char **argv) {
  int rank, W, x = 0;
#ifdef BENCH_PLAIN_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &W);
  W -= 1;
#else
  if (ft_init(&argc, &argv, &rank, &W) < 0)
    return 1;
#endif
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  double t0 = 0;
  for (int i = -n / 10; i < n; i++) { /* a tenth to warm up */
    if (i == 0) {
#ifdef BENCH_PLAIN_MPI
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
#else
      t0 = ft_wtime();
#endif
    }
    x = i;
#ifdef BENCH_PLAIN_MPI
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* every rank has the last one */
  double t1 = MPI_Wtime();
  MPI_Finalize();
#else
    ft_bcast(&x, 1, FT_INT, 0);
  }
  double t1 = ft_wtime(); /* each copy was acknowledged */
  ft_finalize();
#endif
  if (rank == 0 && n > 0)
    printf("bcast %s workers %d: %.1f us each\n", IMPL, W, (t1 - t0) / n * 1e6);
  return 0;
}
