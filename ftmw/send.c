/* The sends: ft_send, ft_ssend, ft_isend and ft_sendrecv (and ms_send's,
 * and the farm's ftmw_isend_owned, owned.h).
 * A message up to FT_EAGER_LIMIT bytes is eager: handed to the transport
 * as ft_isend's without a request (isend.c), so the call returns without
 * waiting for the receiver; its destination's failure is reported at the
 * next call that names it, or at the any-source receive that would wait
 * for it. With master replicas the primary's eager send runs through the
 * replicas' agreement on the call first. Otherwise (ft_ssend, a longer
 * message, a worker's send with replicas): the replicas' agreement (a
 * worker's: its COPY to them first, replica.h), then the DATA frame into
 * the transport and the wait for its ACK.
 * Application thread only. */
#include "calls.h"
#include "transport.h"
#include "replica.h"
#include "isend.h"
#include "owned.h"

#include <stdlib.h>
#include <string.h>

/* A send's DATA, as the write that the replicas' agreement runs
 * (ftmw_rep_write): number seq to the peer it is handed, eager or waiting
 * for the ACK. */
typedef struct {
  const char *call;
  uint64_t seq;
  int tag;
  const void *buf;
  size_t bytes;
  int eager;
} data_write;

/* Writes w's DATA to p and waits for its ACK (st.lock held): FT_SUCCESS,
 * or FTMW_REP_UNDELIVERED when p failed or left first. */
static int write_acked_locked(ftmw_ctx *cx, ftmw_peer *p, const data_write *w) {
  ftmw_op op = {.out = {.seq = w->seq, .want_ack = 1}};
  ftmw_op_frame(cx, &op, p, FTMW_FRAME_DATA, w->tag, 0, w->buf, w->bytes);
  ftmw_transport_submit(cx, &op, 1);
  return ftmw_op_wait_locked(cx, &op) == FT_SUCCESS ? FT_SUCCESS
                                                    : FTMW_REP_UNDELIVERED;
}

/* ftmw_rep_write's fn: an eager send is handed to the transport with a
 * copy, as ft_isend's (or, with no memory for the copy, waits for its
 * ACK instead); any other waits for its ACK. */
static int write_data(ftmw_ctx *cx, ftmw_peer *p, void *arg) {
  const data_write *w = arg;
  int rc = w->eager ? ftmw_isend_eager_locked(cx, w->call, p, w->seq, w->tag,
                                              w->buf, w->bytes)
                    : FT_ERR_NOMEM;
  return rc == FT_ERR_NOMEM ? write_acked_locked(cx, p, w) : rc;
}

int ftmw_send(ftmw_ctx *cx, const char *call, const void *buf, int count,
              FT_Datatype type, int dest, int tag, int sync) {
  size_t bytes;
  ftmw_peer *p =
      ftmw_send_target(cx, call, buf, count, type, dest, tag, &bytes);
  if (p == NULL)
    return 0;
  int eager = !sync && bytes <= (size_t)cx->job.cfg.eager_limit;
  if (eager && cx->job.M == 0) /* arguments checked: not again on this path */
    return ftmw_isend_checked(cx, call, p, buf, bytes, count, dest, tag,
                              FTMW_FLAG_EAGER, NULL);
  int rc;
  ftmw_fault_hit(FTMW_FAULT_SEND_ENTER);
  uv_mutex_lock(&cx->st.lock);
  data_write dw = {call, 0, tag, buf, bytes, eager};
  ftmw_rep_write w = {write_data, &dw};
  if (ftmw_is_master(cx)) { /* the replicas' agreement, then the write */
    dw.seq = ++ftmw_app_of(cx, p)->next_seq;
    rc = ftmw_rep_send_call(cx, call, p, dw.seq, &w);
  } else { /* its COPY to the other masters, then the write */
    dw.seq = ++cx->st.tx_seq;
    dw.eager = 0;
    rc = ftmw_rep_worker_send(cx, call, tag, dw.seq, buf, bytes, &w);
  }
  uv_mutex_unlock(&cx->st.lock);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  ftmw_trace_data(cx, "sent", dest, tag, bytes);
  ftmw_fault_hit(FTMW_FAULT_SEND_EXIT);
  ftmw_ok();
  return count;
}

int ft_send(const void *buf, int count, FT_Datatype type, int dest, int tag) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  if (ftmw_check_tag(tag, 0) != FT_SUCCESS)
    return ftmw_fail(FT_ERR_TAG);
  return ftmw_send(cx, "ft_send", buf, count, type, dest, tag, 0);
}

int ftmw_send_nowait(ftmw_ctx *cx, const char *call, const void *buf, int count,
                     FT_Datatype type, int dest, int tag, unsigned flags,
                     FT_Request *req) {
  if (req)
    *req = FT_REQUEST_NULL;
  if (cx->job.M == 0 || !cx->st.initialized)
    return ftmw_isend(cx, call, buf, count, type, dest, tag, flags, req);
  /* With replicas the send is ft_ssend's, and its request is settled. */
  ftmw_peer *p = ftmw_peer_of(cx, dest);
  FT_Request r = NULL;
  if (p == NULL)
    return 0;
  if (req && (r = ftmw_request_settled(p, dest, tag, count)) == NULL)
    return ftmw_fail(FT_ERR_NOMEM);
  int n = ftmw_send(cx, call, buf, count, type, dest, tag, 1);
  int rc = ftmw_last_error();
  if (r) {
    ftmw_request_keep(cx, r, rc == FT_SUCCESS);
    if (rc == FT_SUCCESS)
      *req = r;
  }
  return rc == FT_SUCCESS ? n : ftmw_fail(rc);
}

