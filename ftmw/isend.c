/* Non-blocking sends and their requests (see isend.h): ft_isend's
 * without replicas, and ft_send's eager ones.
 *
 * A request holds the frame (an ftmw_op, transport.h) and a copy of the
 * data, and sits on its destination's queue, oldest first, until it is
 * completed: by the application's wait or test when it was handed out,
 * else by the library as soon as it settles (each ft_isend to that
 * destination frees the settled ones at the queue's head). ACKs come in
 * order, so the settled requests are always the oldest. */
#include "calls.h"
#include "transport.h"
#include "replica.h"
#include "isend.h"

#include <stdlib.h>
#include <string.h>

struct ft_request {
  ftmw_op op;       /* the frame and its outcome */
  ftmw_qnode node;  /* its destination's queue */
  ftmw_peer *peer;  /* the destination */
  int dest, tag, count;
  size_t bytes;
  int handed; /* the application holds it: its completion frees it */
  int early;  /* settled at the call (with replicas): result is final */
  int result; /* early: FT_SUCCESS */
  /* The frame's data: data[0..copied), then the caller's pieces, which
   * release(owner) gives back when the request is freed. */
  size_t copied;
  unsigned npieces;
  ftmw_piece pieces[FTMW_PIECES_MAX];
  ftmw_release_fn release;
  unsigned char data[];
};

/* The requests to keep for p: a worker's go to cx->to_masters. */
static ftmw_qnode *queue_of(ftmw_ctx *cx, ftmw_peer *p) {
  return ftmw_is_master(cx) ? &ftmw_app_of(cx, p)->isends : &cx->to_masters;
}

static FT_Request req_of(ftmw_qnode *n) {
  return FTMW_CONTAINER_OF(n, struct ft_request, node);
}

void ftmw_release_pieces(const ftmw_piece *v, int n, ftmw_release_fn f) {
  for (int i = 0; f && i < n; i++)
    if (v[i].owner)
      f(v[i].owner);
}

/* A request's frame: its header, what it copied, and its pieces. */
_Static_assert(1 + 1 + FTMW_PIECES_MAX <= FTMW_OUT_BUFS,
               "a request's pieces do not fit in a frame");

/* Frees r and gives its pieces back. */
static void request_free(FT_Request r) {
  ftmw_release_pieces(r->pieces, (int)r->npieces, r->release);
  free(r);
}

/* st.lock held. */
static int settled_locked(const struct ft_request *r) {
  const ftmw_out *o = &r->op.out;
  return r->early || (o->done && (o->acked || o->failed));
}

/* Frees the settled requests at the head of q that nobody holds. */
static void reap_locked(ftmw_qnode *q) {
  ftmw_qnode *n = ftmw_q_head(q);
  while (n != q && settled_locked(req_of(n))) {
    FT_Request r = req_of(n);
    n = n->next;
    if (!r->handed) {
      ftmw_q_remove(&r->node);
      request_free(r);
    }
  }
}

/* Whether the frames in q not yet acknowledged fill an eager sender's
 * window (isend.h). */
static int window_full_locked(ftmw_qnode *q) {
  size_t n = 0, bytes = 0;
  for (ftmw_qnode *i = ftmw_q_head(q); i != q; i = i->next) {
    FT_Request r = req_of(i);
    if (settled_locked(r))
      continue;
    bytes += r->bytes;
    if (++n >= FTMW_EAGER_WINDOW_FRAMES || bytes >= FTMW_EAGER_WINDOW_BYTES)
      return 1;
  }
  return 0;
}

static FT_Request request_new(ftmw_peer *p, int dest, int tag, int count,
                              const void *buf, size_t bytes, int handed) {
  FT_Request r = malloc(sizeof(*r) + bytes);
  if (r == NULL)
    return NULL;
  memset(r, 0, sizeof(*r));
  if (bytes)
    memcpy(r->data, buf, bytes);
  r->copied = bytes;
  r->peer = p;
  r->dest = dest;
  r->tag = tag;
  r->count = count;
  r->bytes = bytes;
  r->handed = handed;
  ftmw_q_init(&r->node);
  return r;
}

