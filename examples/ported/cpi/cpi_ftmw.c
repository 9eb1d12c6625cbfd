/*
 * Copyright (C) by Argonne National Laboratory
 *     See COPYRIGHT in top-level directory
 */
/* MODIFIED for FTMW: ported from MPICH's examples/cpi.c (mpich-doc 4.0.2,
 * see README.md). The MPI calls are renamed to their FTMW counterparts;
 * every other change is marked "FTMW" and listed in README.md. */

#include "mpi.h"
#include "ftmw.h" /* FTMW */
#include <stdio.h>
#include <math.h>

#define FTMW_TAG_PART 1 /* FTMW: a worker's part of the sum */

double f(double);

double f(double a)
{
    return (4.0 / (1.0 + a * a));
}

int main(int argc, char *argv[])
{
    int n, myid, numprocs, i;
    double PI25DT = 3.141592653589793238462643;
    double mypi, pi, h, sum, x;
    double startwtime = 0.0, endwtime;
    int namelen;
    char processor_name[MPI_MAX_PROCESSOR_NAME];

    if (ft_init(&argc, &argv, &myid, &numprocs) < 0)    /* FTMW: the workers... */
        return 1;
    numprocs += 1;      /* FTMW: ...and the master */
    MPI_Get_processor_name(processor_name, &namelen);

    fprintf(stdout, "Process %d of %d is on %s\n", myid, numprocs, processor_name);
    fflush(stdout);

    n = 10000;  /* default # of rectangles */
    if (myid == 0)
        startwtime = ft_wtime();

    ms_bcast(&n, 1, FT_INT, 0);

    h = 1.0 / (double) n;
    sum = 0.0;
    /* A slightly better approach starts from large i and works back */
    for (i = myid + 1; i <= n; i += numprocs) {
        x = h * ((double) i - 0.5);
        sum += f(x);
    }
    mypi = h * sum;

    /* FTMW: MPI_Reduce(&mypi, &pi, 1, MPI_DOUBLE, MPI_SUM, 0, comm), as
     * the master's loop: a collective cannot finish once a rank is dead,
     * a loop can restore the worker (ms_restore replays the broadcast of
     * n, and this receive, into part) and go on. */
    pi = mypi;
    if (myid == 0) {
        double part;
        int w;
        for (w = 1; w < numprocs; w++) {
            if (ms_recv(&part, 1, FT_DOUBLE, w, FTMW_TAG_PART, NULL) == 0 && !ms_restore(w)) {
                printf("worker %d cannot be restored: %s\n", w, ft_strerror(ft_error()));
                ft_abort(1);
            }
            pi += part;
        }
    } else {
        ft_send(&mypi, 1, FT_DOUBLE, 0, FTMW_TAG_PART);
    }

    if (myid == 0) {
        endwtime = ft_wtime();
        printf("pi is approximately %.16f, Error is %.16f\n", pi, fabs(pi - PI25DT));
        printf("wall clock time = %f\n", endwtime - startwtime);
        fflush(stdout);
    }

    ft_finalize();
    return 0;
}
