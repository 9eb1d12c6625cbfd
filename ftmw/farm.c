/* The task farm's master side (ftmw_farm.h): a queue of task copies, the
 * copies each worker holds, and the policies that turn worker deaths,
 * overruns, stragglers and disagreeing copies into results delivered once.
 *
 * Every decision here is a function of the program's calls, of what the
 * ft_* calls return and of the masters' clock (timed.h): with master
 * replicas each master runs this same code to the same state, and the one
 * that takes over goes on from it. The data path of a task: submit ->
 * queue -> give (ft_isend of TASK) -> the worker -> RESULT taken by
 * ft_recv(FT_ANY_SOURCE) in next_event -> on_result -> ready -> delivered
 * by ft_farm_next. Application thread only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "farm_wire.h"
#include "error.h"
#include "leave.h"
#include "owned.h"
#include "pool.h"
#include "queue.h"
#include "timed.h"

#define MAX_COPIES 3  /* two compared, and a third to vote */
#define MAX_RUNNING 4 /* copies of one task running at once (2 at most) */

typedef struct task task;

/* Bytes shared by the farm and the TASK messages that carry them (a task's
 * input, a checkpoint), sent without a copy (owned.h): each holds a
 * reference, and the last one frees them. Application thread only. */
typedef struct blob {
  int refs;
  size_t len;
  uint8_t data[];
} blob;

/* Out of memory in the master's farm state, where the program cannot be
 * told (a copy made again after a death, a checkpoint, a message): every
 * master must hold the same state, and this one cannot, so it leaves the
 * job (a replica's death; the primary's: a failover; a master alone: the
 * job ends). ft_farm_submit returns FT_ERR_NOMEM instead where it can. */
static void *must(void *p, const char *what) {
  if (p == NULL)
    ftmw_leave(FTMW_LEAVE_NO_MEMORY, 0,
               "the farm: out of memory (%s): this master leaves the job",
               what);
  return p;
}

/* A blob holding a copy of n bytes at b, one reference held; NULL when
 * out of memory. */
static blob *blob_try(const void *b, size_t n) {
  blob *x = malloc(sizeof(*x) + n);
  if (x == NULL)
    return NULL;
  x->refs = 1;
  x->len = n;
  if (n)
    memcpy(x->data, b, n);
  return x;
}

static blob *blob_new(const void *b, size_t n, const char *what) {
  return must(blob_try(b, n), what);
}

static void blob_unref(void *p) {
  blob *x = p;
  if (x && --x->refs == 0)
    free(x);
}

/* One copy of a task to run: queued, or held by a worker (a run). */
typedef struct copy {
  ftmw_qnode node; /* in the farm's queue while queued */
  task *t;
  blob *ckpt; /* the last checkpoint this copy's runs saved, or NULL */
  int backup; /* launched for a straggler */
} copy;

struct task {
  ftmw_qnode all;   /* the farm's tasks not yet delivered */
  ftmw_qnode ready; /* done, waiting to be delivered */
  int64_t id;
  blob *in;
  int wanted;  /* copies whose outputs must agree: 1, or 2 compared */
  int live;    /* copies queued or running */
  int deaths, timeouts; /* attempts its workers' deaths cost it */
  int dispatched;
  int resumed;
  int done;
  int nrunning, running[MAX_RUNNING]; /* workers running a copy of it */
  int nres;
  struct {
    ftmw_msg *msg; /* the RESULT, as received (owned.h): its output
                      (res_data) follows its header */
    int worker;
  } res[MAX_COPIES];
  /* Once done, what ft_farm_next delivers (result_of): */
  int8_t status;   /* FT_Farm_Status */
  int8_t win;      /* the res[] delivered, or -1 */
  int8_t compared; /* res[]'s workers are reported */
  int8_t mismatch;
  int code, by, outvoted;
};

static const uint8_t *res_data(const task *t, int i) {
  return t->res[i].msg->data + FARM_REPLY_HDR;
}

