/* The plain-MPI twin of examples/multistart: the same problem, start
 * points, search and report, with MPI_Send/MPI_Recv and no fault
 * tolerance, for the side-by-side comparisons of bench/. Rank 0 is the
 * master; it sends the problem to every worker, hands out start points
 * one at a time to whichever worker answers first, and stops the workers
 * with an empty message.
 * Run: mpiexec -n W+1 multistart_mpi [multistart OPTIONS] */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "multistart.h"

enum { TAG_PROBLEM = 1, TAG_TASK, TAG_RESULT, TAG_STOP };

static void worker(void) {
  mstart_problem p;
  MPI_Recv(&p, sizeof(p), MPI_BYTE, 0, TAG_PROBLEM, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double task[1 + MSTART_MAX_DIM], wire[MSTART_RESULT_LEN(MSTART_MAX_DIM)];
  mstart_result r;
  for (;;) {
    MPI_Status st;
    MPI_Recv(task, 1 + p.dim, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    if (st.MPI_TAG == TAG_STOP)
      return;
    r.index = (long)task[0];
    mstart_search(&p, task + 1, &r);
    mstart_result_pack(&r, p.dim, wire);
    MPI_Send(wire, MSTART_RESULT_LEN(p.dim), MPI_DOUBLE, 0, TAG_RESULT, MPI_COMM_WORLD);
  }
}

/* Sends worker w start point next, or the stop message if none is left. */
static void give(const mstart_problem *p, int w, long *next) {
  double task[1 + MSTART_MAX_DIM];
  if (*next >= p->starts) {
    MPI_Send(NULL, 0, MPI_DOUBLE, w, TAG_STOP, MPI_COMM_WORLD);
    return;
  }
  task[0] = (double)*next;
  mstart_start_point(p, (*next)++, task + 1);
  MPI_Send(task, 1 + p->dim, MPI_DOUBLE, w, TAG_TASK, MPI_COMM_WORLD);
}

static void master(const mstart_problem *p, int W) {
  double t0 = MPI_Wtime();
  long next = 0, evals = 0;
  double wire[MSTART_RESULT_LEN(MSTART_MAX_DIM)];
  mstart_result r, best;
  for (int w = 1; w <= W; w++)
    MPI_Send(p, sizeof(*p), MPI_BYTE, w, TAG_PROBLEM, MPI_COMM_WORLD);
  for (int w = 1; w <= W; w++)
    give(p, w, &next);
  for (long done = 0; done < p->starts; done++) {
    MPI_Status st;
    MPI_Recv(wire, MSTART_RESULT_LEN(p->dim), MPI_DOUBLE, MPI_ANY_SOURCE, TAG_RESULT,
             MPI_COMM_WORLD, &st);
    mstart_result_unpack(wire, p->dim, &r);
    evals += r.evals;
    if (done == 0 || mstart_better(&r, &best))
      best = r;
    give(p, st.MPI_SOURCE, &next);
  }
  mstart_report(p, &best, p->starts, evals, 0, 0, MPI_Wtime() - t0);
}

int main(int argc, char **argv) {
  mstart_problem p;
  int rc = mstart_options(argc, argv, "multistart_mpi", &p);
  if (rc != 0)
    return rc > 0 ? 0 : 2;
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (rank == 0)
      fprintf(stderr, "multistart_mpi: needs at least 2 processes (a master and a worker)\n");
    MPI_Finalize();
    return 2;
  }
  if (rank == 0)
    master(&p, size - 1);
  else
    worker();
  MPI_Finalize();
  return 0;
}
