/* The task farm's master side (ftmw_farm.h; its files: farm_impl.h): the
 * API and the event loop. The data path of a task: ft_farm_submit -> the
 * queue -> a worker (farm_dispatch.c: an ft_isend of TASK) -> its RESULT,
 * taken by ft_recv(FT_ANY_SOURCE) in next_event -> what it decides
 * (farm_policy.c) -> the ready list -> delivered by ft_farm_next.
 * Application thread only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "farm_impl.h"
#include "error.h"
#include "owned.h"
#include "timed.h"

/* --- options ---------------------------------------------------------------- */

static void farm_free(ft_farm *f);

void ft_farm_options_init(ft_farm_options *o) {
  if (o == NULL)
    return;
  *o = (ft_farm_options){.depth = 2, .max_attempts = 3, .time_limit_ms = 0,
                         .backup_factor = 3.0, .backup_min_samples = 8,
                         .duplicate = 0.0, .restore = 1};
}

static int options_ok(const ft_farm_options *o) {
  return o->depth >= 1 && o->depth <= 1024 && o->max_attempts >= 1 &&
         o->time_limit_ms >= 0 && o->backup_factor >= 0 &&
         (o->backup_factor == 0 || o->backup_factor >= 1) &&
         o->backup_min_samples >= 1 && o->duplicate >= 0 &&
         o->duplicate <= 1;
}

ft_farm *ft_farm_create(const ft_farm_options *opts) {
  int master, W, replicas;
  if (!ftmw_layer_job(&master, &W, &replicas))
    return ftmw_fail(FT_ERR_NOT_INITIALIZED), NULL;
  if (!master)
    return ftmw_fail(FT_ERR_ROLE), NULL;
  ft_farm_options o;
  ft_farm_options_init(&o);
  if (opts)
    o = *opts;
  if (!options_ok(&o))
    return ftmw_fail(FT_ERR_OPTION), NULL;
  ft_farm *f = calloc(1, sizeof(*f));
  if (f == NULL)
    return ftmw_fail(FT_ERR_NOMEM), NULL;
  f->o = o;
  f->W = W;
  f->replicas = replicas;
  ftmw_pool_init(&f->task_pool, sizeof(task));
  ftmw_pool_init(&f->copy_pool, sizeof(copy));
  ftmw_q_init(&f->queue);
  ftmw_q_init(&f->ready);
  ftmw_q_init(&f->tasks);
  f->first_run = ftmw_farm_next_run();
  f->timed = o.time_limit_ms > 0 || o.backup_factor > 0;
  f->stale = 1;
  f->w = calloc((size_t)W + 1, sizeof(worker));
  int ok = f->w != NULL;
  for (int r = 1; ok && r <= W; r++)
    ok = (f->w[r].runs = calloc((size_t)o.depth, sizeof(run))) != NULL;
  if (!ok) {
    farm_free(f);
    return ftmw_fail(FT_ERR_NOMEM), NULL;
  }
  ftmw_ok();
  return f;
}

/* --- tasks ------------------------------------------------------------------- */

/* Whether task id runs twice: a fraction o.duplicate of the ids, spread
 * evenly (the same in every master). */
static int duplicated(const ft_farm *f, int64_t id) {
  double d = f->o.duplicate;
  return d >= 1 || (d > 0 && (int64_t)((double)(id + 1) * d) !=
                                 (int64_t)((double)id * d));
}