static size_t res_len(const task *t, int i) {
  return t->res[i].msg->len - FARM_REPLY_HDR;
}

typedef struct run { /* a copy a worker holds, in the order sent */
  copy *c;          /* NULL: cancelled (its task is done): ignore it */
  uint32_t no;
  uint64_t start;   /* clock when it reached the head (runs) */
} run;

typedef struct {
  run *runs; /* ring of opts.depth */
  int head, n;
  int lost;      /* failed and not restorable */
  int stopping;  /* fenced for its time limit: its death is a timeout
                    (1), or is nobody's fault: the copy that overran
                    finished before the fence took (2) */
  int pending;   /* restored, not yet joined (timed.h): its copies wait
                    for it, and their clocks start when it has joined */
  int alone;     /* it runs a suspect copy, given alone (see suspect) */
} worker;

/* How often a farm with a worker whose restore is pending looks again. */
#define PENDING_POLL_MS 50

/* The last run number handed out, over every farm of this process, so
 * that a reply a worker sends for a copy of an earlier farm (cancelled,
 * but still running when that farm was destroyed) is known for what it
 * is. Every master creates the same farms in the same order: the numbers
 * agree. */
static uint32_t last_run;

#define NDUR 64 /* task times the median is taken over */
#define BACKUP_FLOOR_MS 10 /* no backup before a copy ran this long */

struct ft_farm {
  ft_farm_options o;
  int W;
  int replicas; /* the job's master replicas (FT_NUM_MASTERS) */
  worker *w;
  ftmw_qnode queue; /* copies to hand out (copy.node), front first */
  ftmw_qnode ready; /* tasks done, not delivered (task.ready) */
  ftmw_qnode tasks; /* tasks not delivered (task.all) */
  task *delivered;     /* freed at the next call */
  uint32_t first_run; /* the first run number of this farm */
  int timed;            /* a policy acts on time */
  int stale;            /* time may have passed since now was read */
  uint64_t now;         /* the masters' clock at this event (farm_clock) */
  uint64_t dur[NDUR];   /* recent task times (ms) */
  int ndur, durpos;
  ftmw_pool task_pool, copy_pool; /* the records of tasks and copies */
  ft_farm_stats s;
};

/* --- small containers ------------------------------------------------------ */

static copy *copy_of(const ftmw_qnode *n) {
  return FTMW_CONTAINER_OF(n, copy, node);
}

static void enqueue(ft_farm *f, copy *c, int front) {
  if (front)
    ftmw_q_insert_head(&f->queue, &c->node);
  else
    ftmw_q_insert_tail(&f->queue, &c->node);
}

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
  f->first_run = last_run + 1;
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

/* --- tasks and copies ----------------------------------------------------- */

/* Whether task id runs twice: a fraction o.duplicate of the ids, spread
 * evenly (the same in every master). */
static int duplicated(const ft_farm *f, int64_t id) {
  double d = f->o.duplicate;
  return d >= 1 || (d > 0 && (int64_t)((double)(id + 1) * d) !=
                                 (int64_t)((double)id * d));
}

/* Copy c (from the pool) of task t. */
static copy *init_copy(copy *c, task *t, int backup) {
  ftmw_q_init(&c->node);
  c->t = t;
  c->backup = backup;
  t->live++;
  return c;
}

static copy *new_copy(ft_farm *f, task *t, int backup) {
  return init_copy(must(ftmw_pool_get(&f->copy_pool), "a task copy"), t,
                   backup);
}

static void free_copy(ft_farm *f, copy *c) {
  f->s.checkpoint_bytes -= c->ckpt ? c->ckpt->len : 0;
  c->t->live--;
  blob_unref(c->ckpt);
  ftmw_pool_put(&f->copy_pool, c);
}

