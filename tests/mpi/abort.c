/* A plain MPI program whose master gives up: it prints a line and calls
 * MPI_Abort(7) while its workers wait for a message. Under FTMW's MPI
 * layer the whole job must end with status 7, the line printed once
 * (with master replicas too) (tests/mpi/layer_stops.sh). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, x;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    printf("bad input, aborting\n");
    MPI_Abort(MPI_COMM_WORLD, 7);
  }
  MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
