/* What the API calls share (see calls.h). Application thread only. */
#include "calls.h"
#include "transport.h"
#include "replica.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ftmw_app_init(ftmw_ctx *cx, int W) {
  cx->app = calloc((size_t)W + 1, sizeof(*cx->app));
  if (cx->app == NULL)
    return -1;
  cx->app_n = W + 1;
  for (int r = 0; r < cx->app_n; r++) {
    ftmw_mslog_init(&cx->app[r].log);
    ftmw_q_init(&cx->app[r].isends);
  }
  return 0;
}

void ftmw_app_free(ftmw_ctx *cx) {
  for (int r = 0; r < cx->app_n; r++) {
    ftmw_mslog_clear(&cx->app[r].log);
    free(cx->app[r].posts.v);
  }
  free(cx->app);
  cx->app = NULL;
  cx->app_n = 0;
}

ftmw_app_peer *ftmw_app_of(ftmw_ctx *cx, const ftmw_peer *p) {
  return &cx->app[p->id];
}

int ftmw_is_master(ftmw_ctx *cx) { return cx->job.role == FTMW_ROLE_MASTER; }

/* The peer a call names: a worker rank from a master, rank 0 (the primary
 * master) from a worker. NULL, with the error set, for a bad rank. */
ftmw_peer *ftmw_peer_of(ftmw_ctx *cx, int rank) {
  if (ftmw_is_master(cx)) {
    if (rank >= 1 && rank <= cx->job.W)
      return &cx->st.workers[rank];
  } else if (rank == 0) {
    /* Written by the loop under st.lock; read here also without it, to
     * check a rank: a call that goes on reads it again under the lock. */
    return &cx->st.masters[__atomic_load_n(&cx->st.primary, __ATOMIC_RELAXED)];
  }
  ftmw_fail(FT_ERR_RANK);
  return NULL;
}

int ftmw_source_peer(ftmw_ctx *cx, int source, ftmw_peer **p) {
  *p = NULL;
  if (source == FT_ANY_SOURCE && ftmw_is_master(cx))
    return FT_SUCCESS;
  *p = ftmw_peer_of(cx, source == FT_ANY_SOURCE ? 0 : source);
  return *p ? FT_SUCCESS : FT_ERR_RANK;
}

/* The thesis' convention stays: a failure is a return value (SPEC 1), and
 * the program decides what to do. What stops the job is a program that
 * shows it did not look: one that hands the dead worker its next task, or
 * ends without a word about it, as a port that only renamed MPI calls
 * does, would print a stale buffer as a result, or miss results and exit
 * 0 (calls.h, docs/api.md#errors). */
static const char *unheeded(ftmw_ctx *cx, const ftmw_peer *p) {
  if (!ftmw_is_master(cx) || p->kind != FTMW_ROLE_WORKER)
    return NULL;
  const ftmw_app_peer *a = ftmw_app_of(cx, p);
  if (a->told_by == NULL || cx->job.cfg.errors_return) /* every send asks */
    return NULL;
  /* Only the primary judges, and only what it was told as the primary: a
   * program reads ft_error() in the primary alone when it guards its
   * output with ft_is_primary(), and a replica that took over may not
   * have seen it read. Its ft_end_job ends every master. */
  if (!a->told_primary ||
      cx->job.id != __atomic_load_n(&cx->st.primary, __ATOMIC_RELAXED))
    return NULL;
  /* ft_error() read since the report: the program looked at failures. */
  return ftmw_report_read(a->told_report) ? NULL : a->told_by;
}

static void stop_ignored(ftmw_ctx *cx, const ftmw_peer *p, const char *call,
                         const char *told) {
  ftmw_log("%s: worker %d failed (%s returned it), and the program %s "
           "without looking at the failure (ft_error) or acting on it "
           "(ft_restore, ms_restore, ft_test, ft_testany): it ignored it, "
           "and its results could be wrong or incomplete. The job stops "
           "(status %d). FT_ERRORS=return makes failures return values "
           "only (docs/api.md#errors)",
           call, p->id, told,
           strcmp(call, "ft_finalize") == 0 ? "ended" : "sent to it again",
           FTMW_EXIT_IGNORED);
  ftmw_trace("failure_ignored", "\"peer\":%d,\"call\":\"%s\",\"told_by\":\"%s\"",
             p->id, call, told);
  ftmw_end_job(cx, FTMW_EXIT_IGNORED);
}

