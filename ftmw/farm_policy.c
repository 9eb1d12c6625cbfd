/* The task farm's policies (farm_impl.h): what a worker's reply or the
 * masters' clock decides. A RESULT finishes its task or, for a compared
 * task, is compared with the other copy's output and, when they differ,
 * voted on by a third copy; a CKPT is kept with its copy; a worker whose
 * copy runs past the time limit is stopped, and a straggler's copies are
 * backed up on idle workers. Application thread only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "farm_impl.h"
#include "owned.h"
#include "timed.h"

static int agree(const ft_farm *f, const task *t, int a, int b) {
  if (f->o.compare)
    return f->o.compare(res_data(t, a), res_len(t, a), res_data(t, b),
                        res_len(t, b), f->o.compare_ctx) == 0;
  return res_len(t, a) == res_len(t, b) &&
         (res_len(t, a) == 0 ||
          memcmp(res_data(t, a), res_data(t, b), res_len(t, a)) == 0);
}

/* A compared task has another output (index t->nres - 1): decide it
 * once there are two. */
static void compare_outputs(ft_farm *f, task *t) {
  if (t->nres < 2)
    return;
  if (t->nres == 2) {
    if (agree(f, t, 0, 1)) {
      ftmw_farm_finish(f, t, FT_FARM_OK, t->res[0].worker, 0, 0);
    } else { /* a third copy, on a third worker, votes */
      f->s.mismatches++;
      if (!ftmw_farm_vote_possible(f, t)) {
        ftmw_farm_finish_mismatch(f, t);
        return;
      }
      ftmw_farm_enqueue(f, ftmw_farm_new_copy(f, t, 0), 1);
      ftmw_farm_fill_all(f);
      return;
    }
  } else { /* three outputs: two of them must agree */
    f->s.votes++;
    int win = -1, lose = 0;
    if (agree(f, t, 0, 2))
      win = 0, lose = 1;
    else if (agree(f, t, 1, 2))
      win = 1, lose = 0;
    if (win < 0) {
      ftmw_farm_finish_mismatch(f, t);
      return;
    }
    ftmw_farm_finish(f, t, FT_FARM_OK, t->res[win].worker, win, 0);
    t->outvoted = t->res[lose].worker;
  }
  t->mismatch = t->nres == 3;
  t->compared = 1;
}

static void note_duration(ft_farm *f, uint64_t ms) {
  f->dur[f->durpos] = ms;
  f->durpos = (f->durpos + 1) % NDUR;
  if (f->ndur < NDUR)
    f->ndur++;
}

/* The run at the head of worker r's copies, which a reply from r
 * answers; NULL (after a message) when the reply names another. */
run *ftmw_farm_head_run(ft_farm *f, int r, const uint8_t *b, size_t n) {
  worker *w = &f->w[r];
  if (n < FARM_REPLY_HDR || w->n == 0)
    return NULL;
  run *u = &w->runs[w->head];
  if (ftmw_get32(b + 8) != u->no ||
      (u->c && (int64_t)ftmw_get64(b) != u->c->t->id))
    return NULL;
  return u;
}

/* The worker finished its head run: the next one starts now. */
static void pop_run(ft_farm *f, worker *w) {
  w->head = (w->head + 1) % f->o.depth;
  w->n--;
  if (w->n == 0)
    w->alone = 0;
  if (w->n > 0)
    w->runs[w->head].start = ftmw_farm_clock(f);
}

/* A RESULT m from worker r for run u: the farm keeps m if it holds an
 * output it needs (*m then NULL). */
void ftmw_farm_on_result(ft_farm *f, int r, run *u, ftmw_msg **m) {
  copy *c = u->c;
  uint64_t start = u->start;
  if (f->w[r].stopping)
    f->w[r].stopping = 2;
  pop_run(f, &f->w[r]);
  if (c == NULL)
    return; /* a cancelled copy: its task is done */
  task *t = c->t;
  int backup = c->backup;
  ftmw_farm_unrun(t, r);
  ftmw_farm_free_copy(f, c);
  if (f->timed)
    note_duration(f, ftmw_farm_clock(f) - start);
  int code = (int32_t)ftmw_get32((*m)->data + 12);
  if (code != 0) {
    ftmw_farm_finish(f, t, FT_FARM_TASK_ERROR, r, -1, code);
    return;
  }
  t->res[t->nres].msg = *m; /* kept as received */
  *m = NULL;
  t->res[t->nres].worker = r;
  t->nres++;
  if (t->wanted == 1) {
    if (backup)
      f->s.backup_wins++;
    ftmw_farm_finish(f, t, FT_FARM_OK, r, t->nres - 1, 0);
  } else {
    compare_outputs(f, t);
  }
}

