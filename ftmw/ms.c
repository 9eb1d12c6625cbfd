/* The ms_* calls: the ft_* data path, plus the master's per-worker log
 * (mslog.c) and its replay by ms_restore. Application thread only.
 *
 * A call is logged when it communicated or reported the worker's failure
 * (except an FT_ANY_SOURCE receive that reported one: see ms_recv_call); a
 * misuse (bad rank, count, type, tag, a truncated receive) leaves the log
 * untouched, so a bad argument never costs the previous instance of a
 * cycle. The record is allocated before the operation, so that a message
 * that went out is never left unlogged for want of memory. */
#include "calls.h"
#include "peer.h"

/* Checks what every ms_* call needs and makes its record; NULL with the
 * error set on a misuse. For FT_ANY_SOURCE receives, rank is not checked
 * here (the receive checks the role). */
static ftmw_mslog_call *new_record(ftmw_ctx *cx, int kind, void *buf, int count,
                                   FT_Datatype type, int rank, int tag) {
  if (rank != FT_ANY_SOURCE || kind != FTMW_MSLOG_RECV) {
    if (ftmw_master_peer(cx, rank) == NULL)
      return NULL;
  } else if (!cx->st.initialized || cx->job.role != FTMW_ROLE_MASTER) {
    ftmw_fail(cx->st.initialized ? FT_ERR_ROLE : FT_ERR_NOT_INITIALIZED);
    return NULL;
  }
  size_t bytes;
  int rc = ftmw_check_buffer(cx, buf, count, type, &bytes);
  /* The broadcast tag comes only from ms_bcast's sends (ms_send refused
   * it already). */
  if (rc == FT_SUCCESS && !(tag == FTMW_TAG_BCAST && kind == FTMW_MSLOG_SEND))
    rc = ftmw_check_tag(tag, kind != FTMW_MSLOG_SEND);
  if (rc != FT_SUCCESS) {
    ftmw_fail(rc);
    return NULL;
  }
  ftmw_mslog_call *c = ftmw_mslog_call_new(kind, tag, buf, count, type, bytes);
  if (c == NULL)
    ftmw_fail(FT_ERR_NOMEM);
  return c;
}

/* Adds record c to rank's log if the operation that returned n
 * communicated or reported the worker's failure; frees it otherwise.
 * Leaves the operation's result (n and ft_error()) as it was. */
static int record(ftmw_ctx *cx, ftmw_mslog_call *c, int rank, int n) {
  int error = ftmw_last_error();
  if (rank >= 1 && rank <= cx->job.W &&
      (error == FT_SUCCESS || error == FT_ERR_PEER_FAILED)) {
    ftmw_mslog *log = &ftmw_app_of(cx, &cx->st.workers[rank])->log;
    if (error != FT_SUCCESS)
      c->state = FTMW_MSLOG_FAILED;
    ftmw_mslog_add(log, c);
    if (c->kind == FTMW_MSLOG_IRECV && error == FT_SUCCESS)
      log->posted = c;
  } else {
    ftmw_mslog_call_free(c);
  }
  return n;
}

ftmw_mslog_call *ftmw_ms_record_send(ftmw_ctx *cx, const void *buf, int count,
                                     FT_Datatype type, int dest, int tag) {
  return new_record(cx, FTMW_MSLOG_SEND, (void *)buf, count, type, dest, tag);
}

void ftmw_ms_record_outcome(ftmw_ctx *cx, ftmw_mslog_call *c, int dest,
                            int error) {
  if (error == FT_SUCCESS)
    ftmw_ok();
  else
    ftmw_fail(error);
  record(cx, c, dest, 0);
}

int ftmw_ms_send(ftmw_ctx *cx, const char *call, const void *buf, int count,
                 FT_Datatype type, int dest, int tag) {
  ftmw_mslog_call *c =
      new_record(cx, FTMW_MSLOG_SEND, (void *)buf, count, type, dest, tag);
  if (c == NULL)
    return 0;
  return record(cx, c, dest,
                ftmw_send(cx, call, buf, count, type, dest, tag, 0));
}

int ms_send(const void *buf, int count, FT_Datatype type, int dest, int tag) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  if (tag == FTMW_TAG_BCAST)
    return ftmw_fail(FT_ERR_TAG);
  return ftmw_ms_send(cx, "ms_send", buf, count, type, dest, tag);
}

