/* Multistart global optimizer over FTMW: the flagship example.
 *
 * The master sends the problem to every worker once (logged, so a new
 * worker gets it again), then hands out start points one at a time to
 * whichever worker is free and keeps the best result. Each task is one
 * work cycle of the ms_* log: the start point's ms_send and the result's
 * ms_irecv share a tag, and a worker's successive tasks alternate between
 * two tags, so that each task closes the one before. When a worker dies,
 * ms_irestore starts a new one and replays what it needs: the problem and,
 * if its task was unfinished, the start point, and posts the result's
 * receive again into the same buffer, without waiting for it: ft_waitany
 * completes it when the new worker answers, while the others go on. If no
 * host or spare is left, its start point goes to another worker. Either way every start point is searched exactly once
 * in the answer, so the printed optimum does not depend on failures.
 *
 * Run: ftmwrun -w 4 multistart [OPTIONS]   (multistart --help) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ftmw.h"
#include "multistart.h"

enum { TAG_PROBLEM = 1, TAG_TASK = 10 /* and 11: a worker's tasks alternate */ };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- worker ---------------------------------------------------------------- */

/* Receives the problem, then searches from each start point it is sent and
 * answers with the task's tag, until the master finishes. */
static void worker(void) {
  mstart_problem p;
  FT_Status st;
  if (ft_recv(&p, sizeof(p), FT_BYTE, 0, TAG_PROBLEM, &st) != (int)sizeof(p))
    return;
  double task[1 + MSTART_MAX_DIM], wire[MSTART_RESULT_LEN(MSTART_MAX_DIM)];
  mstart_result r;
  while (ft_recv(task, 1 + p.dim, FT_DOUBLE, 0, FT_ANY_TAG, &st) == 1 + p.dim) {
    r.index = (long)task[0];
    mstart_search(&p, task + 1, &r);
    mstart_result_pack(&r, p.dim, wire);
    if (ft_send(wire, MSTART_RESULT_LEN(p.dim), FT_DOUBLE, 0, st.tag) == 0)
      return;
  }
}

/* --- master ---------------------------------------------------------------- */

typedef struct {
  mstart_problem p;
  int W;
  long next;       /* next start point never handed out */
  long *requeued;  /* start points of workers that could not be restored */
  long nrequeued;
  long *task;      /* per worker: its start point, -1 when idle or lost */
  int *ntasks;     /* per worker: tasks given, for the tag alternation */
  char *lost;      /* per worker: failed and not restorable */
  double *results; /* per worker: the receive buffer of its task */
  char *done;      /* per start point: its result is in */
  long ndone, evals;
  int failures, restores;
  mstart_result best;
} master_state;

static double *result_buf(master_state *m, int w) {
  return m->results + (size_t)w * MSTART_RESULT_LEN(m->p.dim);
}

static void give(master_state *m, int w);

/* Worker w failed; the call that said so returned 0. Restores it, which
 * replays its log and leaves its task's receive posted. Returns 1 if w is
 * back (where it was), 0 if lost: then its start point goes to an idle
 * worker, or to the next one that asks. */
static int recover(master_state *m, int w) {
  m->failures++;
  if (ms_irestore(w)) {
    m->restores++;
    return 1;
  }
  if (ft_is_primary())
    fprintf(stderr, "multistart: worker %d lost (%s)\n", w, ft_strerror(ft_error()));
  m->lost[w] = 1;
  if (m->task[w] >= 0)
    m->requeued[m->nrequeued++] = m->task[w];
  m->task[w] = -1;
  for (int v = 1; v <= m->W && m->nrequeued > 0; v++)
    if (!m->lost[v] && m->task[v] < 0)
      give(m, v);
  return 0;
}

