/* The task farm's records (farm_impl.h): the bytes a task's input and
 * checkpoints share with the messages that carry them, tasks and their
 * copies, the queue, and a task finished. Application thread only. */
#include <stdlib.h>
#include <string.h>

#include "farm_impl.h"
#include "leave.h"
#include "timed.h"

/* Out of memory in the master's farm state, where the program cannot be
 * told (a copy made again after a death, a checkpoint, a message): every
 * master must hold the same state, and this one cannot, so it leaves the
 * job (a replica's death; the primary's: a failover; a master alone: the
 * job ends). ft_farm_submit returns FT_ERR_NOMEM instead where it can. */
void *ftmw_farm_must(void *p, const char *what) {
  if (p == NULL)
    ftmw_leave(FTMW_LEAVE_NO_MEMORY, 0,
               "the farm: out of memory (%s): this master leaves the job",
               what);
  return p;
}

/* A blob holding a copy of n bytes at b, one reference held; NULL when
 * out of memory. */
blob *ftmw_farm_blob_try(const void *b, size_t n) {
  blob *x = malloc(sizeof(*x) + n);
  if (x == NULL)
    return NULL;
  x->refs = 1;
  x->len = n;
  if (n)
    memcpy(x->data, b, n);
  return x;
}

blob *ftmw_farm_blob_new(const void *b, size_t n, const char *what) {
  return ftmw_farm_must(ftmw_farm_blob_try(b, n), what);
}

void ftmw_farm_blob_unref(void *p) {
  blob *x = p;
  if (x && --x->refs == 0)
    free(x);
}

void ftmw_farm_enqueue(ft_farm *f, copy *c, int front) {
  if (front)
    ftmw_q_insert_head(&f->queue, &c->node);
  else
    ftmw_q_insert_tail(&f->queue, &c->node);
}

/* Copy c (from the pool) of task t. */
copy *ftmw_farm_init_copy(copy *c, task *t, int backup) {
  ftmw_q_init(&c->node);
  c->t = t;
  c->backup = backup;
  t->live++;
  return c;
}

copy *ftmw_farm_new_copy(ft_farm *f, task *t, int backup) {
  copy *c = ftmw_farm_must(ftmw_pool_get(&f->copy_pool), "a task copy");
  return ftmw_farm_init_copy(c, t, backup);
}

void ftmw_farm_free_copy(ft_farm *f, copy *c) {
  f->s.checkpoint_bytes -= c->ckpt ? c->ckpt->len : 0;
  c->t->live--;
  ftmw_farm_blob_unref(c->ckpt);
  ftmw_pool_put(&f->copy_pool, c);
}

void ftmw_farm_free_task(ft_farm *f, task *t) {
  if (t == NULL)
    return;
  ftmw_farm_blob_unref(t->in);
  for (int i = 0; i < t->nres; i++)
    ftmw_msg_free(t->res[i].msg);
  ftmw_pool_put(&f->task_pool, t);
}

/* Task t is done: it goes to the ready list; every other copy of it is
 * dropped from the queue or cancelled on its worker. */
void ftmw_farm_finish(ft_farm *f, task *t, int status, int by, int win,
                      int code) {
  t->done = 1;
  t->status = (int8_t)status;
  t->by = by;
  t->win = (int8_t)win;
  t->code = code;
  ftmw_q_insert_tail(&f->ready, &t->ready);
  for (ftmw_qnode *n = f->queue.next; t->live > 0 && n != &f->queue;) {
    copy *c = copy_of(n);
    n = n->next;
    if (c->t == t) {
      ftmw_q_remove(&c->node);
      ftmw_farm_free_copy(f, c);
    }
  }
  for (int r = 1; t->live > 0 && r <= f->W; r++) {
    worker *w = &f->w[r];
    for (int i = 0; i < w->n; i++) {
      run *u = &w->runs[(w->head + i) % f->o.depth];
      if (u->c && u->c->t == t) {
        ftmw_farm_free_copy(f, u->c);
        u->c = NULL;
      }
    }
  }
}

/* A compared task whose outputs no majority of workers agrees on. */
void ftmw_farm_finish_mismatch(ft_farm *f, task *t) {
  ftmw_farm_finish(f, t, FT_FARM_MISMATCH, 0, -1, 0);
  t->mismatch = 1;
  t->compared = 1;
}

int ftmw_farm_usable_workers(const ft_farm *f) {
  int n = 0;
  for (int r = 1; r <= f->W; r++)
    n += !f->w[r].lost;
  return n;
}

/* Whether worker r gave an output of t or runs a copy of it now. */
int ftmw_farm_holds(const task *t, int r) {
  for (int i = 0; i < t->nres; i++)
    if (t->res[i].worker == r)
      return 1;
  for (int i = 0; i < t->nrunning; i++)
    if (t->running[i] == r)
      return 1;
  return 0;
}

void ftmw_farm_unrun(task *t, int r) {
  for (int i = 0; i < t->nrunning; i++)
    if (t->running[i] == r) {
      t->running[i] = t->running[--t->nrunning];
      return;
    }
}

/* Whether one more charge would fail t. A worker's death is charged to
 * every copy it held (farm_dispatch.c): which one it was running cannot
 * be told while the results before it may still be held back for a batch (an
 * ft_isend's, lazy). So a suspect task's copy goes only to a worker that
 * holds no other copy, and that worker gets no other until it answers;
 * a death charges a suspect task only when it came from such a worker
 * (another copy of it, a backup, may be held with others): the charge
 * that fails a task always comes from a worker that ran it alone. */
int ftmw_farm_suspect(const ft_farm *f, const task *t) {
  return t->deaths + t->timeouts + 1 >= f->o.max_attempts;
}

/* Whether some usable worker can cast t's vote. */
int ftmw_farm_vote_possible(const ft_farm *f, const task *t) {
  for (int r = 1; r <= f->W; r++)
    if (!f->w[r].lost && !ftmw_farm_holds(t, r))
      return 1;
  return 0;
}

/* The masters' clock at this event, for the policies that act on time (0
 * without them). It is read when first needed after time may have passed
 * (f->stale: the application ran, a receive waited, a restore spawned),
 * so at most once an event and not at all on an event no policy times:
 * a clock read costs 0.06-0.12 us here, and a result delivered at depth
 * 16 without a time limit needs one (the duration of its task).
 * Where f->stale is set depends only on call outcomes, so master
 * replicas read the decided clock at the same calls. */
uint64_t ftmw_farm_clock(ft_farm *f) {
  if (f->timed && f->stale) {
    f->now = ftmw_decided_ms();
    f->stale = 0;
  }
  return f->now;
}