void ftmw_check_heeded(ftmw_ctx *cx, const ftmw_peer *p, const char *call) {
  const char *told = unheeded(cx, p);
  if (told && ftmw_app_of(cx, p)->told_how == FTMW_TOLD_ANY)
    stop_ignored(cx, p, call, told);
}

void ftmw_check_all_heeded(ftmw_ctx *cx) {
  if (!ftmw_is_master(cx))
    return;
  for (int r = 1; r <= cx->job.W; r++) {
    const char *told = unheeded(cx, &cx->st.workers[r]);
    if (told && ftmw_app_of(cx, &cx->st.workers[r])->told_how)
      stop_ignored(cx, &cx->st.workers[r], "ft_finalize", told);
  }
}

void ftmw_told_by_recv(ftmw_ctx *cx, const ftmw_peer *p, int any) {
  ftmw_app_peer *a = ftmw_app_of(cx, p);
  if (any || a->told_how == 0)
    a->told_how = any ? FTMW_TOLD_ANY : FTMW_TOLD_RECV;
}

void ftmw_heeded(ftmw_ctx *cx, const ftmw_peer *p) {
  if (ftmw_is_master(cx) && p->kind == FTMW_ROLE_WORKER) {
    ftmw_app_peer *a = ftmw_app_of(cx, p);
    a->told_by = NULL;
    a->told_how = 0;
  }
}

void ftmw_end_job(ftmw_ctx *cx, int code) {
  fflush(stdout);
  fflush(stderr);
  ftmw_op op = {.kind = FTMW_OP_ABORT, .code = code & 0xff};
  uv_mutex_lock(&cx->st.lock);
  ftmw_transport_submit(cx, &op, 1);
  for (;;) /* the loop ends this process (abort.h) */
    ftmw_wait_locked(cx, -1);
}

/* For the master-only calls that name one worker: the worker's peer, or
 * NULL with the error set (not initialized, not a master, bad rank). */
ftmw_peer *ftmw_master_peer(ftmw_ctx *cx, int rank) {
  if (!cx->st.initialized)
    ftmw_fail(FT_ERR_NOT_INITIALIZED);
  else if (!ftmw_is_master(cx))
    ftmw_fail(FT_ERR_ROLE);
  else
    return ftmw_peer_of(cx, rank);
  return NULL;
}

/* Checks a buffer description; returns its size in bytes via *bytes. */
int ftmw_check_buffer(ftmw_ctx *cx, const void *buf, int count,
                      FT_Datatype type, size_t *bytes) {
  size_t size = ft_type_size(type);
  if (size == 0)
    return FT_ERR_TYPE;
  if (count < 0)
    return FT_ERR_COUNT;
  if (buf == NULL && count > 0)
    return FT_ERR_BUFFER;
  *bytes = (size_t)count * size;
  if (*bytes > cx->job.cfg.max_message)
    return FT_ERR_TOO_BIG;
  return FT_SUCCESS;
}

/* What a send names (see calls.h). */
ftmw_peer *ftmw_send_target(ftmw_ctx *cx, const char *call, const void *buf,
                            int count, FT_Datatype type, int dest, int tag,
                            size_t *bytes) {
  int rc = !cx->st.initialized ? FT_ERR_NOT_INITIALIZED
                               : ftmw_check_buffer(cx, buf, count, type, bytes);
  if (rc == FT_SUCCESS && tag < 0)
    rc = FT_ERR_TAG;
  if (rc != FT_SUCCESS) {
    ftmw_fail(rc);
    return NULL;
  }
  ftmw_peer *p = ftmw_peer_of(cx, dest);
  if (p)
    ftmw_check_heeded(cx, p, call);
  return p;
}

/* Reports p's failure from the API call named call (st.lock held): clears
 * p's pending report and traces the call's name, so that a test can check
 * which call heard of a failure. Returns the error. */
