/* The public ft_* calls but the sends (send.c, isend.c) and the receives
 * (recv.c): start and end, failure queries and restore. Application
 * thread only. */
#include "calls.h"
#include "launch.h"
#include "match.h"
#include "replica.h"
#include "isend.h"
#include "term.h"
#include "transport.h"
#include "leave.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- init and finalize ---------------------------------------------------- */

int ft_init(int *argc, char ***argv, int *rank, int *workers) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  if (cx->st.initialized) {
    ftmw_fail(FT_ERR_ALREADY_INITIALIZED);
    return -1;
  }
  if (rank == NULL || workers == NULL) {
    ftmw_fail(FT_ERR_NULL_ARG);
    return -1;
  }
  /* A failure leaves no rank to run as: -1, and later calls stop. */
  *rank = -1;
  *workers = 0;
  uv_mutex_init(&cx->st.lock);
  ftmw_q_init(&cx->st.submit);
  ftmw_q_init(&cx->st.arrivals);
  ftmw_q_init(&cx->to_masters);
  int rc = ftmw_launch_init(cx, argc, argv);
  if (rc < 0) {
    ftmw_fail(FT_ERR_ENV);
    ftmw_init_failed();
    return -1;
  }
  if (ftmw_app_init(cx, cx->job.W) != 0) {
    ftmw_log("out of memory for %d workers' state", cx->job.W);
    ftmw_fail(FT_ERR_NOMEM);
    ftmw_init_failed();
    return -1;
  }
  cx->st.initialized = 1;
  *rank = ftmw_is_master(cx) ? 0 : cx->job.id;
  *workers = cx->job.W;
  ftmw_ok();
  return rc;
}

/* Sends a frame without ACK to every live peer in v[from..to] and waits
 * until each is written (st.lock held). */
static void broadcast_locked(ftmw_ctx *cx, ftmw_peer *v, int from, int to,
                             int type, unsigned flags) {
  int n = to - from + 1;
  if (n <= 0)
    return;
  ftmw_op *ops = calloc((size_t)n, sizeof(*ops));
  if (ops == NULL)
    return; /* peers see our close instead: they treat it as a failure */
  for (int i = 0; i < n; i++) {
    ftmw_peer *p = &v[from + i];
    if (!ftmw_peer_is_up(p))
      continue;
    ftmw_op_frame(cx, &ops[i], p, type, 0, flags, NULL, 0);
    ftmw_transport_submit(cx, &ops[i], 1);
  }
  for (int i = 0; i < n; i++)
    if (ops[i].kind)
      ftmw_op_wait_locked(cx, &ops[i]);
  free(ops);
}

/* No live peer in v[from..to] is still without its FIN (st.lock held;
 * a master's own slot in st.masters is never alive). */
static int finished_locked(const ftmw_peer *v, int from, int to) {
  for (int i = from; i <= to; i++)
    if (ftmw_peer_is_up(&v[i]) && !v[i].fin)
      return 0;
  return 1;
}

static void free_all(ftmw_ctx *cx) {
  uv_mutex_lock(&cx->st.lock);
  for (int r = 0; r <= cx->job.W; r++)
    ftmw_match_drop(&cx->st.workers[r]);
  ftmw_rep_free(cx);
  for (int k = 0; k <= cx->job.M; k++)
    ftmw_match_drop(&cx->st.masters[k]);
  uv_mutex_unlock(&cx->st.lock);
  ftmw_isend_free_all(cx);
  ftmw_app_free(cx);
  free(cx->st.workers);
  free(cx->st.masters);
  free(cx->st.spares);
  ftmw_msg_release_cache();
  ftmw_hosts_free(&cx->job.hosts);
  free(cx->placed_host);
  cx->placed_host = NULL;
  cx->st.workers = cx->st.masters = cx->st.spares = NULL;
}

