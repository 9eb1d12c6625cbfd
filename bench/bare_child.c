/* The smallest spawned MPI program: tells its parent it is up (sending its
 * pid), then leaves.
 * failover.c times MPI_Comm_spawn of it as the baseline for ft_restore. */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Comm parent;
  int x = (int)getpid();
  MPI_Init(&argc, &argv);
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) {
    MPI_Send(&x, 1, MPI_INT, 0, 0, parent);
    MPI_Comm_disconnect(&parent);
  }
  MPI_Finalize();
  return 0;
}