int ftmw_report_failure_locked(ftmw_ctx *cx, ftmw_peer *p, const char *call) {
  ftmw_hold_if_aborting_locked(cx);
  int app_worker = ftmw_is_master(cx) && p->kind == FTMW_ROLE_WORKER;
  /* The program hears of its incarnation's failure. A later incarnation,
   * adopted here before the program restored it (a replica before it
   * follows the primary's ft_restore) and failed since, is still to be
   * reported (ftmw-sim seed 11875: a master that took over followed the
   * old primary's report and restore, and its FT_ANY_SOURCE receive
   * then waited for ever for the worker it had fenced). */
  if (!app_worker || p->epoch == ftmw_app_of(cx, p)->app_epoch)
    p->unreported = 0;
  if (app_worker) {
    ftmw_app_peer *a = ftmw_app_of(cx, p);
    if (a->told_by == NULL) /* a receive says so after it (recv.c) */
      a->told_how = 0;
    a->told_by = call;
    a->told_primary =
        cx->job.id == __atomic_load_n(&cx->st.primary, __ATOMIC_RELAXED);
    a->told_report = ftmw_note_report();
  }
  ftmw_trace("failure_reported",
             "\"peer\":\"%s %d\",\"call\":\"%s\",\"latency_ms\":%.3f",
             ftmw_role_name(p->kind), p->id, call,
             (uv_hrtime() - p->failed_at) / 1e6);
  return p->kind == FTMW_ROLE_MASTER ? FT_ERR_NO_MASTER : FT_ERR_PEER_FAILED;
}

/* Once the job is being ended (ft_abort), every process goes: a call
 * that would report a failure, or act on one, never returns, lest the
 * program act on it (restore a worker, print a partial result) before
 * its own end; the loop ends this process meanwhile. */
void ftmw_hold_if_aborting_locked(ftmw_ctx *cx) {
  while (__atomic_load_n(&cx->st.aborting, __ATOMIC_RELAXED))
    ftmw_wait_locked(cx, -1);
}

/* The error the API call named call reports when p, which it names,
 * cannot take part any more (st.lock held), or FT_SUCCESS. */
int ftmw_peer_gone(const ftmw_peer *p) {
  return ftmw_peer_is_failed(p) || p->state == FTMW_PEER_FINISHED || p->fin;
}

int ftmw_peer_gone_locked(ftmw_ctx *cx, ftmw_peer *p, const char *call) {
  if (ftmw_peer_is_failed(p))
    return ftmw_report_failure_locked(cx, p, call);
  if (ftmw_peer_gone(p))
    return FT_ERR_PEER_FINALIZED;
  return FT_SUCCESS;
}

/* A replica told by the primary that worker p failed waits until it sees
 * it too (it will: the worker is gone), or sees p replaced by the
 * incarnation the primary's next ft_restore made, so that the calls that
 * follow agree. */
void ftmw_await_gone_locked(ftmw_ctx *cx, ftmw_peer *p) {
  uint32_t given = ftmw_app_of(cx, p)->app_epoch;
  while (ftmw_peer_is_up(p) && !p->fin && p->epoch == given)
    ftmw_wait_locked(cx, -1);
}

/* A replica's call reports the failure (or end) of p that the primary's
 * same call reported. */
int ftmw_decided_gone_locked(ftmw_ctx *cx, ftmw_peer *p, const char *call) {
  ftmw_await_gone_locked(cx, p);
  int rc = ftmw_peer_gone_locked(cx, p, call);
  return rc != FT_SUCCESS ? rc : ftmw_report_failure_locked(cx, p, call);
}

/* With FT_TRACE_DATA=N, every Nth data message this process sends or
 * receives is traced (application thread only). */
void ftmw_trace_data(ftmw_ctx *cx, const char *event, int peer, int tag,
                     size_t bytes) {
  if (cx->job.cfg.trace_data > 0 && ftmw_trace_enabled() &&
      ++cx->trace_data_count % (unsigned long)cx->job.cfg.trace_data == 0)
    ftmw_trace(event, "\"peer\":%d,\"tag\":%d,\"bytes\":%zu", peer, tag,
               bytes);
}

void ftmw_set_status(FT_Status *status, int source, int tag, int count,
                     int error) {
  if (status) {
    status->source = source;
    status->tag = tag;
    status->count = count;
    status->error = error;
    status->bytes = 0;
  }
}