FT_Request ftmw_request_settled(const ftmw_peer *p, int dest, int tag,
                                int count) {
  FT_Request r = request_new((ftmw_peer *)p, dest, tag, count, NULL, 0, 1);
  if (r != NULL)
    r->early = 1;
  return r;
}

void ftmw_request_keep(ftmw_ctx *cx, FT_Request r, int sent) {
  if (!sent) {
    request_free(r);
    return;
  }
  uv_mutex_lock(&cx->st.lock);
  ftmw_q_insert_tail(queue_of(cx, r->peer), &r->node); /* for ft_finalize */
  uv_mutex_unlock(&cx->st.lock);
}

/* Hands r, whose data is a copy, to p's current incarnation as DATA
 * number seq (0: numbered here, the next of p's), with flags (st.lock
 * held; an eager send's window wait releases it meanwhile). Returns
 * FT_SUCCESS, r then queued, or the error to report (the caller frees
 * r). */
static int submit_locked(ftmw_ctx *cx, const char *call, FT_Request r,
                         ftmw_peer *p, uint64_t seq, unsigned flags) {
  ftmw_qnode *q = queue_of(cx, p);
  reap_locked(q);
  int rc = ftmw_peer_gone_locked(cx, p, call);
  while ((flags & FTMW_FLAG_EAGER) && rc == FT_SUCCESS &&
         window_full_locked(q)) {
    ftmw_wait_locked(cx, -1);
    reap_locked(q);
    rc = ftmw_peer_gone_locked(cx, p, call);
  }
  if (rc != FT_SUCCESS)
    return rc;
  /* With master replicas a master's send comes numbered, the replicas'
   * agreement run (ftmw_rep_send_call): a request is never made there. */
  if (seq == 0)
    seq = ftmw_is_master(cx) ? ++ftmw_app_of(cx, p)->next_seq : ++cx->st.tx_seq;
  r->peer = p;
  r->op.out = (ftmw_out){.seq = seq, .want_ack = 1};
  uv_buf_t v[1 + FTMW_PIECES_MAX] = {{.base = (char *)r->data,
                                      .len = r->copied}};
  for (unsigned i = 0; i < r->npieces; i++)
    v[1 + i] = (uv_buf_t){.base = (char *)r->pieces[i].base,
                          .len = r->pieces[i].len};
  ftmw_op_frame_v(cx, &r->op, p, FTMW_FRAME_DATA, r->tag, flags, v,
                  1 + r->npieces);
  ftmw_transport_submit(cx, &r->op, 1);
  ftmw_q_insert_tail(q, &r->node);
  /* An eager send is written now, so that a sender that dies right after
   * the call has sent it; ft_isend's goes in a batch if more come at
   * once. */
  if (flags & FTMW_FLAG_EAGER)
    ftmw_loop_flush_locked(&cx->loop);
  else
    ftmw_loop_flush_soon_locked(&cx->loop);
  return FT_SUCCESS;
}

/* Sends request r (made, its arguments checked) to p; frees it if it
 * cannot. Returns its count, or 0 with the error set. */
static int send_request(ftmw_ctx *cx, const char *call, FT_Request r,
                        ftmw_peer *p, unsigned flags, FT_Request *req) {
  int dest = r->dest, tag = r->tag, count = r->count;
  size_t bytes = r->bytes;
  ftmw_fault_hit(FTMW_FAULT_SEND_ENTER);
  uv_mutex_lock(&cx->st.lock);
  if (!ftmw_is_master(cx))
    p = ftmw_peer_of(cx, 0); /* the primary, now that the lock is held */
  int rc = submit_locked(cx, call, r, p, 0, flags);
  uv_mutex_unlock(&cx->st.lock);
  if (rc != FT_SUCCESS) {
    request_free(r);
    return ftmw_fail(rc);
  }
  if (req)
    *req = r;
  ftmw_trace_data(cx, "sent", dest, tag, bytes);
  ftmw_fault_hit(FTMW_FAULT_SEND_EXIT);
  ftmw_ok();
  return count;
}