int ft_finalize(void) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  if (!cx->st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED);
  ftmw_check_all_heeded(cx);
  /* What ft_is_primary guarded is done. */
  if (cx->job.M > 0 && ftmw_is_master(cx)) {
    uv_mutex_lock(&cx->st.lock);
    ftmw_rep_serve(cx);
    uv_mutex_unlock(&cx->st.lock);
  }
  /* What the program printed is out before the shutdown, which may wait
   * for seconds and end in a fence's _exit (a pipe's stdout is buffered
   * until exit): a process that dies from here on has printed. */
  fflush(stdout);
  fflush(stderr);
  ftmw_fault_hit(FTMW_FAULT_FINALIZE);
  ftmw_trace("finalize", NULL);
  int clean = 0;
  uv_mutex_lock(&cx->st.lock);
  cx->st.finalizing = 1;
  if (ftmw_is_master(cx)) {
    /* A worker restored without waiting for it joins, or fails (its
     * deadline), before the end: it then ends as the others do, instead
     * of being left to mpirun in the middle of its start. */
    for (int r = 1; r <= cx->job.W; r++)
      while (ftmw_peer_restoring(&cx->st.workers[r]))
        ftmw_wait_locked(cx, -1);
    /* FIN: no more data from us. A replica also tells every master, so
     * that whichever is primary at the end knows, and waits for the
     * primary's BYE, unless it becomes primary meanwhile. */
    broadcast_locked(cx, cx->st.workers, 1, cx->job.W, FTMW_FRAME_FIN,
                     ftmw_term_requested() ? FTMW_FLAG_STOPPING : 0);
    broadcast_locked(cx, cx->st.spares, 0, cx->job.S - 1, FTMW_FRAME_FIN, 0);
    if (cx->job.id != cx->st.primary)
      broadcast_locked(cx, cx->st.masters, 0, cx->job.M, FTMW_FRAME_FIN, 0);
    while (cx->job.id != cx->st.primary && !cx->st.masters[cx->st.primary].bye)
      ftmw_wait_locked(cx, -1);
    ftmw_rep_serve(cx); /* it may have become primary meanwhile */
    if (cx->job.id != cx->st.primary) {
      clean = cx->st.masters[cx->st.primary].bye_clean;
    } else {
      /* The primary waits for each live worker's and replica's FIN (one
       * that dies meanwhile is skipped); then BYE tells them whether every
       * process is known to reach MPI_Finalize. */
      while (!finished_locked(cx->st.workers, 1, cx->job.W) ||
             !finished_locked(cx->st.masters, 0, cx->job.M))
        ftmw_wait_locked(cx, -1);
      clean = !cx->st.failure_seen;
      cx->st.bye_sent = 1;
      unsigned flags = clean ? FTMW_FLAG_CLEAN : 0;
      broadcast_locked(cx, cx->st.workers, 1, cx->job.W, FTMW_FRAME_BYE, flags);
      broadcast_locked(cx, cx->st.spares, 0, cx->job.S - 1, FTMW_FRAME_BYE,
                       flags);
      broadcast_locked(cx, cx->st.masters, 0, cx->job.M, FTMW_FRAME_BYE, flags);
    }
  } else {
    /* A worker or spare: FIN to every master, then the BYE of whichever
     * is primary (or every master is gone). */
    broadcast_locked(cx, cx->st.masters, 0, cx->job.M, FTMW_FRAME_FIN, 0);
    ftmw_peer *m = &cx->st.masters[cx->st.primary];
    while (ftmw_peer_is_up(m) && !m->bye) {
      ftmw_wait_locked(cx, -1);
      m = &cx->st.masters[cx->st.primary];
    }
    clean = m->bye && m->bye_clean;
  }
  uv_mutex_unlock(&cx->st.lock);
  ftmw_launch_restores_stop();
  ftmw_transport_stop(cx);
  free_all(cx);
  cx->st.initialized = 0;
  ftmw_launch_finalize(cx, clean); /* traces how MPI ended */
  ftmw_term_end();
  ftmw_trace_close();
  ftmw_ok();
  return 1;
}

/* --- failure queries and restore ---------------------------------------- */

/* ft_test's choice: whether p has failed (ftmw_rep_choose_fn). */
static int test_choose(ftmw_ctx *cx, void *p, ftmw_rep_choice *c) {
  (void)cx;
  c->value = (uint64_t)ftmw_peer_is_failed(p);
  return 0;
}

int ft_test(int rank) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  if (!cx->st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED);
  ftmw_peer *p = ftmw_peer_of(cx, rank);
  if (p == NULL)
    return 0;
  uv_mutex_lock(&cx->st.lock);
  ftmw_hold_if_aborting_locked(cx);
  if (!ftmw_is_master(cx))
    p = ftmw_peer_of(cx, 0); /* the primary, now that the lock is held */
  ftmw_rep_choice c;
  ftmw_rep_decided(cx, FTMW_DECIDE_TEST, rank, test_choose, p, &c);
  int failed = c.value != 0;
  if (failed && c.followed) /* seen here too before the call returns */
    ftmw_await_gone_locked(cx, p);
  if (failed) {
    p->unreported = 0;
    ftmw_heeded(cx, p);
  }
  uv_mutex_unlock(&cx->st.lock);
  ftmw_ok();
  return failed;
}

/* ft_testany's choice: the first worker failed, or 0. */
static int testany_choose(ftmw_ctx *cx, void *arg, ftmw_rep_choice *c) {
  (void)arg;
  for (int r = 1; r <= cx->job.W && !c->rank; r++)
    if (ftmw_peer_is_failed(&cx->st.workers[r]))
      c->rank = r;
  return 0;
}

int ft_testany(void) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  if (!cx->st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED);
  if (!ftmw_is_master(cx))
    return ftmw_fail(FT_ERR_ROLE);
  ftmw_ok();
  ftmw_rep_choice c;
  uv_mutex_lock(&cx->st.lock);
  ftmw_hold_if_aborting_locked(cx);
  ftmw_rep_decided(cx, FTMW_DECIDE_TESTANY, -1, testany_choose, NULL, &c);
  int found = c.rank;
  if (found && c.followed)
    ftmw_await_gone_locked(cx, &cx->st.workers[found]);
  if (found) {
    cx->st.workers[found].unreported = 0;
    ftmw_heeded(cx, &cx->st.workers[found]);
  }
  uv_mutex_unlock(&cx->st.lock);
  return found;
}

