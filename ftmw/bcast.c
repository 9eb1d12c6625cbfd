/* ft_bcast and ms_bcast: the master sends one message to every worker,
 * with the library's own tag (FTMW_TAG_BCAST), which no application
 * receive matches; a worker receives the master's next one. The master
 * starts every send before it waits for the first acknowledgement (one
 * round trip, not W), as ft_isend does, which copies the data: a large
 * message goes out to one worker after the other instead. Each send is an
 * ordinary send to that worker (logged for ms_bcast, whose log keeps
 * every broadcast: mslog.h), so replicas, failures and replay need
 * nothing of their own here. Application thread only. */
#include "calls.h"

#include <stdlib.h>

/* Above this, the sends are made one after the other (no copies). */
#define BCAST_COPY_MAX (64 * 1024)

/* The broadcast's sends to workers 1..W: err[r] is each one's outcome,
 * rec[r] (ms_bcast) its log record. Returns FT_ERR_NOMEM if it could not
 * start, else FT_SUCCESS. */
static int send_all(ftmw_ctx *cx, const char *call, int logged, const void *buf,
                    int count, FT_Datatype type, size_t bytes, int *err) {
  int W = cx->job.W, rc = FT_SUCCESS;
  FT_Request *req = calloc((size_t)W + 1, sizeof(*req));
  ftmw_mslog_call **rec = calloc((size_t)W + 1, sizeof(*rec));
  if (req == NULL || rec == NULL) {
    rc = FT_ERR_NOMEM;
    goto out;
  }
  int together = bytes <= BCAST_COPY_MAX;
  for (int r = 1; r <= W; r++) {
    if (logged && (rec[r] = ftmw_ms_record_send(cx, buf, count, type, r,
                                                FTMW_TAG_BCAST)) == NULL) {
      err[r] = ftmw_last_error();
      continue;
    }
    if (together)
      ftmw_send_nowait(cx, call, buf, count, type, r, FTMW_TAG_BCAST, 0,
                       &req[r]);
    else
      ftmw_send(cx, call, buf, count, type, r, FTMW_TAG_BCAST, 1);
    err[r] = ftmw_last_error();
  }
  for (int r = 1; r <= W; r++) {
    if (req[r] != FT_REQUEST_NULL) {
      FT_Status s;
      ftmw_request_wait(cx, &req[r], &s);
      err[r] = s.error;
    }
    if (rec[r])
      ftmw_ms_record_outcome(cx, rec[r], r, err[r]);
  }
out:
  free(req);
  free(rec);
  return rc;
}

static int bcast(ftmw_ctx *cx, const char *call, int logged, void *buf,
                 int count, FT_Datatype type, int root) {
  if (!cx->st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED);
  if (root != 0)
    return ftmw_fail(FT_ERR_RANK);
  if (!ftmw_is_master(cx))
    return ftmw_recv(cx, call, buf, count, type, 0, FTMW_TAG_BCAST, NULL);
  size_t bytes;
  int rc = ftmw_check_buffer(cx, buf, count, type, &bytes);
  int *err =
      rc == FT_SUCCESS ? calloc((size_t)cx->job.W + 1, sizeof(*err)) : NULL;
  if (rc == FT_SUCCESS && err == NULL)
    rc = FT_ERR_NOMEM;
  if (rc == FT_SUCCESS)
    rc = send_all(cx, call, logged, buf, count, type, bytes, err);
  /* Every worker got its copy, whoever failed; the call reports a
   * failure before an ft_finalize seen. */
  for (int r = 1; rc == FT_SUCCESS && r <= cx->job.W; r++)
    if (err[r] != FT_SUCCESS && err[r] != FT_ERR_PEER_FAILED)
      rc = err[r];
  for (int r = 1; err && r <= cx->job.W; r++)
    if (err[r] == FT_ERR_PEER_FAILED)
      rc = FT_ERR_PEER_FAILED;
  free(err);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  ftmw_ok();
  return count;
}

int ft_bcast(void *buf, int count, FT_Datatype type, int root) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return bcast(cx, "ft_bcast", 0, buf, count, type, root);
}

int ms_bcast(void *buf, int count, FT_Datatype type, int root) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return bcast(cx, "ms_bcast", 1, buf, count, type, root);
}
