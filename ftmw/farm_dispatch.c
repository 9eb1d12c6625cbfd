/* The task farm's hand-out (farm_impl.h): copies go from the queue to the
 * workers, each TASK an ft_isend, and come back to the queue when a
 * worker dies (charged an attempt) or is lost. Application thread only. */
#include <stdio.h>

#include "farm_impl.h"
#include "error.h"
#include "owned.h"
#include "timed.h"

/* The last run number handed out, over every farm of this process, so
 * that a reply a worker sends for a copy of an earlier farm (cancelled,
 * but still running when that farm was destroyed) is known for what it
 * is. Every master creates the same farms in the same order: the numbers
 * agree. */
static uint32_t last_run;

uint32_t ftmw_farm_next_run(void) { return last_run + 1; }

/* Whether worker r may take a copy of t. A backup, a compared copy and
 * a vote go to a worker that has nothing of t: only outputs of different
 * workers are compared (but for the two compared copies when one worker
 * is left: then they both run on it). A suspect copy goes to a worker that
 * holds none. */
static int eligible(const ft_farm *f, const task *t, int r) {
  if (ftmw_farm_suspect(f, t) && f->w[r].n > 0)
    return 0;
  if (!ftmw_farm_holds(t, r))
    return 1;
  return t->wanted == 2 && t->nres < 2 && ftmw_farm_usable_workers(f) < 2;
}

/* After workers were lost: a vote no worker left can cast is a mismatch. */
static void drop_impossible_votes(ft_farm *f) {
  for (ftmw_qnode *n = f->queue.next; n != &f->queue;) {
    copy *c = copy_of(n);
    task *t = c->t;
    if (t->nres == 2 && !ftmw_farm_vote_possible(f, t)) {
      ftmw_q_remove(&c->node);
      ftmw_farm_free_copy(f, c);
      ftmw_farm_finish_mismatch(f, t);
      n = f->queue.next; /* finish may have taken more */
    } else {
      n = n->next;
    }
  }
}

/* Sends copy c to worker r as a TASK: its header, then the task's input
 * and the checkpoint, not copied (each blob held until the message is
 * settled). Returns 0, or -1 when r failed (reported here, and handled: c
 * is back in the queue). */
static int give(ft_farm *f, int r, copy *c) {
  task *t = c->t;
  worker *w = &f->w[r];
  uint8_t hdr[FARM_TASK_HDR];
  uint32_t no = ++last_run;
  ftmw_put64(hdr, (uint64_t)t->id);
  ftmw_put32(hdr + 8, no);
  ftmw_put32(hdr + 12, (uint32_t)(c->ckpt ? c->ckpt->len : 0));
  ftmw_put64(hdr + 16, t->in->len);
  ftmw_put32(hdr + 24, (uint32_t)t->dispatched + 1);
  ftmw_put32(hdr + 28, 0);
  ftmw_piece v[2] = {{t->in->data, t->in->len, t->in}};
  int n = 1;
  if (c->ckpt)
    v[n++] = (ftmw_piece){c->ckpt->data, c->ckpt->len, c->ckpt};
  for (int i = 0; i < n; i++)
    ((blob *)v[i].owner)->refs++;
  if (!ftmw_isend_owned("ft_isend", r, FARM_TAG_TASK, hdr, sizeof(hdr), v, n,
                        ftmw_farm_blob_unref, FTMW_FLAG_LAZY)) {
    if (ft_error() != FT_ERR_PEER_FAILED) /* cannot happen: a bug */
      fprintf(stderr, "ftmw farm: cannot send task %lld to worker %d: %s\n",
              (long long)t->id, r, ft_strerror(ft_error()));
    /* It never reached r: back to the queue, not charged to the task. */
    ftmw_farm_enqueue(f, c, 1);
    ftmw_farm_worker_died(f, r);
    return -1;
  }
  run *u = &w->runs[(w->head + w->n) % f->o.depth];
  *u = (run){.c = c, .no = no, .start = ftmw_farm_clock(f)};
  w->n++;
  w->alone = ftmw_farm_suspect(f, t);
  t->dispatched++;
  if (t->nrunning < MAX_RUNNING)
    t->running[t->nrunning++] = r;
  f->s.dispatched++;
  if (c->ckpt) {
    t->resumed = 1;
    f->s.resumed++;
  }
  return 0;
}

/* Fills worker r up to depth copies (up to `upto` of them) from the
 * queue. Returns -1 if r failed meanwhile. */
static int fill_to(ft_farm *f, int r, int upto) {
  worker *w = &f->w[r];
  /* A suspect copy first in the queue: r takes no more, so that it soon
   * holds none and can take that one alone. */
  if (w->n > 0 && !ftmw_q_empty(&f->queue) &&
      ftmw_farm_suspect(f, copy_of(f->queue.next)->t))
    return 0;
  while (!w->lost && !w->stopping && !w->alone && w->n < upto) {
    /* The first copy r may take, among the first 256 queued. */
    ftmw_qnode *n;
    int skipped = 0;
    for (n = f->queue.next; n != &f->queue; n = n->next)
      if (eligible(f, copy_of(n)->t, r) || ++skipped == 256)
        break;
    if (n == &f->queue || skipped == 256)
      return 0;
    ftmw_q_remove(n);
    if (give(f, r, copy_of(n)) < 0)
      return -1;
  }
  return 0;
}