/* What the application posted for p's old incarnation is gone with it. */
static void forget_posted(ftmw_ctx *cx, ftmw_peer *p) {
  ftmw_app_peer *a = ftmw_app_of(cx, p);
  a->posts.n = 0;
  a->log.posted = NULL; /* ms_restore posts it again if it replays it */
}

int ft_restore(int rank) { return ftmw_restore(&ftmw_default_ctx, rank); }

/* ft_restore in progress, where this master decides. */
typedef struct {
  ftmw_peer *p;
  int started; /* a restore was started (not FT_ERR_NOT_FAILED) */
  int pending; /* its new incarnation has not joined yet */
  double ms;
} restore_run;

/* ft_restore's own part, where this master decides (the replica
 * protocol's restore function, every replica done with the old
 * incarnation; st.lock held, released while it restores): the outcome
 * code. A worker restored by an old primary that died before it could
 * tell was adopted by the replicas, and by this master. */
static int restore_locked(ftmw_ctx *cx, void *arg) {
  restore_run *r = arg;
  ftmw_peer *p = r->p;
  int adopted = ftmw_peer_is_up(p) && p->epoch != ftmw_app_of(cx, p)->app_epoch;
  int failed = ftmw_peer_is_failed(p);
  int dropped = failed ? ftmw_match_drop(p) : 0;
  p->unreported = 0;
  if (!failed && !adopted)
    return FT_ERR_NOT_FAILED;
  uv_mutex_unlock(&cx->st.lock);
  forget_posted(cx, p);
  r->started = 1;
  uint64_t t0 = uv_hrtime();
  ftmw_trace("restore_started", "\"peer\":%d,\"dropped\":%d", p->id, dropped);
  int rc = adopted ? FT_SUCCESS : ftmw_launch_restore(cx, p);
  r->ms = (uv_hrtime() - t0) / 1e6;
  uv_mutex_lock(&cx->st.lock);
  if (rc == FT_SUCCESS)
    ftmw_app_of(cx, p)->app_epoch = p->epoch;
  else /* told now: a new incarnation that never joined is not reported
          again (ftmw-sim seed 1072: a spare cut off by a partition) */
    p->unreported = 0;
  r->pending = rc == FT_SUCCESS && ftmw_peer_restoring(p);
  return rc;
}

/* Traces and logs restore r, made here. */
static void trace_restored(const restore_run *r) {
  const ftmw_peer *p = r->p;
  if (r->pending) { /* traced once it joins */
    ftmw_trace("restore_queued", "\"peer\":%d,\"peer_epoch\":%u,\"ms\":%.3f",
               p->id, p->epoch, r->ms);
    return;
  }
  ftmw_trace("restore_finished", "\"peer\":%d,\"peer_epoch\":%u,\"ms\":%.3f",
             p->id, p->epoch, r->ms);
  ftmw_log("worker %d restored (incarnation %u, pid %d on %s) in %.1f ms",
           p->id, p->epoch, (int)p->at.pid, p->at.host, r->ms);
}

int ftmw_restore(ftmw_ctx *cx, int rank) {
  ftmw_peer *p = ftmw_master_peer(cx, rank);
  if (p == NULL)
    return 0;
  ftmw_heeded(cx, p); /* whatever the outcome: the program saw the failure */
  restore_run r = {.p = p};
  int followed;
  uint32_t e;
  uv_mutex_lock(&cx->st.lock);
  ftmw_hold_if_aborting_locked(cx);
  int rc = ftmw_rep_restore_call(cx, p, restore_locked, &r, &followed, &e);
  if (followed && rc != FT_ERR_NOT_FAILED) /* the primary restored p */
    forget_posted(cx, p);
  if (followed && rc == FT_SUCCESS)
    ftmw_app_of(cx, p)->app_epoch = e;
  uv_mutex_unlock(&cx->st.lock);
  if (rc != FT_SUCCESS && r.started) {
    ftmw_trace("restore_failed", "\"peer\":%d,\"ms\":%.3f", rank, r.ms);
    ftmw_log("worker %d could not be restored: %s", rank, ft_strerror(rc));
  }
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  if (!followed) /* a replica's is the primary's */
    trace_restored(&r);
  ftmw_ok();
  return 1;
}

int ft_is_primary(void) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  if (!cx->st.initialized || !ftmw_is_master(cx))
    return 0;
  if (cx->job.M == 0)
    return 1;
  uv_mutex_lock(&cx->st.lock);
  int primary = ftmw_rep_primary_call(cx);
  uv_mutex_unlock(&cx->st.lock);
  return primary;
}

void ft_abort(int code) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  code &= 0xff;
  fflush(stdout);
  fflush(stderr);
  if (!cx->st.initialized)
    ftmw_leave(FTMW_LEAVE_ABORT_NO_JOB, code,
               "ft_abort(%d) with no job (before ft_init or after "
               "ft_finalize): this process only", code);
  ftmw_log("%s %d called ft_abort(%d): ending the job",
           ftmw_role_name(cx->job.role), cx->job.id, code);
  ftmw_end_job(cx, code);
}