/* With master replicas a send waits for its ACK (ftmw_send_nowait): the
 * pieces are sent from one buffer, and are free again when it returns. */
static int isend_gathered(ftmw_ctx *cx, const char *call, int dest, int tag,
                          const void *head, size_t headlen,
                          const ftmw_piece *pieces, int n, size_t bytes) {
  const void *one = n == 1 && headlen == 0 ? pieces[0].base : NULL;
  uint8_t *b = one || bytes == 0 ? NULL : malloc(bytes);
  if (b == NULL && one == NULL && bytes > 0)
    return ftmw_fail(FT_ERR_NOMEM);
  if (b) {
    size_t at = headlen;
    if (headlen)
      memcpy(b, head, headlen);
    for (int i = 0; i < n; i++) {
      if (pieces[i].len)
        memcpy(b + at, pieces[i].base, pieces[i].len);
      at += pieces[i].len;
    }
  }
  int ok = ftmw_send_nowait(cx, call, one ? one : b, (int)bytes, FT_BYTE, dest,
                            tag, FTMW_FLAG_LAZY, NULL) > 0 ||
           (bytes == 0 && ftmw_last_error() == FT_SUCCESS);
  int rc = ftmw_last_error();
  free(b);
  return ok ? 1 : ftmw_fail(rc);
}

int ftmw_isend_owned(const char *call, int dest, int tag, const void *head,
                     size_t headlen, const ftmw_piece *pieces, int n,
                     ftmw_release_fn release, unsigned flags) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  size_t bytes = headlen;
  int listed = n >= 0 && n <= FTMW_PIECES_MAX && (pieces != NULL || n == 0);
  int bad = !listed || (head == NULL && headlen > 0);
  for (int i = 0; !bad && i < n; i++) {
    bad = pieces[i].base == NULL && pieces[i].len > 0;
    bytes += pieces[i].len;
  }
  size_t checked;
  ftmw_peer *p = NULL;
  if (bad)
    ftmw_fail(FT_ERR_BUFFER);
  else if (bytes > (size_t)INT32_MAX)
    ftmw_fail(FT_ERR_TOO_BIG);
  else /* the usual checks; the buffer, checked above, is not NULL */
    p = ftmw_send_target(cx, call, &bytes, (int)bytes, FT_BYTE, dest, tag,
                         &checked);
  if (p != NULL && cx->job.M == 0) /* gives the pieces back itself */
    return ftmw_isend_pieces(cx, call, p, dest, tag, head, headlen, pieces, n,
                             bytes, release, flags);
  int rc = p != NULL ? isend_gathered(cx, call, dest, tag, head, headlen,
                                      pieces, n, bytes)
                     : 0;
  if (listed)
    ftmw_release_pieces(pieces, n, release);
  return rc;
}

int ft_isend(const void *buf, int count, FT_Datatype type, int dest, int tag,
             FT_Request *req) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  if (req)
    *req = FT_REQUEST_NULL;
  if (ftmw_check_tag(tag, 0) != FT_SUCCESS)
    return ftmw_fail(FT_ERR_TAG);
  return ftmw_send_nowait(cx, "ft_isend", buf, count, type, dest, tag,
                          FTMW_FLAG_LAZY, req);
}

int ft_ssend(const void *buf, int count, FT_Datatype type, int dest, int tag) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  if (ftmw_check_tag(tag, 0) != FT_SUCCESS)
    return ftmw_fail(FT_ERR_TAG);
  return ftmw_send(cx, "ft_ssend", buf, count, type, dest, tag, 1);
}

/* The receive half is checked first, so that a bad argument there never
 * leaves the send done. */
int ft_sendrecv(const void *sendbuf, int sendcount, FT_Datatype sendtype,
                int dest, int sendtag, void *recvbuf, int recvcount,
                FT_Datatype recvtype, int source, int recvtag,
                FT_Status *status) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  static const char call[] = "ft_sendrecv";
  size_t bytes;
  int rc = !cx->st.initialized
               ? FT_ERR_NOT_INITIALIZED
               : ftmw_check_buffer(cx, recvbuf, recvcount, recvtype, &bytes);
  if (rc == FT_SUCCESS)
    rc = ftmw_check_tag(recvtag, 1);
  if (rc == FT_SUCCESS)
    rc = ftmw_check_tag(sendtag, 0);
  ftmw_peer *from;
  if (rc == FT_SUCCESS)
    rc = ftmw_source_peer(cx, source, &from);
  ftmw_set_status(status, source, recvtag, 0, rc);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  if (ftmw_send(cx, call, sendbuf, sendcount, sendtype, dest, sendtag, 0) ==
          0 &&
      ftmw_last_error() != FT_SUCCESS) {
    ftmw_set_status(status, dest, sendtag, 0, ftmw_last_error());
    return 0;
  }
  return ftmw_recv(cx, call, recvbuf, recvcount, recvtype, source, recvtag,
                   status);
}