int ftmw_isend(ftmw_ctx *cx, const char *call, const void *buf, int count,
               FT_Datatype type, int dest, int tag, unsigned flags,
               FT_Request *req) {
  if (req)
    *req = FT_REQUEST_NULL;
  size_t bytes;
  ftmw_peer *p =
      ftmw_send_target(cx, call, buf, count, type, dest, tag, &bytes);
  if (p == NULL)
    return 0;
  return ftmw_isend_checked(cx, call, p, buf, bytes, count, dest, tag, flags,
                            req);
}

int ftmw_isend_checked(ftmw_ctx *cx, const char *call, ftmw_peer *p,
                       const void *buf, size_t bytes, int count, int dest,
                       int tag, unsigned flags, FT_Request *req) {
  FT_Request r = request_new(p, dest, tag, count, buf, bytes, req != NULL);
  if (r == NULL)
    return ftmw_fail(FT_ERR_NOMEM);
  return send_request(cx, call, r, p, flags, req);
}

int ftmw_isend_eager_locked(ftmw_ctx *cx, const char *call, ftmw_peer *p,
                            uint64_t seq, int tag, const void *buf,
                            size_t bytes) {
  FT_Request r = request_new(p, p->id, tag, 0, buf, bytes, 0);
  if (r == NULL)
    return FT_ERR_NOMEM;
  int rc = submit_locked(cx, call, r, p, seq, FTMW_FLAG_EAGER);
  if (rc != FT_SUCCESS)
    request_free(r);
  return rc;
}

int ftmw_isend_pieces(ftmw_ctx *cx, const char *call, ftmw_peer *p, int dest,
                      int tag, const void *head, size_t headlen,
                      const ftmw_piece *pieces, int n, size_t bytes,
                      ftmw_release_fn release, unsigned flags) {
  FT_Request r = request_new(p, dest, tag, (int)bytes, head, headlen, 0);
  if (r == NULL) {
    ftmw_release_pieces(pieces, n, release);
    return ftmw_fail(FT_ERR_NOMEM);
  }
  for (int i = 0; i < n; i++)
    r->pieces[r->npieces++] = pieces[i];
  r->bytes = bytes;
  r->release = release; /* r gives the pieces back from now on */
  return send_request(cx, call, r, p, flags, NULL) > 0 ||
         (bytes == 0 && ftmw_last_error() == FT_SUCCESS);
}

/* The outcome of settled request r (st.lock held): FT_SUCCESS, or its
 * destination's failure, reported by the call named call when that is
 * still the incarnation it went to. */
static int outcome_locked(ftmw_ctx *cx, FT_Request r, const char *call) {
  if (r->early)
    return r->result;
  if (!r->op.out.failed)
    return FT_SUCCESS;
  ftmw_peer *p = r->peer;
  int rc =
      p->epoch == r->op.epoch ? ftmw_peer_gone_locked(cx, p, call) : FT_SUCCESS;
  return rc != FT_SUCCESS ? rc : FT_ERR_PEER_FAILED;
}

/* Completes settled *req (st.lock held): frees it, fills status, and
 * returns what the wait returns (the error set). */
static int complete_locked(ftmw_ctx *cx, FT_Request *req, FT_Status *status,
                           const char *call) {
  FT_Request r = *req;
  int rc = outcome_locked(cx, r, call);
  ftmw_q_remove(&r->node);
  ftmw_set_status(status, r->dest, r->tag, rc == FT_SUCCESS ? r->count : 0, rc);
  int n = rc == FT_SUCCESS ? r->count : 0;
  request_free(r);
  *req = FT_REQUEST_NULL;
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  ftmw_ok();
  return n;
}

