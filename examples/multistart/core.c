/* Test functions, start points, local search, command line and report of
 * the multistart optimizer (see multistart.h). */
#define _DEFAULT_SOURCE /* M_PI, M_E */
#include "multistart.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* --- test functions ------------------------------------------------------ */

static const struct {
  const char *name;
  double lo, hi;
} functions[MSTART_NFUNCTIONS] = {
    [MSTART_RASTRIGIN] = {"rastrigin", -5.12, 5.12},
    [MSTART_ROSENBROCK] = {"rosenbrock", -5.0, 10.0},
    [MSTART_ACKLEY] = {"ackley", -32.768, 32.768},
    [MSTART_SPHERE] = {"sphere", -5.12, 5.12},
};

const char *mstart_function_name(int function) {
  return function >= 0 && function < MSTART_NFUNCTIONS ? functions[function].name
                                                        : "unknown";
}

void mstart_box(int function, double *lo, double *hi) {
  *lo = functions[function].lo;
  *hi = functions[function].hi;
}

double mstart_objective(int function, const double *x, int dim) {
  double s = 0;
  switch (function) {
  case MSTART_RASTRIGIN:
    s = 10.0 * dim;
    for (int i = 0; i < dim; i++)
      s += x[i] * x[i] - 10.0 * cos(2 * M_PI * x[i]);
    return s;
  case MSTART_ROSENBROCK:
    for (int i = 0; i + 1 < dim; i++) {
      double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
      s += 100 * a * a + b * b;
    }
    return s;
  case MSTART_ACKLEY: {
    double sq = 0, cs = 0;
    for (int i = 0; i < dim; i++) {
      sq += x[i] * x[i];
      cs += cos(2 * M_PI * x[i]);
    }
    return -20 * exp(-0.2 * sqrt(sq / dim)) - exp(cs / dim) + 20 + M_E;
  }
  default:
    for (int i = 0; i < dim; i++)
      s += x[i] * x[i];
    return s;
  }
}

/* --- start points: xoshiro256** seeded through splitmix64 ---------------- */

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t xoshiro(uint64_t s[4]) {
  uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return r;
}

void mstart_start_point(const mstart_problem *p, long index, double *x) {
  uint64_t seed = p->seed ^ ((uint64_t)index * 0xd1342543de82ef95u), s[4];
  for (int i = 0; i < 4; i++)
    s[i] = splitmix64(&seed);
  double lo, hi;
  mstart_box(p->function, &lo, &hi);
  for (int i = 0; i < p->dim; i++)
    x[i] = lo + (hi - lo) * ((xoshiro(s) >> 11) * 0x1.0p-53);
}

/* --- local search ---------------------------------------------------------- */

typedef struct {
  const mstart_problem *p;
  double lo, hi;
  long evals;
} search_ctx;

