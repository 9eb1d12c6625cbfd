/*
 * FTMW task farm: a layer over the ft_* calls that recovers by itself.
 *
 * The master submits tasks (bytes in) and takes their results (bytes out)
 * by task id, in completion order; every worker runs one function in a
 * loop. The farm hands tasks to idle workers, restores a worker that dies
 * (a new process, or a spare), hands its tasks out again, and delivers
 * each task's result exactly once. With master replicas (FT_NUM_MASTERS)
 * every master runs the same farm: its decisions depend only on what the
 * ft_* calls return and on the primary's clock, which the replicas follow,
 * so the master that takes over has the same tasks, results and
 * checkpoints.
 *
 * Policies (ft_farm_options, each with a default):
 *  - retries: a task whose worker dies max_attempts times is reported
 *    failed (FT_FARM_FAILED) with its id; the rest of the farm goes on;
 *  - a time limit per task: a task still running after it has its worker
 *    stopped (declared failed, fenced, restored) and counts one attempt;
 *  - backup tasks: when no task is queued and a worker is idle, a task
 *    running longer than backup_factor x the median task time gets a copy
 *    on that worker; the first result wins, the other is ignored;
 *  - duplicate-and-compare: a fraction of the tasks run on two different
 *    workers and their results are compared (bytes, or a comparator); on a
 *    mismatch a third copy runs and the majority wins; the mismatch is
 *    reported with the task and the workers involved;
 *  - checkpoints: a worker may save its task's state (ft_farm_checkpoint);
 *    every master keeps the last one per running task, and a task handed
 *    out again after its worker died starts from it (ft_farm_resumed).
 *
 * docs/farm.md has the rules and a full example. A program that uses the
 * farm makes no other ft_* data call between ft_farm_create and
 * ft_farm_destroy (master) or inside ft_farm_work (worker): the farm owns
 * the tags from FT_FARM_TAG_BASE up.
 */
#ifndef FTMW_FARM_H
#define FTMW_FARM_H

#include <stddef.h>
#include <stdint.h>

#include "ftmw.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FT_FARM_TAG_BASE 0x7f000000

/* A result's outcome. */
typedef enum {
  FT_FARM_OK = 0,     /* data holds the task's output */
  FT_FARM_FAILED,     /* its workers died max_attempts times (poisoned) */
  FT_FARM_TIMED_OUT,  /* it ran past time_limit_ms max_attempts times */
  FT_FARM_TASK_ERROR, /* the worker function returned code != 0 */
  FT_FARM_MISMATCH,   /* its copies disagreed and no majority formed */
  FT_FARM_NO_WORKERS  /* every worker is lost (no host or spare left) */
} FT_Farm_Status;

/* Compares two outputs of one task: 0 when they agree. */
typedef int (*ft_farm_compare_fn)(const void *a, size_t alen, const void *b,
                                  size_t blen, void *ctx);

typedef struct {
  int depth;            /* tasks in flight per worker (default 2: the
                           next one waits at the worker) */
  int max_attempts;     /* worker deaths a task may cause (default 3) */
  int64_t time_limit_ms;   /* 0 (default): no limit */
  double backup_factor;    /* k; 0: no backups (default 3) */
  int backup_min_samples;  /* finished tasks before the median counts
                              (default 8) */
  double duplicate;     /* fraction of tasks run twice, 0..1 (default 0) */
  ft_farm_compare_fn compare; /* NULL: byte for byte */
  void *compare_ctx;
  int restore;          /* restore dead workers (default 1) */
} ft_farm_options;

/* One delivered result. data stays valid until the next ft_farm_next
 * (or until the callback returns). */
typedef struct {
  int64_t id;         /* as ft_farm_submit returned it */
  int status;         /* FT_Farm_Status */
  int code;           /* FT_FARM_TASK_ERROR: the function's return value */
  const void *data;   /* FT_FARM_OK: the output */
  size_t len;
  int worker;         /* the worker whose output this is (0 if none) */
  int attempts;       /* copies of it handed out, backups included */
  int resumed;        /* it started again from a checkpoint */
  int mismatch;       /* its copies disagreed (see workers, outvoted) */
  int workers[3];     /* the workers whose outputs were compared */
  int outvoted;       /* the worker whose output lost the vote, or 0 */
} ft_farm_result;

/* Counters of a farm (ft_farm_stats). */
typedef struct {
  int64_t submitted, delivered;
  int64_t dispatched;     /* copies handed out */
  int64_t redispatched;   /* copies handed out again after a death */
  int64_t worker_failures, restores, lost_workers;
  int64_t timeouts;
  int64_t backups, backup_wins;
  int64_t duplicated, mismatches, votes;
  int64_t checkpoints, resumed;
  size_t checkpoint_bytes; /* held now */
  size_t checkpoint_peak;  /* the most held at once */
} ft_farm_stats;