/* Hands worker w its next start point, if one is left. */
static void give(master_state *m, int w) {
  m->task[w] = -1;
  if (m->lost[w])
    return;
  long index;
  if (m->nrequeued > 0)
    index = m->requeued[--m->nrequeued];
  else if (m->next < m->p.starts)
    index = m->next++;
  else
    return;
  m->task[w] = index;
  int tag = TAG_TASK + (m->ntasks[w]++ & 1);
  double task[1 + MSTART_MAX_DIM];
  task[0] = (double)index;
  mstart_start_point(&m->p, index, task + 1);
  if (ms_send(task, 1 + m->p.dim, FT_DOUBLE, w, tag) == 0 && !recover(m, w))
    return;
  int len = MSTART_RESULT_LEN(m->p.dim);
  if (ms_irecv(result_buf(m, w), len, FT_DOUBLE, w, tag) == 0)
    recover(m, w); /* the replay posts the receive again */
}

/* Takes worker w's result (in its buffer) and gives it the next task. */
static void collect(master_state *m, int w) {
  mstart_result r;
  mstart_result_unpack(result_buf(m, w), m->p.dim, &r);
  if (r.index != m->task[w] || m->done[r.index]) {
    fprintf(stderr, "multistart: worker %d answered start %ld for task %ld\n", w,
            r.index, m->task[w]);
    exit(1);
  }
  m->done[r.index] = 1;
  m->ndone++;
  m->evals += r.evals;
  if (m->ndone == 1 || mstart_better(&r, &m->best))
    m->best = r;
  give(m, w);
}

static int master(const mstart_problem *p, int W) {
  double t0 = now_s();
  master_state m = {.p = *p, .W = W};
  m.requeued = calloc((size_t)W + 1, sizeof(long));
  m.task = calloc((size_t)W + 1, sizeof(long));
  m.ntasks = calloc((size_t)W + 1, sizeof(int));
  m.lost = calloc((size_t)W + 1, 1);
  m.results = calloc((size_t)(W + 1) * MSTART_RESULT_LEN(p->dim), sizeof(double));
  m.done = calloc((size_t)p->starts, 1);
  if (!m.requeued || !m.task || !m.ntasks || !m.lost || !m.results || !m.done) {
    fprintf(stderr, "multistart: out of memory\n");
    return 1;
  }
  for (int w = 1; w <= W; w++) {
    m.task[w] = -1;
    if (ms_send(&m.p, sizeof(m.p), FT_BYTE, w, TAG_PROBLEM) == 0)
      recover(&m, w);
  }
  for (int w = 1; w <= W; w++)
    if (m.task[w] < 0) /* a lost worker's start point may be here already */
      give(&m, w);
  int rc = 0;
  while (m.ndone < p->starts) {
    int w;
    if (ft_waitany(&w) >= 0) {
      collect(&m, w);
    } else if (ft_error() == FT_ERR_TERMINATED) { /* a time limit, say */
      rc = MSTART_EXIT_STOPPED;
      break;
    } else if (ft_error() == FT_ERR_NONE_POSTED) {
      fprintf(stderr, "multistart: every worker is lost; %ld of %ld searches done\n",
              m.ndone, p->starts);
      return 1;
    } else {
      recover(&m, w); /* its result comes through ft_waitany */
    }
  }
  if (ft_is_primary() && m.ndone > 0)
    mstart_report(p, &m.best, m.ndone, m.evals, m.failures, m.restores,
                  now_s() - t0);
  free(m.requeued);
  free(m.task);
  free(m.ntasks);
  free(m.lost);
  free(m.results);
  free(m.done);
  return rc;
}

int main(int argc, char **argv) {
  mstart_problem p;
  int rc = mstart_options(argc, argv, "multistart", &p);
  if (rc != 0)
    return rc > 0 ? 0 : 2;
  int rank, W;
  if (ft_init(&argc, &argv, &rank, &W) < 0) {
    fprintf(stderr, "multistart: %s\n", ft_strerror(ft_error()));
    return 1;
  }
  rc = 0;
  if (rank == 0)
    rc = master(&p, W);
  else
    worker();
  ft_finalize();
  return rc;
}