static double evaluate(search_ctx *c, const double *x) {
  c->evals++;
  if (c->p->delay_us > 0) {
    struct timespec ts = {c->p->delay_us / 1000000, (c->p->delay_us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
      ;
  }
  return mstart_objective(c->p->function, x, c->p->dim);
}

/* Hooke-Jeeves exploration: each coordinate tries +h then -h and keeps a
 * move that lowers the value. x and *fx are updated in place. */
static void explore(search_ctx *c, double *x, double *fx, double h) {
  for (int i = 0; i < c->p->dim && c->evals < c->p->max_evals; i++) {
    double xi = x[i];
    for (int sign = 1; sign >= -1; sign -= 2) {
      double t = xi + sign * h;
      if (t < c->lo || t > c->hi)
        continue;
      x[i] = t;
      double ft = evaluate(c, x);
      if (ft < *fx) {
        *fx = ft;
        break;
      }
      x[i] = xi;
    }
  }
}

static double clamp(double v, double lo, double hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

void mstart_search(const mstart_problem *p, double *x, mstart_result *r) {
  search_ctx c = {.p = p};
  mstart_box(p->function, &c.lo, &c.hi);
  int n = p->dim;
  double y[MSTART_MAX_DIM], z[MSTART_MAX_DIM];
  double h0 = 0.5 * (c.hi - c.lo), h = h0;
  double fx = evaluate(&c, x);
  while (h > p->tol && c.evals < p->max_evals) {
    memcpy(y, x, n * sizeof(double));
    double fy = fx;
    explore(&c, y, &fy, h);
    if (!(fy < fx)) {
      h *= 0.5; /* failure: shrink the step */
      continue;
    }
    /* Success: pattern moves along the direction just found, while they
     * keep helping; then a larger step. */
    for (;;) {
      for (int i = 0; i < n; i++)
        z[i] = clamp(2 * y[i] - x[i], c.lo, c.hi);
      memcpy(x, y, n * sizeof(double));
      fx = fy;
      if (c.evals >= p->max_evals)
        break;
      double fz = evaluate(&c, z);
      explore(&c, z, &fz, h);
      if (!(fz < fx))
        break;
      memcpy(y, z, n * sizeof(double));
      fy = fz;
    }
    h = fmin(2 * h, h0);
  }
  r->f = fx;
  r->evals = c.evals;
  memcpy(r->x, x, n * sizeof(double));
}

int mstart_better(const mstart_result *a, const mstart_result *b) {
  return a->f < b->f || (a->f == b->f && a->index < b->index);
}

void mstart_result_pack(const mstart_result *r, int dim, double *wire) {
  wire[0] = (double)r->index;
  wire[1] = r->f;
  wire[2] = (double)r->evals;
  memcpy(wire + 3, r->x, dim * sizeof(double));
}

void mstart_result_unpack(const double *wire, int dim, mstart_result *r) {
  r->index = (long)wire[0];
  r->f = wire[1];
  r->evals = (long)wire[2];
  memcpy(r->x, wire + 3, dim * sizeof(double));
}

/* --- command line ------------------------------------------------------- */

static void usage(FILE *out, const char *prog) {
  fprintf(out,
          "NAME\n"
          "    %s - multistart global optimization over FTMW\n"
          "\n"
          "SYNOPSIS\n"
          "    ftmwrun -w W [ftmwrun options] %s [OPTION]...\n"
          "\n"
          "DESCRIPTION\n"
          "    Draws start points uniformly in the test function's box, refines\n"
          "    each with a Hooke-Jeeves pattern search (its step starts at half\n"
          "    the box's width, doubles after a success up to that, and halves\n"
          "    after a failure, down to --tol) and prints the best minimum found.\n"
          "    The master hands start points to workers one at a time; when a\n"
          "    worker dies it is restored and its start point searched again, so\n"
          "    the answer depends only on the options, not on failures.\n"
          "\n"
          "OPTIONS\n"
          "    -f, --function NAME  rastrigin, rosenbrock, ackley or sphere\n"
          "                         (default rastrigin)\n"
          "    -d, --dim N          dimension, 1..%d (default 10)\n"
          "    -n, --starts N       local searches, 1..100000000 (default 64)\n"
          "    -s, --seed N         seed of the start points (default 1)\n"
          "    -t, --tol X          stop a search when its step is below X, in\n"
          "                         (0, 1] (default 1e-8)\n"
          "    -e, --max-evals N    stop a search after N evaluations\n"
          "                         (default 200000)\n"
          "    -D, --delay-us N     sleep N microseconds in every objective\n"
          "                         evaluation, to simulate a costly one\n"
          "                         (default 0)\n"
          "    -h, --help           this text\n"
          "\n"
          "OUTPUT\n"
          "    The best value (in decimal and in C99 hex, bit-exact), the start\n"
          "    it came from, the best point, the number of local searches and\n"
          "    objective evaluations, the failures and restores seen, the time.\n"
          "    Only the primary master prints.\n"
          "\n"
          "EXIT STATUS\n"
          "    0 on success, 1 if every worker was lost, 2 for a bad option, 3\n"
          "    when stopped by SIGTERM (a time limit): the best of the searches\n"
          "    done by then is printed, with their number.\n"
          "\n"
          "EXAMPLES\n"
          "    ftmwrun -w 4 %s -f rosenbrock -n 16\n"
          "    FT_FAULT=recv.exit:4@2 ftmwrun -w 4 %s -D 100   (a worker killed)\n",
          prog, prog, MSTART_MAX_DIM, prog, prog);
}

static int parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

int mstart_options(int argc, char **argv, const char *prog, mstart_problem *p) {
#ifdef PR_SET_TIMERSLACK
  /* --delay-us sleeps: without this, Linux may oversleep each by 50 us. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
  static const struct option longopts[] = {
      {"function", required_argument, 0, 'f'}, {"dim", required_argument, 0, 'd'},
      {"starts", required_argument, 0, 'n'},   {"seed", required_argument, 0, 's'},
      {"tol", required_argument, 0, 't'},      {"max-evals", required_argument, 0, 'e'},
      {"delay-us", required_argument, 0, 'D'}, {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  *p = (mstart_problem){.function = MSTART_RASTRIGIN, .dim = 10, .starts = 64,
                        .seed = 1, .tol = 1e-8, .max_evals = 200000};
  opterr = 0;
  optind = 1;
  int c;
  long v;
  char *end;
  while ((c = getopt_long(argc, argv, ":f:d:n:s:t:e:D:h", longopts, NULL)) != -1) {
    const char *bad = NULL;
    switch (c) {
    case 'f':
      p->function = -1;
      for (int i = 0; i < MSTART_NFUNCTIONS; i++)
        if (strcmp(optarg, functions[i].name) == 0)
          p->function = i;
      if (p->function < 0)
        bad = "--function must be rastrigin, rosenbrock, ackley or sphere";
      break;
    case 'd':
      if (parse_long(optarg, 1, MSTART_MAX_DIM, &v) == 0)
        p->dim = (int)v;
      else
        bad = "--dim must be an integer from 1 to 1000";
      break;
    case 'n':
      if (parse_long(optarg, 1, 100000000, &v) == 0)
        p->starts = v;
      else
        bad = "--starts must be an integer from 1 to 100000000";
      break;
    case 's':
      if (parse_long(optarg, 0, 0x7fffffffffffffffL, &v) == 0)
        p->seed = (uint64_t)v;
      else
        bad = "--seed must be a non-negative integer";
      break;
    case 't':
      errno = 0;
      p->tol = strtod(optarg, &end);
      if (errno || end == optarg || *end || !(p->tol > 0) || p->tol > 1)
        bad = "--tol must be a number in (0, 1]";
      break;
    case 'e':
      if (parse_long(optarg, 1, 1000000000, &v) == 0)
        p->max_evals = v;
      else
        bad = "--max-evals must be an integer from 1 to 1000000000";
      break;
    case 'D':
      if (parse_long(optarg, 0, 10000000, &v) == 0)
        p->delay_us = v;
      else
        bad = "--delay-us must be an integer from 0 to 10000000";
      break;
    case 'h':
      usage(stdout, prog);
      return 1;
    default:
      fprintf(stderr, "%s: %s: %s\n", prog,
              c == ':' ? "missing value for" : "unknown option", argv[optind - 1]);
      fprintf(stderr, "Try '%s --help'.\n", prog);
      return -1;
    }
    if (bad) {
      fprintf(stderr, "%s: %s (got \"%s\")\n", prog, bad, optarg);
      return -1;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "%s: unexpected argument: %s\nTry '%s --help'.\n", prog,
            argv[optind], prog);
    return -1;
  }
  return 0;
}

void mstart_report(const mstart_problem *p, const mstart_result *best,
                   long done, long evals, int failures, int restores,
                   double seconds) {
  printf("function %s, dimension %d, %ld starts, seed %llu\n",
         mstart_function_name(p->function), p->dim, p->starts,
         (unsigned long long)p->seed);
  printf("best f = %.17g (%a) from start %ld\n", best->f, best->f, best->index);
  printf("best x =");
  for (int i = 0; i < p->dim; i++)
    printf(" %.17g", best->x[i]);
  printf("\n");
  if (done == p->starts)
    printf("local searches %ld, evaluations %ld\n", done, evals);
  else /* stopped by SIGTERM: the best of those done */
    printf("local searches %ld of %ld (stopped by SIGTERM), evaluations %ld\n",
           done, p->starts, evals);
  printf("failures %d, restores %d\n", failures, restores);
  printf("time %.4f s\n", seconds);
}