int64_t ft_farm_submit(ft_farm *f, const void *in, size_t n) {
  if (f == NULL)
    return ftmw_fail(FT_ERR_NULL_ARG), -1;
  if (in == NULL && n > 0)
    return ftmw_fail(FT_ERR_BUFFER), -1;
  if (n > (size_t)INT32_MAX - FARM_TASK_HDR)
    return ftmw_fail(FT_ERR_TOO_BIG), -1;
  /* All it needs first: out of memory, nothing changed. A master alone
   * tells its program; with replicas, every master must hold the same
   * state, and one that cannot leaves (ftmw_farm_must). */
  int wanted = duplicated(f, f->s.submitted) ? 2 : 1;
  task *t = ftmw_pool_get(&f->task_pool);
  blob *b = t ? ftmw_farm_blob_try(in, n) : NULL; /* its one copy here */
  copy *c[2] = {NULL, NULL};
  int got = b != NULL;
  for (int i = 0; got && i < wanted; i++)
    got = (c[i] = ftmw_pool_get(&f->copy_pool)) != NULL;
  if (!got) {
    for (int i = 0; i < 2; i++)
      if (c[i])
        ftmw_pool_put(&f->copy_pool, c[i]);
    ftmw_farm_blob_unref(b);
    if (t)
      ftmw_pool_put(&f->task_pool, t);
    if (f->replicas > 0)
      ftmw_farm_must(NULL, "a task");
    return ftmw_fail(FT_ERR_NOMEM), -1;
  }
  t->in = b;
  t->id = f->s.submitted;
  t->wanted = wanted;
  for (int i = 0; i < t->wanted; i++)
    ftmw_farm_enqueue(f, ftmw_farm_init_copy(c[i], t, 0), 0);
  if (t->wanted == 2)
    f->s.duplicated++;
  ftmw_q_insert_tail(&f->tasks, &t->all);
  f->s.submitted++;
  ftmw_ok();
  return t->id;
}

/* --- the event loop ---------------------------------------------------------- */

static int take(ft_farm *f, int64_t ms);

/* Waits for one event (a reply, a failure, a deadline) and handles it.
 * A deadline acts only when no reply is waiting: a task's time ends when
 * its result reaches the master, not when the farm gets to it (after a
 * restore that blocked for a spawn, say). Returns 0, or -1 on an error
 * the farm cannot handle (ft_error()). */
static int next_event(ft_farm *f) {
  if (ftmw_farm_usable_workers(f) == 0) {
    ftmw_farm_fail_all(f);
    return 0;
  }
  int64_t ms = f->timed ? ftmw_farm_act_on_time(f, 0) : -1;
  if (ms == 0) { /* something is due: is a reply waiting? */
    int n = take(f, 0);
    if (n != 0)
      return n < 0 ? -1 : 0;
    ftmw_farm_act_on_time(f, 1);
    if (!ftmw_q_empty(&f->ready))
      return 0;
    ms = ftmw_farm_act_on_time(f, 0);
    if (ms == 0) /* cannot act yet (no idle worker now): look again soon */
      ms = 1;
  }
  return take(f, ms) < 0 ? -1 : 0;
}

/* Message m, tag tag, from worker r: a reply to a copy it holds (the farm
 * keeps m if it holds an output it needs: *m then NULL). */
static void handle(ft_farm *f, int r, int tag, ftmw_msg **m) {
  const uint8_t *b = (*m)->data;
  size_t n = (*m)->len;
  if ((tag == FARM_TAG_RESULT || tag == FARM_TAG_CKPT) &&
      n >= FARM_REPLY_HDR && (int32_t)(ftmw_get32(b + 8) - f->first_run) < 0)
    return; /* a late reply to a copy of an earlier farm */
  run *u = ftmw_farm_head_run(f, r, b, n);
  if (u == NULL || (tag != FARM_TAG_RESULT && tag != FARM_TAG_CKPT)) {
    fprintf(stderr, "ftmw farm: worker %d sent a message that answers no "
                    "task it holds (tag %d, %zu bytes): stopping it\n",
            r, tag, n);
    ftmw_fence_worker(r, "stopped by the master: it broke the farm's "
                         "protocol");
    return;
  }
  if (tag == FARM_TAG_CKPT) {
    ftmw_farm_on_checkpoint(f, u, b, n);
    return;
  }
  ftmw_farm_on_result(f, r, u, m);
  ftmw_farm_fill(f, r);
}

/* Receives one message, waiting at most ms (< 0: for ever), and handles
 * it. Returns 1 when something was taken or handled, 0 on timeout, -1 on
 * an error the farm cannot handle. */