static int ms_recv_call(ftmw_ctx *cx, const char *call, void *buf, int count,
                        FT_Datatype type, int source, int tag,
                        FT_Status *status) {
  FT_Status local;
  if (status == NULL)
    status = &local;
  ftmw_mslog_call *c =
      new_record(cx, FTMW_MSLOG_RECV, buf, count, type, source, tag);
  if (c == NULL) {
    ftmw_set_status(status, source, tag, 0, ftmw_last_error());
    return 0;
  }
  int n = ftmw_recv(cx, call, buf, count, type, source, tag, status);
  /* An FT_ANY_SOURCE receive that reports a failure received nothing and
   * may not have been waiting for that worker at all: replaying it as a
   * receive from the worker could wait for ever. It is not logged; after
   * ms_restore the program receives again (docs/logging.md). */
  if (source == FT_ANY_SOURCE && ftmw_last_error() != FT_SUCCESS) {
    ftmw_mslog_call_free(c);
    return n;
  }
  /* From any worker, with another tag than its task's: its answer, which
   * takes the task out of its log (mslog.h: a farm). */
  if (source == FT_ANY_SOURCE && status->source >= 1 &&
      status->source <= cx->job.W &&
      ftmw_mslog_answered(
          &ftmw_app_of(cx, &cx->st.workers[status->source])->log,
          status->tag)) {
    ftmw_mslog_call_free(c);
    return n;
  }
  return record(cx, c, status->source, n);
}

int ms_recv(void *buf, int count, FT_Datatype type, int source, int tag,
            FT_Status *status) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return ms_recv_call(cx, "ms_recv", buf, count, type, source, tag, status);
}

int ms_rcv(void *buf, int count, FT_Datatype type, int source, int tag,
           FT_Status *status) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return ms_recv_call(cx, "ms_rcv", buf, count, type, source, tag, status);
}

int ms_irecv(void *buf, int count, FT_Datatype type, int source, int tag) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  ftmw_mslog_call *c =
      new_record(cx, FTMW_MSLOG_IRECV, buf, count, type, source, tag);
  if (c == NULL)
    return 0;
  return record(cx, c, source,
                ftmw_irecv(cx, "ms_irecv", 1, buf, count, type, source, tag));
}

/* Where a replay goes: the new incarnation of worker rank, in cx. */
typedef struct replay_to {
  ftmw_ctx *cx;
  int rank;
} replay_to;

/* One replayed operation (ctx: a replay_to). */
static int replay_op(void *ctx, int kind, ftmw_mslog_call *c) {
  ftmw_ctx *cx = ((replay_to *)ctx)->cx;
  int rank = ((replay_to *)ctx)->rank;
  switch (kind) {
  case FTMW_MSLOG_SEND:
    ftmw_send(cx, "ms_restore", c->buf, c->count, c->type, rank, c->tag, 0);
    break;
  case FTMW_MSLOG_RECV:
    ftmw_recv(cx, "ms_restore", c->buf, c->count, c->type, rank, c->tag, NULL);
    break;
  case FTMW_MSLOG_IRECV:
    ftmw_irecv(cx, "ms_restore", 1, c->buf, c->count, c->type, rank, c->tag);
    break;
  default: ftmw_wait(cx, "ms_restore", rank); break;
  }
  return ftmw_last_error();
}

/* ms_restore, and ms_irestore (!wait_last). */
static int restore(ftmw_ctx *cx, int rank, int wait_last) {
  ftmw_peer *p = ftmw_master_peer(cx, rank);
  if (p == NULL)
    return 0;
  for (int attempt = 1;; attempt++) {
    if (!ftmw_restore(cx, rank))
      return 0; /* not failed, or no host or spare left: ft_restore says */
    ftmw_trace("replay_started", "\"peer\":%d,\"attempt\":%d,\"logged\":%d",
               rank, attempt, ftmw_app_of(cx, p)->log.ncalls);
    uint64_t t0 = uv_hrtime();
    int n;
    replay_to to = {cx, rank};
    int rc = ftmw_mslog_replay(&ftmw_app_of(cx, p)->log, replay_op, &to,
                               wait_last, &n);
    double ms = (uv_hrtime() - t0) / 1e6;
    if (rc == FT_SUCCESS) {
      ftmw_trace("replay_finished", "\"peer\":%d,\"calls\":%d,\"ms\":%.3f",
                 rank, n, ms);
      ftmw_ok();
      return 1;
    }
    ftmw_trace("replay_failed", "\"peer\":%d,\"error\":\"%s\",\"ms\":%.3f",
               rank, ft_errname(rc), ms);
    if (rc != FT_ERR_PEER_FAILED) {
      ftmw_log("worker %d: replay failed: %s", rank, ft_strerror(rc));
      return ftmw_fail(rc);
    }
    ftmw_log("worker %d died during replay; restoring it again", rank);
  }
}

int ms_restore(int rank) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return restore(cx, rank, 1);
}

int ms_irestore(int rank) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return restore(cx, rank, 0);
}

size_t ms_log_size(int rank) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  ftmw_peer *p = ftmw_master_peer(cx, rank);
  if (p == NULL)
    return 0;
  ftmw_ok();
  return ftmw_app_of(cx, p)->log.bytes;
}
