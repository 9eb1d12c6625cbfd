/* The task farm's master side (ftmw_farm.h), in four files, each calling
 * only those below it:
 *   farm.c          the API and the event loop: a reply, a failure or a
 *                   deadline at a time;
 *   farm_policy.c   what a reply or the clock decides: outputs compared
 *                   and voted, checkpoints kept, time limits, backups;
 *   farm_dispatch.c handing copies out to workers, and taking them back
 *                   when a worker dies or is lost;
 *   farm_task.c     the records: tasks, their copies and the bytes they
 *                   share, the queue, a task finished.
 *
 * Every decision is a function of the program's calls, of what the ft_*
 * calls return and of the masters' clock (timed.h): with master replicas
 * each master runs this same code to the same state, and the one that
 * takes over goes on from it. Application thread only. */
#ifndef FTMW_FARM_IMPL_H
#define FTMW_FARM_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "farm_wire.h"
#include "ftmw_farm.h"
#include "msg.h"
#include "pool.h"
#include "queue.h"

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

static inline const uint8_t *res_data(const task *t, int i) {
  return t->res[i].msg->data + FARM_REPLY_HDR;
}

static inline size_t res_len(const task *t, int i) {
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
  int alone;     /* it runs a suspect copy, given alone (ftmw_farm_suspect) */
} worker;

/* How often a farm with a worker whose restore is pending looks again. */
#define PENDING_POLL_MS 50

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
  uint64_t now;         /* the masters' clock at this event (ftmw_farm_clock) */
  uint64_t dur[NDUR];   /* recent task times (ms) */
  int ndur, durpos;
  ftmw_pool task_pool, copy_pool; /* the records of tasks and copies */
  ft_farm_stats s;
};

static inline copy *copy_of(const ftmw_qnode *n) {
  return FTMW_CONTAINER_OF(n, copy, node);
}

/* --- farm_task.c ----------------------------------------------------------- */

/* p; NULL is out of memory where every master must hold the same state
 * (a copy made again after a death, a checkpoint, a message): this
 * master then leaves the job. */
void *ftmw_farm_must(void *p, const char *what);
/* A blob holding a copy of n bytes at b, one reference held: NULL when
 * out of memory (blob_try), or this master leaves (blob_new). */
blob *ftmw_farm_blob_try(const void *b, size_t n);
blob *ftmw_farm_blob_new(const void *b, size_t n, const char *what);
void ftmw_farm_blob_unref(void *p);
/* Queues copy c, at the front or at the back. */
void ftmw_farm_enqueue(ft_farm *f, copy *c, int front);
/* Copy c (from the pool, or new: a backup launched for a straggler) of
 * task t. */
copy *ftmw_farm_init_copy(copy *c, task *t, int backup);
copy *ftmw_farm_new_copy(ft_farm *f, task *t, int backup);
void ftmw_farm_free_copy(ft_farm *f, copy *c);
void ftmw_farm_free_task(ft_farm *f, task *t);
/* Task t is done (FT_Farm_Status status, by worker by, its output
 * res[win] or -1, its error code): it goes to the ready list, and every
 * other copy of it is dropped or cancelled. */
void ftmw_farm_finish(ft_farm *f, task *t, int status, int by, int win,
                      int code);
/* A compared task whose outputs no majority of workers agrees on. */
void ftmw_farm_finish_mismatch(ft_farm *f, task *t);
int ftmw_farm_usable_workers(const ft_farm *f);
/* Whether worker r gave an output of t or runs a copy of it now. */
int ftmw_farm_holds(const task *t, int r);
/* Worker r no longer runs a copy of t. */
void ftmw_farm_unrun(task *t, int r);
/* Whether one more charge would fail t (see farm_task.c). */
int ftmw_farm_suspect(const ft_farm *f, const task *t);
/* Whether some usable worker can cast t's vote. */
int ftmw_farm_vote_possible(const ft_farm *f, const task *t);
/* The masters' clock at this event (0 without a policy on time). */
uint64_t ftmw_farm_clock(ft_farm *f);

/* --- farm_dispatch.c ------------------------------------------------------- */

/* The number the next run handed out gets (every farm of the process). */
uint32_t ftmw_farm_next_run(void);
/* Fills worker r up to the depth from the queue; every worker. Returns
 * -1 if r failed meanwhile. */
int ftmw_farm_fill(ft_farm *f, int r);
void ftmw_farm_fill_all(ft_farm *f);
/* Worker r will not answer: its copies go back to the queue, charged an
 * attempt with charge. */
void ftmw_farm_drop_runs(ft_farm *f, int r, int charge);
/* Worker r failed: its copies go back, then it is restored, or lost. */
void ftmw_farm_worker_died(ft_farm *f, int r);
/* Every worker is lost: the tasks left cannot be done. */
void ftmw_farm_fail_all(ft_farm *f);

/* --- farm_policy.c --------------------------------------------------------- */

/* The run at the head of worker r's copies, which a reply from r (b, n
 * bytes) answers; NULL when the reply names another. */
run *ftmw_farm_head_run(ft_farm *f, int r, const uint8_t *b, size_t n);
/* A CKPT for run u: kept with its copy, which a re-sent copy resumes. */
void ftmw_farm_on_checkpoint(ft_farm *f, run *u, const uint8_t *b, size_t n);
/* A RESULT m from worker r for run u: the farm keeps m if it holds an
 * output it needs (*m then NULL). */
void ftmw_farm_on_result(ft_farm *f, int r, run *u, ftmw_msg **m);
/* With fire, stops workers past the time limit and launches backups for
 * stragglers; returns the milliseconds until the next such event (0: one
 * is due, without fire), or -1 (none). */
int64_t ftmw_farm_act_on_time(ft_farm *f, int fire);

#endif