static void free_task(ft_farm *f, task *t) {
  if (t == NULL)
    return;
  blob_unref(t->in);
  for (int i = 0; i < t->nres; i++)
    ftmw_msg_free(t->res[i].msg);
  ftmw_pool_put(&f->task_pool, t);
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
   * state, and one that cannot leaves (must). */
  int wanted = duplicated(f, f->s.submitted) ? 2 : 1;
  task *t = ftmw_pool_get(&f->task_pool);
  blob *b = t ? blob_try(in, n) : NULL; /* its one copy here */
  copy *c[2] = {NULL, NULL};
  int got = b != NULL;
  for (int i = 0; got && i < wanted; i++)
    got = (c[i] = ftmw_pool_get(&f->copy_pool)) != NULL;
  if (!got) {
    for (int i = 0; i < 2; i++)
      if (c[i])
        ftmw_pool_put(&f->copy_pool, c[i]);
    blob_unref(b);
    if (t)
      ftmw_pool_put(&f->task_pool, t);
    if (f->replicas > 0)
      must(NULL, "a task");
    return ftmw_fail(FT_ERR_NOMEM), -1;
  }
  t->in = b;
  t->id = f->s.submitted;
  t->wanted = wanted;
  for (int i = 0; i < t->wanted; i++)
    enqueue(f, init_copy(c[i], t, 0), 0);
  if (t->wanted == 2)
    f->s.duplicated++;
  ftmw_q_insert_tail(&f->tasks, &t->all);
  f->s.submitted++;
  ftmw_ok();
  return t->id;
}

/* Task t is done: it goes to the ready list; every other copy of it is
 * dropped from the queue or cancelled on its worker. */
static void finish(ft_farm *f, task *t, int status, int by, int win,
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
      free_copy(f, c);
    }
  }
  for (int r = 1; t->live > 0 && r <= f->W; r++) {
    worker *w = &f->w[r];
    for (int i = 0; i < w->n; i++) {
      run *u = &w->runs[(w->head + i) % f->o.depth];
      if (u->c && u->c->t == t) {
        free_copy(f, u->c);
        u->c = NULL;
      }
    }
  }
}

/* --- handing out ------------------------------------------------------------ */

static int usable_workers(const ft_farm *f) {
  int n = 0;
  for (int r = 1; r <= f->W; r++)
    n += !f->w[r].lost;
  return n;
}

/* Whether worker r gave an output of t or runs a copy of it now. */
static int holds(const task *t, int r) {
  for (int i = 0; i < t->nres; i++)
    if (t->res[i].worker == r)
      return 1;
  for (int i = 0; i < t->nrunning; i++)
    if (t->running[i] == r)
      return 1;
  return 0;
}

static void unrun(task *t, int r) {
  for (int i = 0; i < t->nrunning; i++)
    if (t->running[i] == r) {
      t->running[i] = t->running[--t->nrunning];
      return;
    }
}

/* Whether one more charge would fail t. A worker's death is charged to
 * every copy it held (drop_runs): which one it was running cannot be told
 * while the results before it may still be held back for a batch (an
 * ft_isend's, lazy). So a suspect task's copy goes only to a worker that
 * holds no other copy, and that worker gets no other until it answers;
 * a death charges a suspect task only when it came from such a worker
 * (another copy of it, a backup, may be held with others): the charge
 * that fails a task always comes from a worker that ran it alone. */
static int suspect(const ft_farm *f, const task *t) {
  return t->deaths + t->timeouts + 1 >= f->o.max_attempts;
}

/* Whether worker r may take a copy of t. A backup, a compared copy and
 * a vote go to a worker that has nothing of t: only outputs of different
 * workers are compared (but for the two compared copies when one worker
 * is left: then they both run on it). A suspect copy goes to a worker that
 * holds none. */
static int eligible(const ft_farm *f, const task *t, int r) {
  if (suspect(f, t) && f->w[r].n > 0)
    return 0;
  if (!holds(t, r))
    return 1;
  return t->wanted == 2 && t->nres < 2 && usable_workers(f) < 2;
}