int ftmw_farm_fill(ft_farm *f, int r) {
  if (fill_to(f, r, f->o.depth) == 0)
    return 0;
  ftmw_farm_fill_all(f); /* r died: its copies are queued, r restored */
  return -1;
}

/* Fills every worker, one copy each per round, so that a few long tasks
 * spread over the workers instead of queueing at the first ones. A worker
 * found failed at a send has its copies queued again and is restored
 * (or lost): the filling starts again, for it too. Without that, a farm
 * whose only other workers were full, lost or idle waited for ever for a
 * result with tasks queued (ftmw-sim seed 3650570: one worker, depth 2,
 * its death reported at the second task's send with replicas). */
void ftmw_farm_fill_all(ft_farm *f) {
again:;
  int low = f->o.depth; /* from the emptiest worker's level on */
  for (int r = 1; r <= f->W; r++)
    if (!f->w[r].lost && !f->w[r].stopping && f->w[r].n < low)
      low = f->w[r].n;
  for (int d = low + 1; d <= f->o.depth && !ftmw_q_empty(&f->queue); d++)
    for (int r = 1; r <= f->W && !ftmw_q_empty(&f->queue); r++)
      if (fill_to(f, r, d) < 0)
        goto again;
}

/* Worker r will not answer (it failed, or finished): its copies go back
 * to the front of the queue, in order; with charge, they are charged an
 * attempt. A worker stopped for its time limit is charged on the one it
 * was running, at the head (its results before it were on their way for
 * longer than a batch's wait). A dead one on every copy it held: the one
 * that killed it may be behind the head, whose result it had not written
 * yet (held for a batch), and the suspect rule keeps the copies charged
 * for nothing from a verdict. */
void ftmw_farm_drop_runs(ft_farm *f, int r, int charge) {
  worker *w = &f->w[r];
  int stopped = w->stopping == 1;
  charge = charge && w->stopping != 2;
  for (int i = w->n - 1; i >= 0; i--) { /* back to front: pushed at front */
    run *u = &w->runs[(w->head + i) % f->o.depth];
    copy *c = u->c;
    u->c = NULL;
    if (c == NULL)
      continue;
    task *t = c->t;
    ftmw_farm_unrun(t, r);
    if (charge && stopped && i == 0)
      t->timeouts++;
    else if (charge && !stopped && (w->alone || !ftmw_farm_suspect(f, t)))
      t->deaths++; /* held with others, a suspect is not charged more */
    if (t->deaths + t->timeouts >= f->o.max_attempts && !t->done) {
      ftmw_farm_free_copy(f, c);
      ftmw_farm_finish(f, t,
                       stopped && i == 0 ? FT_FARM_TIMED_OUT : FT_FARM_FAILED,
                       0, -1, 0);
      continue;
    }
    if (t->done) {
      ftmw_farm_free_copy(f, c);
      continue;
    }
    f->s.redispatched++;
    ftmw_farm_enqueue(f, c, 1);
  }
  w->head = w->n = w->alone = 0;
  w->stopping = 0;
}

/* Worker r failed (a call just reported it): its copies go back, then it
 * is restored, or lost. Copies handed to an incarnation that never joined
 * (restored without waiting, its spawn failed) never ran: not charged. */
void ftmw_farm_worker_died(ft_farm *f, int r) {
  worker *w = &f->w[r];
  f->s.worker_failures++;
  ftmw_farm_drop_runs(f, r, ftmw_worker_joined(r));
  int restored = f->o.restore && ft_restore(r);
  f->stale = 1; /* a spawn blocks: copies handed out next start then */
  if (restored) {
    f->s.restores++;
    /* One that does not block (spawn mode without replicas): its copies'
     * clocks start once it has joined (farm_policy.c). */
    w->pending = ftmw_worker_pending(r);
    return;
  }
  if (f->o.restore && ft_error() != FT_ERR_NO_HOST)
    fprintf(stderr, "ftmw farm: restoring worker %d: %s\n", r,
            ft_strerror(ft_error()));
  w->lost = 1;
  f->s.lost_workers++;
  drop_impossible_votes(f);
}

/* Every worker is lost: the tasks left cannot be done. */
void ftmw_farm_fail_all(ft_farm *f) {
  while (!ftmw_q_empty(&f->queue)) {
    copy *c = copy_of(ftmw_q_head(&f->queue));
    task *t = c->t;
    ftmw_q_remove(&c->node);
    ftmw_farm_free_copy(f, c);
    if (!t->done)
      ftmw_farm_finish(f, t, FT_FARM_NO_WORKERS, 0, -1, 0);
  }
}
