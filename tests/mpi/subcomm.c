/* A plain MPI program that splits MPI_COMM_WORLD, as programs with groups
 * of workers do: FTMW's MPI layer must refuse it at the call, naming it,
 * with a non-zero status (tests/mpi/layer_stops.sh). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, sub_rank;
  MPI_Comm half;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Comm_rank(half, &sub_rank);
  printf("rank %d is %d of its half\n", rank, sub_rank);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