typedef struct ft_farm ft_farm;

/* The defaults above. */
FTMW_EXPORT void ft_farm_options_init(ft_farm_options *o);

/* Master only, after ft_init. o NULL: the defaults. Returns the farm, or
 * NULL with ft_error() set (FT_ERR_ROLE, FT_ERR_NOMEM, FT_ERR_OPTION for
 * an option out of range). */
FTMW_EXPORT ft_farm *ft_farm_create(const ft_farm_options *o);

/* Queues a task (its n bytes are copied). Returns its id, 0, 1, 2... in
 * submission order, or -1 with ft_error() set (FT_ERR_NULL_ARG,
 * FT_ERR_BUFFER, FT_ERR_TOO_BIG past 2 GiB, FT_ERR_NOMEM out of memory
 * for the task: nothing was queued). With master replicas, out of memory
 * here makes a master leave the job (exit status 70) instead: every
 * master must hold the same state. */
FTMW_EXPORT int64_t ft_farm_submit(ft_farm *f, const void *in, size_t n);

/* Delivers the next result in completion order, waiting for one. Returns
 * 1 with *r filled, 0 when every submitted task has been delivered, -1 on
 * misuse (ft_error()), or with FT_ERR_TERMINATED once the job has had
 * SIGTERM (a time limit) and no result is ready: deliver what you have
 * and call ft_farm_destroy, then ft_finalize. A task that cannot be done
 * is delivered too, with its status. */
FTMW_EXPORT int ft_farm_next(ft_farm *f, ft_farm_result *r);

/* The same as a loop: calls fn for every result until none is left (fn
 * may submit more tasks). Returns the number delivered, or -1 on misuse
 * or when fn returns non-zero (the farm stays usable). */
typedef int (*ft_farm_result_fn)(const ft_farm_result *r, void *ctx);
FTMW_EXPORT int64_t ft_farm_run(ft_farm *f, ft_farm_result_fn fn, void *ctx);

FTMW_EXPORT void ft_farm_stats_get(const ft_farm *f, ft_farm_stats *s);

/* Tells every worker to leave ft_farm_work and frees the farm. Returns 1,
 * or 0 when f is NULL (FT_ERR_NULL_ARG). */
FTMW_EXPORT int ft_farm_destroy(ft_farm *f);

/* --- worker ---------------------------------------------------------------- */

typedef struct ft_farm_task ft_farm_task;

/* A worker's function: computes task t (ft_farm_input), sets its output
 * (ft_farm_reply; none: an empty output) and returns 0, or returns
 * another code, which the master gets as FT_FARM_TASK_ERROR (not
 * retried). */
typedef int (*ft_farm_fn)(ft_farm_task *t, void *ctx);

/* Runs fn on each task the master sends, until the master destroys the
 * farm (returns 1) or every master is gone (returns 0). A worker that
 * gets a message that is not the farm's, or runs out of memory, says so
 * on stderr and leaves the job (exit status 70), as a crashed worker:
 * the master restores it and hands its tasks out again. Worker only. */
FTMW_EXPORT int ft_farm_work(ft_farm_fn fn, void *ctx);

FTMW_EXPORT int64_t ft_farm_task_id(const ft_farm_task *t);

/* Which copy of its task t is: 1 for the first handed out, then 2, 3...
 * (copies after a death, backups and compared copies all count). */
FTMW_EXPORT int ft_farm_attempt(const ft_farm_task *t);
FTMW_EXPORT const void *ft_farm_input(const ft_farm_task *t, size_t *n);

/* The last checkpoint of this task, saved by a worker that died, or NULL
 * (*n 0) when the task starts from the beginning. */
FTMW_EXPORT const void *ft_farm_resumed(const ft_farm_task *t, size_t *n);

/* Sets the task's output (copied). Returns 1, or 0 (ft_error()). */
FTMW_EXPORT int ft_farm_reply(ft_farm_task *t, const void *out, size_t n);

/* Saves the task's state in every master (the bytes replace the last
 * checkpoint of this task). Blocks until the primary has them. Returns
 * 1, or 0 when the master is gone (ft_error()). */
FTMW_EXPORT int ft_farm_checkpoint(ft_farm_task *t, const void *state,
                                   size_t n);

#ifdef __cplusplus
}
#endif
#endif /* FTMW_FARM_H */
