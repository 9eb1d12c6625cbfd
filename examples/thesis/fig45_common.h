/* What the thesis' figures 4.5 and 4.6 leave out, shared by both programs:
 * the values the master sends, the worker, and the loop's condition. Each
 * iteration k the master sends a = k and b = 3k + 1 to every worker and
 * receives c = rank * (a + 2b) back; the program prints the sum of every
 * c, which is the same whichever workers die, and where. */
#ifndef FIG45_COMMON_H
#define FIG45_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include "ftmw.h"

/* Iterations: the first argument, 6 by default. */
static int iterations(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 6;
  if (n < 1 || n > 1000000) {
    fprintf(stderr, "usage: %s [ITERATIONS (1..1000000, default 6)]\n",
            argv[0]);
    exit(2);
  }
  return n;
}

/* The worker (a fresh one after a restore starts here too): receives a
 * and b, answers c with b's tag, until the master finishes. */
static void worker(int rank) {
  int a, b, c;
  FT_Status status;
  for (;;) {
    if (ft_rcv(&a, 1, FT_INT, 0, FT_ANY_TAG, &status) != 1)
      return; /* the master finished (or died) */
    if (ft_rcv(&b, 1, FT_INT, 0, FT_ANY_TAG, &status) != 1)
      return;
    c = rank * (a + 2 * b);
    if (ft_send(&c, 1, FT_INT, 0, status.tag) != 1)
      return;
  }
}

/* Starts the process: a worker runs worker() and exits; the master
 * returns the number of workers, with the iterations in *niter. */
static int start(int *argc, char ***argv, int *niter) {
  int rank, workers;
  *niter = iterations(*argc, *argv);
  if (ft_init(argc, argv, &rank, &workers) < 0) {
    fprintf(stderr, "%s: %s\n", (*argv)[0], ft_strerror(ft_error()));
    exit(1);
  }
  if (rank != 0) {
    worker(rank);
    ft_finalize();
    exit(0);
  }
  return workers;
}

#endif