/* The common checks: FT_SUCCESS when the call may go on, else the
 * error; null: a required pointer is NULL. */
static int check(ftmw_ctx *cx, int null, int n) {
  if (!cx->st.initialized)
    return FT_ERR_NOT_INITIALIZED;
  if (null)
    return FT_ERR_NULL_ARG;
  return n < 0 ? FT_ERR_COUNT : FT_SUCCESS;
}

static int null_request(FT_Status *status) {
  ftmw_set_status(status, FT_ANY_SOURCE, FT_ANY_TAG, 0, FT_SUCCESS);
  ftmw_ok();
  return 0;
}

int ft_request_wait(FT_Request *req, FT_Status *status) {
  return ftmw_request_wait(&ftmw_default_ctx, req, status);
}

int ftmw_request_wait(ftmw_ctx *cx, FT_Request *req, FT_Status *status) {
  int rc = check(cx, req == NULL, 0);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  if (*req == FT_REQUEST_NULL)
    return null_request(status);
  uv_mutex_lock(&cx->st.lock);
  while (!settled_locked(*req))
    ftmw_wait_locked(cx, -1);
  int n = complete_locked(cx, req, status, "ft_request_wait");
  uv_mutex_unlock(&cx->st.lock);
  return n;
}

int ft_request_test(FT_Request *req, int *done, FT_Status *status) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  int rc = check(cx, req == NULL || done == NULL, 0);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  *done = 1;
  if (*req == FT_REQUEST_NULL)
    return null_request(status);
  uv_mutex_lock(&cx->st.lock);
  if (!settled_locked(*req))
    ftmw_wait_locked(cx, 0); /* what has come is read: the test progresses */
  int n = 0;
  if (settled_locked(*req)) {
    n = complete_locked(cx, req, status, "ft_request_test");
  } else {
    *done = 0;
    ftmw_ok();
  }
  uv_mutex_unlock(&cx->st.lock);
  return n;
}

int ft_request_waitall(int n, FT_Request *reqs, FT_Status *statuses) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  int rc = check(cx, n > 0 && reqs == NULL, n);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  int first = FT_SUCCESS;
  for (int i = 0; i < n; i++) {
    FT_Status s;
    ftmw_request_wait(cx, &reqs[i], &s);
    if (statuses)
      statuses[i] = s;
    if (first == FT_SUCCESS)
      first = s.error;
  }
  if (first != FT_SUCCESS)
    return ftmw_fail(first);
  ftmw_ok();
  return 1;
}

int ft_request_waitany(int n, FT_Request *reqs, int *index,
                       FT_Status *status) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  int rc = check(cx, index == NULL || (n > 0 && reqs == NULL), n);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  *index = -1;
  uv_mutex_lock(&cx->st.lock);
  for (;;) {
    int live = 0;
    for (int i = 0; i < n; i++) {
      if (reqs[i] == FT_REQUEST_NULL)
        continue;
      live = 1;
      if (settled_locked(reqs[i])) {
        *index = i;
        int got = complete_locked(cx, &reqs[i], status, "ft_request_waitany");
        uv_mutex_unlock(&cx->st.lock);
        return got;
      }
    }
    if (!live)
      break;
    ftmw_wait_locked(cx, -1);
  }
  uv_mutex_unlock(&cx->st.lock);
  return null_request(status);
}

static void free_queue(ftmw_qnode *q) {
  while (!ftmw_q_empty(q)) {
    FT_Request r = req_of(ftmw_q_head(q));
    ftmw_q_remove(&r->node);
    request_free(r);
  }
}

void ftmw_isend_free_all(ftmw_ctx *cx) {
  for (int r = 1; r <= cx->job.W && ftmw_is_master(cx); r++)
    free_queue(&ftmw_app_of(cx, &cx->st.workers[r])->isends);
  free_queue(&cx->to_masters);
}