void ftmw_farm_on_checkpoint(ft_farm *f, run *u, const uint8_t *b, size_t n) {
  copy *c = u->c;
  if (c == NULL)
    return;
  size_t len = n - FARM_REPLY_HDR;
  if (len > (size_t)INT32_MAX - FARM_TASK_HDR - c->t->in->len) {
    fprintf(stderr, "ftmw farm: a checkpoint of task %lld is too big to "
                    "send with the task (%zu bytes): the last one is kept\n",
            (long long)c->t->id, len);
    return;
  }
  f->s.checkpoint_bytes += len - (c->ckpt ? c->ckpt->len : 0);
  ftmw_farm_blob_unref(c->ckpt);
  c->ckpt = ftmw_farm_blob_new(b + FARM_REPLY_HDR, len, "a checkpoint");
  f->s.checkpoints++;
  if (f->s.checkpoint_bytes > f->s.checkpoint_peak)
    f->s.checkpoint_peak = f->s.checkpoint_bytes;
}

/* --- time: limits and backups ----------------------------------------------- */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t median(const ft_farm *f) {
  uint64_t v[NDUR];
  memcpy(v, f->dur, (size_t)f->ndur * sizeof(v[0]));
  qsort(v, (size_t)f->ndur, sizeof(v[0]), cmp_u64);
  return v[f->ndur / 2];
}

/* With fire, stops workers whose running copy is past the time limit and
 * launches a backup for a straggler when a worker is idle and nothing is
 * queued. Returns the milliseconds until the next such event (0: one is
 * due, without fire), or -1 (none). */
int64_t ftmw_farm_act_on_time(ft_farm *f, int fire) {
  int64_t next = -1;
  int idle = 0;
  for (int r = 1; r <= f->W; r++) {
    worker *w = &f->w[r];
    if (w->lost)
      continue;
    if (w->pending && !(w->pending = ftmw_worker_pending(r)) && w->n)
      w->runs[w->head].start = ftmw_farm_clock(f); /* joined: it starts now */
    if (w->pending) {
      next = next < 0 || next > PENDING_POLL_MS ? PENDING_POLL_MS : next;
      continue;
    }
    idle |= w->n == 0;
    run *u = w->n ? &w->runs[w->head] : NULL;
    if (u == NULL || u->c == NULL || w->stopping || f->o.time_limit_ms == 0)
      continue;
    uint64_t due = u->start + (uint64_t)f->o.time_limit_ms;
    if (ftmw_farm_clock(f) >= due && !fire) {
      next = 0;
    } else if (f->now >= due) {
      f->s.timeouts++;
      w->stopping = 1;
      /* its failure is reported by the next receive */
      ftmw_fence_worker(r, "stopped by the master: its task ran past the "
                           "farm's time limit");
    } else if (next < 0 || (int64_t)(due - f->now) < next) {
      next = (int64_t)(due - f->now);
    }
  }
  if (f->o.backup_factor <= 0 || f->ndur < f->o.backup_min_samples ||
      !ftmw_q_empty(&f->queue))
    return next;
  uint64_t after = (uint64_t)(f->o.backup_factor * (double)median(f));
  if (after < BACKUP_FLOOR_MS)
    after = BACKUP_FLOOR_MS;
  for (int r = 1; r <= f->W; r++) {
    worker *w = &f->w[r];
    if (w->n == 0 || w->lost || w->stopping || w->pending)
      continue;
    uint64_t due = w->runs[w->head].start + after;
    if (ftmw_farm_clock(f) < due) {
      if (next < 0 || (int64_t)(due - f->now) < next)
        next = (int64_t)(due - f->now);
      continue;
    }
    /* A straggler: what it runs, and what waits behind it, is copied to
     * idle workers (the other copy of a compared task already runs
     * elsewhere; a task is backed up once). */
    for (int i = 0; i < w->n && idle && !fire; i++) {
      const run *u = &w->runs[(w->head + i) % f->o.depth];
      if (u->c && u->c->t->wanted == 1 && u->c->t->live == 1)
        next = 0;
    }
    for (int i = 0; i < w->n && idle && fire; i++) {
      run *u = &w->runs[(w->head + i) % f->o.depth];
      if (u->c == NULL || u->c->t->wanted != 1 || u->c->t->live != 1)
        continue;
      ftmw_farm_enqueue(f, ftmw_farm_new_copy(f, u->c->t, 1), 0);
      f->s.backups++;
      ftmw_farm_fill_all(f);
      idle = 0;
      for (int v = 1; v <= f->W; v++)
        idle |= !f->w[v].lost && f->w[v].n == 0;
    }
  }
  return next;
}
