/* The multistart optimizer on the farm layer (ftmw_farm.h): the same
 * search as multistart.c, with none of its recovery code. Each start
 * point is one task (the problem and the start's index in, the packed
 * result out); the farm restores dead workers and hands their starts out
 * again, so the printed optimum is bit for bit multistart.c's, with or
 * without failures.
 *
 * Run: ftmwrun -w 4 multistart_farm [OPTIONS]   (the options of multistart) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ftmw_farm.h"
#include "multistart.h"

typedef struct {
  mstart_problem p;
  long index;
} start_task;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One local search: the start point comes from (seed, index). */
static int search(ft_farm_task *t, void *ctx) {
  (void)ctx;
  size_t n;
  const start_task *in = ft_farm_input(t, &n);
  if (n != sizeof(*in) || in->p.dim < 1 || in->p.dim > MSTART_MAX_DIM)
    return 22;
  double x[MSTART_MAX_DIM], wire[MSTART_RESULT_LEN(MSTART_MAX_DIM)];
  mstart_result r;
  mstart_start_point(&in->p, in->index, x);
  r.index = in->index;
  mstart_search(&in->p, x, &r);
  mstart_result_pack(&r, in->p.dim, wire);
  return ft_farm_reply(t, wire, MSTART_RESULT_LEN(in->p.dim) * sizeof(double))
             ? 0
             : 5;
}

static int master(const mstart_problem *p) {
  double t0 = now_s();
  ft_farm *f = ft_farm_create(NULL);
  if (f == NULL) {
    fprintf(stderr, "multistart_farm: %s\n", ft_strerror(ft_error()));
    return 1;
  }
  for (long i = 0; i < p->starts; i++) {
    start_task in = {.p = *p, .index = i};
    if (ft_farm_submit(f, &in, sizeof(in)) < 0) {
      fprintf(stderr, "multistart_farm: %s\n", ft_strerror(ft_error()));
      return 1;
    }
  }
  mstart_result best, r;
  long ndone = 0, evals = 0;
  ft_farm_result res;
  int rc = 0;
  int more;
  while ((more = ft_farm_next(f, &res)) == 1) {
    if (res.status != FT_FARM_OK ||
        res.len != MSTART_RESULT_LEN(p->dim) * sizeof(double)) {
      fprintf(stderr, "multistart_farm: start %lld not searched (farm status %d)\n",
              (long long)res.id, res.status);
      rc = 1;
      continue;
    }
    mstart_result_unpack(res.data, p->dim, &r);
    if (r.index != res.id) {
      fprintf(stderr, "multistart_farm: task %lld answered start %ld\n",
              (long long)res.id, r.index);
      return 1;
    }
    evals += r.evals;
    if (ndone++ == 0 || mstart_better(&r, &best))
      best = r;
  }
  if (more < 0 && ft_error() == FT_ERR_TERMINATED) { /* a time limit, say */
    rc = rc ? rc : MSTART_EXIT_STOPPED;
  } else if (more < 0) {
    fprintf(stderr, "multistart_farm: %s\n", ft_strerror(ft_error()));
    rc = 1;
  }
  ft_farm_stats s;
  ft_farm_stats_get(f, &s);
  if ((rc == 0 || rc == MSTART_EXIT_STOPPED) && ndone > 0 && ft_is_primary())
    mstart_report(p, &best, ndone, evals, (int)s.worker_failures,
                  (int)s.restores, now_s() - t0);
  ft_farm_destroy(f);
  return rc;
}

int main(int argc, char **argv) {
  mstart_problem p;
  int rc = mstart_options(argc, argv, "multistart_farm", &p);
  if (rc != 0)
    return rc > 0 ? 0 : 2;
  int rank, W;
  if (ft_init(&argc, &argv, &rank, &W) < 0) {
    fprintf(stderr, "multistart_farm: %s\n", ft_strerror(ft_error()));
    return 1;
  }
  rc = rank == 0 ? master(&p) : (ft_farm_work(search, NULL), 0);
  ft_finalize();
  return rc;
}
