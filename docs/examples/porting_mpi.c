/* Porting guide, step 0: a plain MPI master-worker program (the MPI column
 * of the thesis' figure 4.1, with the rank count fixed and the value set).
 * The master sends each worker a value and sums the answers.
 * Run: mpiexec -n 4 porting_mpi */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char *argv[]) {
  int rank, size, temp = 7, answer, i;
  long sum = 0;
  MPI_Status status;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int workers = size - 1;

  if (rank == 0) {
    for (i = 1; i <= workers; i++)
      MPI_Send(&temp, 1, MPI_INT, i, 1, MPI_COMM_WORLD);
    for (i = 1; i <= workers; i++) {
      MPI_Recv(&answer, 1, MPI_INT, i, 1, MPI_COMM_WORLD, &status);
      sum += answer;
    }
    printf("sum %ld\n", sum);
  } else {
    MPI_Recv(&temp, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &status);
    answer = rank * temp;
    MPI_Send(&answer, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
  }

  MPI_Finalize();
  return 0;
}