static int take(ft_farm *f, int64_t ms) {
  FT_Status st;
  int timed_out;
  ftmw_msg *m;
  f->stale = 1;
  int got = ftmw_recv_owned(FT_ANY_SOURCE, FT_ANY_TAG, ms, &m, &st,
                            &timed_out);
  if (timed_out)
    return 0;
  int err = ft_error();
  if (!got && err == FT_ERR_NOMEM) /* a replica's copy of it: lost here */
    ftmw_farm_must(NULL, "a message");
  if (!got && err == FT_ERR_PEER_FAILED && st.source >= 1 &&
      st.source <= f->W) {
    ftmw_farm_worker_died(f, st.source);
    ftmw_farm_fill_all(f);
    return 1;
  }
  if (!got) {
    if (err == FT_ERR_PEER_FINALIZED) { /* nobody will answer any more */
      for (int r = 1; r <= f->W; r++) {
        ftmw_farm_drop_runs(f, r, 0);
        f->w[r].lost = 1;
      }
      return 1;
    }
    return -1;
  }
  handle(f, st.source, st.tag, &m);
  ftmw_msg_free(m);
  return 1;
}

/* What done task t delivers. */
static void result_of(const task *t, ft_farm_result *r) {
  *r = (ft_farm_result){.id = t->id, .status = t->status, .code = t->code,
                        .worker = t->by, .attempts = t->dispatched,
                        .resumed = t->resumed, .mismatch = t->mismatch,
                        .outvoted = t->outvoted};
  if (t->win >= 0) {
    r->data = res_data(t, t->win);
    r->len = res_len(t, t->win);
  }
  for (int i = 0; t->compared && i < t->nres; i++)
    r->workers[i] = t->res[i].worker;
}

int ft_farm_next(ft_farm *f, ft_farm_result *res) {
  if (f == NULL || res == NULL)
    return ftmw_fail(FT_ERR_NULL_ARG), -1;
  if (f->delivered) {
    ftmw_farm_free_task(f, f->delivered);
    f->delivered = NULL;
  }
  f->stale = 1; /* the application ran */
  ftmw_farm_fill_all(f);
  while (ftmw_q_empty(&f->ready)) {
    if (ftmw_q_empty(&f->tasks)) { /* every task submitted delivered */
      ftmw_ok();
      return 0;
    }
    if (next_event(f) < 0)
      return -1;
  }
  task *t = FTMW_CONTAINER_OF(ftmw_q_head(&f->ready), task, ready);
  ftmw_q_remove(&t->ready);
  ftmw_q_remove(&t->all);
  f->s.delivered++;
  f->delivered = t;
  result_of(t, res);
  ftmw_ok();
  return 1;
}

int64_t ft_farm_run(ft_farm *f, ft_farm_result_fn fn, void *ctx) {
  if (f == NULL || fn == NULL)
    return ftmw_fail(FT_ERR_NULL_ARG), -1;
  int64_t n = 0;
  ft_farm_result r;
  int rc;
  while ((rc = ft_farm_next(f, &r)) == 1) {
    n++;
    if (fn(&r, ctx) != 0)
      return -1;
  }
  return rc < 0 ? -1 : n;
}

void ft_farm_stats_get(const ft_farm *f, ft_farm_stats *s) {
  if (f && s)
    *s = f->s;
}

/* Frees everything the farm holds (no message). */
static void farm_free(ft_farm *f) {
  while (!ftmw_q_empty(&f->queue)) {
    copy *c = copy_of(ftmw_q_head(&f->queue));
    ftmw_q_remove(&c->node);
    ftmw_farm_free_copy(f, c);
  }
  for (int r = 1; f->w && r <= f->W; r++) {
    worker *w = &f->w[r];
    for (int i = 0; i < w->n; i++) {
      run *u = &w->runs[(w->head + i) % f->o.depth];
      if (u->c)
        ftmw_farm_free_copy(f, u->c);
    }
    free(w->runs);
  }
  while (!ftmw_q_empty(&f->tasks)) {
    task *t = FTMW_CONTAINER_OF(ftmw_q_head(&f->tasks), task, all);
    ftmw_q_remove(&t->all);
    ftmw_farm_free_task(f, t);
  }
  ftmw_farm_free_task(f, f->delivered);
  free(f->w);
  ftmw_pool_destroy(&f->task_pool);
  ftmw_pool_destroy(&f->copy_pool);
  free(f);
}

int ft_farm_destroy(ft_farm *f) {
  if (f == NULL)
    return ftmw_fail(FT_ERR_NULL_ARG);
  for (int r = 1; r <= f->W; r++)
    if (!f->w[r].lost) /* a dead one is told nothing */
      ft_send(NULL, 0, FT_BYTE, r, FARM_TAG_STOP);
  farm_free(f);
  ftmw_ok();
  return 1;
}
