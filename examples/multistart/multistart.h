/* The multistart optimizer's parts that know nothing of FTMW or MPI: the
 * test functions, the start points, the local search and the command
 * line. examples/multistart/multistart.c (FTMW) and
 * bench/multistart_mpi.c (plain MPI) are two drivers of the same search. */
#ifndef MULTISTART_H
#define MULTISTART_H

#include <stdint.h>

enum { MSTART_RASTRIGIN, MSTART_ROSENBROCK, MSTART_ACKLEY, MSTART_SPHERE,
       MSTART_NFUNCTIONS };

#define MSTART_MAX_DIM 1000

/* What the master sends every worker once. Plain old data: it travels as
 * bytes between processes of the same binary. */
typedef struct {
  int function; /* MSTART_* */
  int dim;
  long starts;     /* local searches */
  uint64_t seed;   /* start points are a function of (seed, index) */
  long delay_us;   /* artificial cost of one objective evaluation */
  double tol;      /* the search stops when its step falls below tol */
  long max_evals;  /* ... or after this many evaluations */
} mstart_problem;

/* The outcome of one local search. */
typedef struct {
  long index;  /* which start point */
  double f;    /* the minimum found */
  long evals;  /* objective evaluations spent */
  double x[MSTART_MAX_DIM];
} mstart_result;

/* Results travel as doubles: index, f, evals, then x. The index and the
 * count are exact in a double up to 2^53. */
#define MSTART_RESULT_LEN(dim) (3 + (dim))
void mstart_result_pack(const mstart_result *r, int dim, double *wire);
void mstart_result_unpack(const double *wire, int dim, mstart_result *r);

/* Name and box [lo, hi]^dim of a function, and its global minimum value. */
const char *mstart_function_name(int function);
void mstart_box(int function, double *lo, double *hi);

/* The objective at x (no delay, no counting). */
double mstart_objective(int function, const double *x, int dim);

/* Start point index: uniform in the box, drawn from a generator seeded by
 * (seed, index), so it does not depend on who asks or when. */
void mstart_start_point(const mstart_problem *p, long index, double *x);

/* A derivative-free local search (Hooke-Jeeves pattern search with an
 * adaptive step) from x; x becomes the minimum found. Deterministic: the
 * same problem and start point give the same bits. */
void mstart_search(const mstart_problem *p, double *x, mstart_result *r);

/* The better of two results: lower f, then lower index (so the best of a
 * run does not depend on the order results arrive in). */
int mstart_better(const mstart_result *a, const mstart_result *b);

/* Parses the command line into p. Returns 0 to run, 1 after printing
 * --help, -1 after printing a message for a bad option. */
int mstart_options(int argc, char **argv, const char *prog, mstart_problem *p);

/* Prints the final report (the lines a run is compared by): the best of
 * done searches (fewer than p->starts when stopped by SIGTERM). */
void mstart_report(const mstart_problem *p, const mstart_result *best,
                   long done, long evals, int failures, int restores,
                   double seconds);

/* The exit status of a run stopped by SIGTERM (FT_ERR_TERMINATED). */
#define MSTART_EXIT_STOPPED 3

#endif