/* Whether some usable worker can cast t's vote. */
static int vote_possible(const ft_farm *f, const task *t) {
  for (int r = 1; r <= f->W; r++)
    if (!f->w[r].lost && !holds(t, r))
      return 1;
  return 0;
}

static void finish_mismatch(ft_farm *f, task *t);

/* After workers were lost: a vote no worker left can cast is a mismatch. */
static void drop_impossible_votes(ft_farm *f) {
  for (ftmw_qnode *n = f->queue.next; n != &f->queue;) {
    copy *c = copy_of(n);
    task *t = c->t;
    if (t->nres == 2 && !vote_possible(f, t)) {
      ftmw_q_remove(&c->node);
      free_copy(f, c);
      finish_mismatch(f, t);
      n = f->queue.next; /* finish may have taken more */
    } else {
      n = n->next;
    }
  }
}

static void worker_died(ft_farm *f, int r);

/* The masters' clock at this event, for the policies that act on time (0
 * without them). It is read when first needed after time may have passed
 * (f->stale: the application ran, a receive waited, a restore spawned),
 * so at most once an event and not at all on an event no policy times:
 * a clock read costs 0.06-0.12 us here, and a result delivered at depth
 * 16 without a time limit needs one (the duration of its task).
 * Where f->stale is set depends only on call outcomes, so master
 * replicas read the decided clock at the same calls. */
static uint64_t farm_clock(ft_farm *f) {
  if (f->timed && f->stale) {
    f->now = ftmw_decided_ms();
    f->stale = 0;
  }
  return f->now;
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
                        blob_unref, FTMW_FLAG_LAZY)) {
    if (ft_error() != FT_ERR_PEER_FAILED) /* cannot happen: a bug */
      fprintf(stderr, "ftmw farm: cannot send task %lld to worker %d: %s\n",
              (long long)t->id, r, ft_strerror(ft_error()));
    /* It never reached r: back to the queue, not charged to the task. */
    enqueue(f, c, 1);
    worker_died(f, r);
    return -1;
  }
  run *u = &w->runs[(w->head + w->n) % f->o.depth];
  *u = (run){.c = c, .no = no, .start = farm_clock(f)};
  w->n++;
  w->alone = suspect(f, t);
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
      suspect(f, copy_of(f->queue.next)->t))
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

static int fill(ft_farm *f, int r) { return fill_to(f, r, f->o.depth); }

/* Fills every worker, one copy each per round, so that a few long tasks
 * spread over the workers instead of queueing at the first ones. */
static void fill_all(ft_farm *f) {
  int low = f->o.depth; /* from the emptiest worker's level on */
  for (int r = 1; r <= f->W; r++)
    if (!f->w[r].lost && !f->w[r].stopping && f->w[r].n < low)
      low = f->w[r].n;
  for (int d = low + 1; d <= f->o.depth && !ftmw_q_empty(&f->queue); d++)
    for (int r = 1; r <= f->W && !ftmw_q_empty(&f->queue); r++)
      fill_to(f, r, d);
}

/* --- failures --------------------------------------------------------------- */

/* Worker r will not answer (it failed, or finished): its copies go back
 * to the front of the queue, in order; with charge, they are charged an
 * attempt. A worker stopped for its time limit is charged on the one it
 * was running, at the head (its results before it were on their way for
 * longer than a batch's wait). A dead one on every copy it held: the one
 * that killed it may be behind the head, whose result it had not written
 * yet (held for a batch), and the suspect rule keeps the copies charged
 * for nothing from a verdict. */
static void drop_runs(ft_farm *f, int r, int charge) {
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
    unrun(t, r);
    if (charge && stopped && i == 0)
      t->timeouts++;
    else if (charge && !stopped && (w->alone || !suspect(f, t)))
      t->deaths++; /* held with others, a suspect is not charged more */
    if (t->deaths + t->timeouts >= f->o.max_attempts && !t->done) {
      free_copy(f, c);
      finish(f, t, stopped && i == 0 ? FT_FARM_TIMED_OUT : FT_FARM_FAILED,
             0, -1, 0);
      continue;
    }
    if (t->done) {
      free_copy(f, c);
      continue;
    }
    f->s.redispatched++;
    enqueue(f, c, 1);
  }
  w->head = w->n = w->alone = 0;
  w->stopping = 0;
}

/* Worker r failed (a call just reported it): its copies go back, then it
 * is restored, or lost. */
static void worker_died(ft_farm *f, int r) {
  worker *w = &f->w[r];
  f->s.worker_failures++;
  drop_runs(f, r, 1);
  int restored = f->o.restore && ft_restore(r);
  f->stale = 1; /* a spawn blocks: copies handed out next start then */
  if (restored) {
    f->s.restores++;
    /* One that does not block (spawn mode without replicas): its copies'
     * clocks start once it has joined (act_on_time). */
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
static void fail_all(ft_farm *f) {
  while (!ftmw_q_empty(&f->queue)) {
    copy *c = copy_of(ftmw_q_head(&f->queue));
    task *t = c->t;
    ftmw_q_remove(&c->node);
    free_copy(f, c);
    if (!t->done)
      finish(f, t, FT_FARM_NO_WORKERS, 0, -1, 0);
  }
}

/* --- results ---------------------------------------------------------------- */

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
      finish(f, t, FT_FARM_OK, t->res[0].worker, 0, 0);
    } else { /* a third copy, on a third worker, votes */
      f->s.mismatches++;
      if (!vote_possible(f, t)) {
        finish_mismatch(f, t);
        return;
      }
      enqueue(f, new_copy(f, t, 0), 1);
      fill_all(f);
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
      finish_mismatch(f, t);
      return;
    }
    finish(f, t, FT_FARM_OK, t->res[win].worker, win, 0);
    t->outvoted = t->res[lose].worker;
  }
  t->mismatch = t->nres == 3;
  t->compared = 1;
}

/* A compared task whose outputs no majority of workers agrees on. */
static void finish_mismatch(ft_farm *f, task *t) {
  finish(f, t, FT_FARM_MISMATCH, 0, -1, 0);
  t->mismatch = 1;
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
static run *head_run(ft_farm *f, int r, const uint8_t *b, size_t n) {
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
    w->runs[w->head].start = farm_clock(f);
}

/* A RESULT m from worker r for run u: the farm keeps m if it holds an
 * output it needs (*m then NULL). */
static void on_result(ft_farm *f, int r, run *u, ftmw_msg **m) {
  copy *c = u->c;
  uint64_t start = u->start;
  if (f->w[r].stopping)
    f->w[r].stopping = 2;
  pop_run(f, &f->w[r]);
  if (c == NULL)
    return; /* a cancelled copy: its task is done */
  task *t = c->t;
  int backup = c->backup;
  unrun(t, r);
  free_copy(f, c);
  if (f->timed)
    note_duration(f, farm_clock(f) - start);
  int code = (int32_t)ftmw_get32((*m)->data + 12);
  if (code != 0) {
    finish(f, t, FT_FARM_TASK_ERROR, r, -1, code);
    return;
  }
  t->res[t->nres].msg = *m; /* kept as received */
  *m = NULL;
  t->res[t->nres].worker = r;
  t->nres++;
  if (t->wanted == 1) {
    if (backup)
      f->s.backup_wins++;
    finish(f, t, FT_FARM_OK, r, t->nres - 1, 0);
  } else {
    compare_outputs(f, t);
  }
}

static void on_checkpoint(ft_farm *f, run *u, const uint8_t *b, size_t n) {
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
  blob_unref(c->ckpt);
  c->ckpt = blob_new(b + FARM_REPLY_HDR, len, "a checkpoint");
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
static int64_t act_on_time(ft_farm *f, int fire) {
  int64_t next = -1;
  int idle = 0;
  for (int r = 1; r <= f->W; r++) {
    worker *w = &f->w[r];
    if (w->lost)
      continue;
    if (w->pending && !(w->pending = ftmw_worker_pending(r)) && w->n)
      w->runs[w->head].start = farm_clock(f); /* joined: it starts now */
    if (w->pending) {
      next = next < 0 || next > PENDING_POLL_MS ? PENDING_POLL_MS : next;
      continue;
    }
    idle |= w->n == 0;
    run *u = w->n ? &w->runs[w->head] : NULL;
    if (u == NULL || u->c == NULL || w->stopping || f->o.time_limit_ms == 0)
      continue;
    uint64_t due = u->start + (uint64_t)f->o.time_limit_ms;
    if (farm_clock(f) >= due && !fire) {
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
    if (farm_clock(f) < due) {
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
      enqueue(f, new_copy(f, u->c->t, 1), 0);
      f->s.backups++;
      fill_all(f);
      idle = 0;
      for (int v = 1; v <= f->W; v++)
        idle |= !f->w[v].lost && f->w[v].n == 0;
    }
  }
  return next;
}

/* --- the event loop ---------------------------------------------------------- */

static int take(ft_farm *f, int64_t ms);

/* Waits for one event (a reply, a failure, a deadline) and handles it.
 * A deadline acts only when no reply is waiting: a task's time ends when
 * its result reaches the master, not when the farm gets to it (after a
 * restore that blocked for a spawn, say). Returns 0, or -1 on an error
 * the farm cannot handle (ft_error()). */
static int next_event(ft_farm *f) {
  if (usable_workers(f) == 0) {
    fail_all(f);
    return 0;
  }
  int64_t ms = f->timed ? act_on_time(f, 0) : -1;
  if (ms == 0) { /* something is due: is a reply waiting? */
    int n = take(f, 0);
    if (n != 0)
      return n < 0 ? -1 : 0;
    act_on_time(f, 1);
    if (!ftmw_q_empty(&f->ready))
      return 0;
    ms = act_on_time(f, 0);
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
  run *u = head_run(f, r, b, n);
  if (u == NULL || (tag != FARM_TAG_RESULT && tag != FARM_TAG_CKPT)) {
    fprintf(stderr, "ftmw farm: worker %d sent a message that answers no "
                    "task it holds (tag %d, %zu bytes): stopping it\n",
            r, tag, n);
    ftmw_fence_worker(r, "stopped by the master: it broke the farm's "
                         "protocol");
    return;
  }
  if (tag == FARM_TAG_CKPT) {
    on_checkpoint(f, u, b, n);
    return;
  }
  on_result(f, r, u, m);
  fill(f, r);
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
    must(NULL, "a message");
  if (!got && err == FT_ERR_PEER_FAILED && st.source >= 1 &&
      st.source <= f->W) {
    worker_died(f, st.source);
    fill_all(f);
    return 1;
  }
  if (!got) {
    if (err == FT_ERR_PEER_FINALIZED) { /* nobody will answer any more */
      for (int r = 1; r <= f->W; r++) {
        drop_runs(f, r, 0);
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
    free_task(f, f->delivered);
    f->delivered = NULL;
  }
  f->stale = 1; /* the application ran */
  fill_all(f);
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
    free_copy(f, c);
  }
  for (int r = 1; f->w && r <= f->W; r++) {
    worker *w = &f->w[r];
    for (int i = 0; i < w->n; i++) {
      run *u = &w->runs[(w->head + i) % f->o.depth];
      if (u->c)
        free_copy(f, u->c);
    }
    free(w->runs);
  }
  while (!ftmw_q_empty(&f->tasks)) {
    task *t = FTMW_CONTAINER_OF(ftmw_q_head(&f->tasks), task, all);
    ftmw_q_remove(&t->all);
    free_task(f, t);
  }
  free_task(f, f->delivered);
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
