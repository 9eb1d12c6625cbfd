/* The receiving calls: ft_recv, ft_irecv, ft_wait, ft_waitany (and
 * their ms_* forms through ftmw_recv, ftmw_irecv, ftmw_wait). With master
 * replicas, each receive is one exchange of the lock-step (replica.h).
 * Application thread only. */
#include "calls.h"
#include "match.h"
#include "inbox.h"
#include "replica.h"
#include "owned.h"
#include "term.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* --- receive -------------------------------------------------------------- */

/* A receive of m completed: traced, *status filled with its n elements.
 * Returns n. */
static int received(ftmw_ctx *cx, const ftmw_msg *m, int n, FT_Status *status) {
  ftmw_trace_data(cx, "received", m->source, m->tag, m->len);
  ftmw_set_status(status, m->source, m->tag, n, FT_SUCCESS);
  if (status)
    status->bytes = m->len;
  ftmw_fault_hit(FTMW_FAULT_RECV_EXIT);
  ftmw_ok();
  return n;
}

/* Copies m into buf and frees it unless the replica protocol keeps it
 * (st.lock not held: m is unlinked, and only this thread uses kept data). */
static int deliver(ftmw_ctx *cx, ftmw_msg *m, int kept, void *buf, size_t size,
                   FT_Status *status) {
  if (m->len)
    memcpy(buf, m->data, m->len);
  int n = received(cx, m, (int)(m->len / size), status);
  if (!kept)
    ftmw_msg_free(m);
  return n;
}

/* Hands m over to the caller in *take instead of copying it (st.lock not
 * held), or a copy of it when the replica protocol keeps it. Returns its
 * length, or -1 (FT_ERR_NOMEM: that copy could not be made). */
static int hand_over(ftmw_ctx *cx, ftmw_msg *m, int kept, ftmw_msg **take,
                     FT_Status *status) {
  ftmw_msg *h = m;
  if (kept && (h = ftmw_msg_new(m->len)) != NULL) {
    h->source = m->source;
    h->tag = m->tag;
    h->seq = m->seq;
    h->len = m->len;
    if (m->len)
      memcpy(h->data, m->data, m->len);
  }
  if (h == NULL) {
    ftmw_set_status(status, m->source, m->tag, 0, FT_ERR_NOMEM);
    ftmw_fail(FT_ERR_NOMEM);
    return -1;
  }
  *take = h;
  return received(cx, h, (int)h->len, status);
}

/* A queued message that does not fit stays queued: nothing is lost, and
 * the caller may receive it again with a larger buffer. */
static int too_big(const ftmw_msg *m, size_t bytes, size_t size,
                   FT_Status *status) {
  if (m->len > bytes) {
    ftmw_set_status(status, m->source, m->tag, (int)(m->len / size),
                    FT_ERR_TRUNCATE);
    if (status)
      status->bytes = m->len;
  }
  return m->len > bytes;
}

/* Any worker with a failure no call has reported yet (st.lock held). */
static ftmw_peer *unreported_worker_locked(ftmw_ctx *cx) {
  for (int r = 1; r <= cx->job.W; r++)
    if (ftmw_peer_is_failed(&cx->st.workers[r]) && cx->st.workers[r].unreported)
      return &cx->st.workers[r];
  return NULL;
}

/* For FT_ANY_SOURCE with nothing queued: an error if no worker can ever
 * send again (st.lock held), else FT_SUCCESS (keep waiting). A worker
 * being restored (joining) may still send. */
static int any_source_hopeless_locked(ftmw_ctx *cx, int *source) {
  int failed = 0;
  for (int r = cx->job.W; r >= 1; r--) {
    const ftmw_peer *p = &cx->st.workers[r];
    if (ftmw_peer_is_live(p) && !p->fin)
      return FT_SUCCESS;
    if (ftmw_peer_is_failed(p)) {
      failed = 1;
      *source = r;
    }
  }
  return failed ? FT_ERR_PEER_FAILED : FT_ERR_PEER_FINALIZED;
}

/* For FT_ANY_SOURCE with nothing matching queued (st.lock held): the
 * failure to report now in *rc, with its worker in c->rank (0 if none),
 * or FT_SUCCESS: wait on. Decides nothing. Returns FTMW_REP_BEGIN when
 * the exchange with worker c->rank must begin before its failure is
 * reported (ftmw_rep_choose_fn), else 0. */
static int any_source_failure_locked(ftmw_ctx *cx, const char *call,
                                     ftmw_rep_choice *c, int *rc) {
  c->rank = 0;
  *rc = FT_SUCCESS;
  ftmw_peer *u = unreported_worker_locked(cx);
  if (u == NULL) {
    *rc = any_source_hopeless_locked(cx, &c->rank);
    return 0;
  }
  c->rank = u->id;
  if (c->begun != u->id)
    return FTMW_REP_BEGIN;
  *rc = ftmw_peer_gone_locked(cx, u, call);
  return 0;
}

/* The receives posted for worker p (ft_irecv), oldest first. They
 * complete in that order: only the oldest can take a message. */
static ftmw_posts *posts_of(ftmw_ctx *cx, const ftmw_peer *p) {
  return &ftmw_app_of(cx, p)->posts;
}

/* p's oldest posted receive, or NULL. */
static ftmw_post *oldest_post(ftmw_ctx *cx, const ftmw_peer *p) {
  const ftmw_posts *q = posts_of(cx, p);
  return q->n ? &q->v[q->head] : NULL;
}

/* Whether worker w has a receive posted, and the tag of its oldest
 * (ftmw_match_posted; ctx: the context). */
static int posted(void *ctx, const ftmw_peer *w, int *tag) {
  ftmw_ctx *cx = ctx;
  const ftmw_post *q = oldest_post(cx, w);
  if (q)
    *tag = q->tag;
  return q != NULL;
}

/* What a receive waits for: a message from one source, from any worker
 * (FT_ANY_SOURCE), or for any of the posted receives (ft_waitany). */
enum { FROM_ONE, FROM_ANY, FROM_POSTED };

typedef struct {
  const char *call;
  int from;     /* FROM_* */
  ftmw_peer *p; /* FROM_ONE: the source (a worker's: the primary) */
  int tag;      /* FROM_ONE, FROM_ANY */
  void *buf;    /* FROM_ONE, FROM_ANY: the caller's buffer... */
  size_t bytes, size; /* ...its size, and its type's */
  FT_Status *status;
  uint64_t deadline; /* FROM_ANY: ftmw_now_ms() to give up at, or 0 */
  ftmw_msg **take; /* not NULL: the message is handed over here instead
                      of copied to buf (any size fits) */
  int rank; /* out: the source completed, or whose failure is reported */
  int timed_out; /* out: nothing came by the deadline (0 returned) */
} recv_want;

/* The buffer a message from worker r goes to, and its sizes. */
static void *buffer_for(ftmw_ctx *cx, const recv_want *w, int r, size_t *bytes,
                        size_t *size) {
  if (w->from != FROM_POSTED) {
    *bytes = w->bytes;
    *size = w->size;
    return w->buf;
  }
  const ftmw_post *q = oldest_post(cx, &cx->st.workers[r]);
  *size = ft_type_size(q->type);
  *bytes = (size_t)q->count * *size;
  return q->buf;
}

/* A receive with a deadline that passed with nothing to take (st.lock
 * held on entry, not on return): 0 received, no error. */
static int timed_out(ftmw_ctx *cx, recv_want *w) {
  uv_mutex_unlock(&cx->st.lock);
  w->rank = 0;
  w->timed_out = 1;
  ftmw_set_status(w->status, 0, w->tag, 0, FT_SUCCESS);
  ftmw_ok();
  return 0;
}

/* After SIGTERM (term.h), a master's receive that would wait reports it
 * instead (st.lock held on entry, not on return): with replicas, only a
 * receive from several sources, which the primary decides and the
 * replicas' same call follows; a receive from one worker there waits on,
 * as the replicas' own would. */
static int terminated(ftmw_ctx *cx, recv_want *w) {
  uv_mutex_unlock(&cx->st.lock);
  w->rank = 0;
  ftmw_set_status(w->status, 0, w->tag, 0, FT_ERR_TERMINATED);
  return ftmw_fail(FT_ERR_TERMINATED), -1;
}

/* The message w takes now, with nothing decided (ftmw_rep_recv's look):
 * from p, a worker's from its primary. */
static ftmw_msg *look(ftmw_ctx *cx, void *arg, ftmw_peer *p) {
  const recv_want *w = arg;
  if (w->from == FROM_ONE)
    return ftmw_match_peer(ftmw_is_master(cx) ? p : &cx->st.masters[0], w->tag);
  if (w->from == FROM_ANY)
    return ftmw_match_any(&cx->st.arrivals, w->tag);
  return ftmw_match_posted(&cx->st.arrivals, cx->st.workers, cx->job.W, posted,
                           cx);
}

/* Whether m fits w's buffer (ftmw_rep_recv's fits): a message handed
 * over fits whatever its size. */
static int fits(ftmw_ctx *cx, void *arg, const ftmw_msg *m) {
  const recv_want *w = arg;
  size_t bytes, size;
  buffer_for(cx, w, m->source, &bytes, &size);
  return w->take || !too_big(m, bytes, size, w->status);
}

/* Nothing w waits for is queued and no decision says which source: the
 * failure a call of this kind reports now (ftmw_rep_recv's failure). */
static int failure(ftmw_ctx *cx, void *arg, ftmw_rep_choice *c, int *rc) {
  const recv_want *w = arg;
  c->kind = 0;
  if (w->from == FROM_ANY) {
    if (any_source_failure_locked(cx, w->call, c, rc) == FTMW_REP_BEGIN)
      return FTMW_REP_BEGIN;
    if (*rc == FT_ERR_PEER_FAILED) /* replicas report it too */
      c->kind = FTMW_DECIDE_RECV;
    return 0;
  }
  *rc = FT_SUCCESS;
  for (int r = 1; r <= cx->job.W; r++) { /* FROM_POSTED */
    ftmw_peer *p = &cx->st.workers[r];
    if (!posts_of(cx, p)->n)
      continue;
    c->rank = r;
    if (ftmw_peer_gone(p) && c->begun != r) /* a failure or end to report */
      return FTMW_REP_BEGIN;
    if ((*rc = ftmw_peer_gone_locked(cx, p, w->call)) != FT_SUCCESS) {
      c->kind = FTMW_DECIDE_RECV;
      return 0;
    }
  }
  c->rank = 0;
  return 0;
}

/* The one receive completion, behind ft_recv, ft_wait and ft_waitany
 * (st.lock held on entry, not on return): one exchange of the replicas'
 * lock-step, run by ftmw_rep_recv_call, then the message delivered or
 * the outcome reported. Returns the count received, or -1 with the error
 * set; w->rank says which source. */
static int complete(ftmw_ctx *cx, recv_want *w) {
  int master = ftmw_is_master(cx);
  ftmw_rep_recv r = {
      .call = w->call,
      .kind = w->from == FROM_ONE ? 0
              : w->deadline
                  ? FTMW_DECIDE_OR(FTMW_DECIDE_RECV, FTMW_DECIDE_TIMEOUT)
                  : FTMW_DECIDE_RECV,
      .p = w->p,
      .deadline = w->deadline,
      .stop_on_term = master && (w->from != FROM_ONE || cx->job.M == 0),
      .begin_first = w->from != FROM_POSTED,
      .arg = w,
      .look = look,
      .fits = fits,
      .failure = failure};
  ftmw_rep_received got;
  ftmw_rep_recv_call(cx, &r, &got);
  w->rank = got.rank;
  switch (got.how) {
  case FTMW_RECV_TAKEN: {
    size_t bytes, size;
    void *buf = buffer_for(cx, w, got.m->source, &bytes, &size);
    uv_mutex_unlock(&cx->st.lock);
    return w->take ? hand_over(cx, got.m, got.kept, w->take, w->status)
                   : deliver(cx, got.m, got.kept, buf, size, w->status);
  }
  case FTMW_RECV_TRUNCATED:
    uv_mutex_unlock(&cx->st.lock);
    ftmw_fail(FT_ERR_TRUNCATE);
    return -1;
  case FTMW_RECV_TERMINATED: return terminated(cx, w);
  case FTMW_RECV_TIMED_OUT: return timed_out(cx, w);
  default: /* FTMW_RECV_FAILED */
    uv_mutex_unlock(&cx->st.lock);
    ftmw_set_status(w->status, w->rank, w->tag, 0, got.rc);
    ftmw_fail(got.rc);
    /* A result the program waited for will not come (FT_ERRORS). */
    if (got.rc == FT_ERR_PEER_FAILED && master && w->rank >= 1)
      ftmw_told_by_recv(cx, &cx->st.workers[w->rank], w->from == FROM_ANY);
    return -1;
  }
}

/* Runs receive w from source (FT_ANY_SOURCE or a rank), its arguments
 * checked; *timed (if not NULL): it timed out. Returns what it received,
 * or 0 (the error set). */
static int recv_from(ftmw_ctx *cx, recv_want *w, int source, int *timed) {
  if (ftmw_source_peer(cx, source, &w->p) != FT_SUCCESS) {
    ftmw_set_status(w->status, source, w->tag, 0, FT_ERR_RANK);
    return 0;
  }
  if (w->p)
    w->from = FROM_ONE;
  ftmw_fault_hit(FTMW_FAULT_RECV_ENTER);
  uv_mutex_lock(&cx->st.lock);
  int n = complete(cx, w);
  if (timed)
    *timed = w->timed_out;
  return n < 0 ? 0 : n;
}

/* A receive's deadline, ms from now (ms < 0: none, 0). */
static uint64_t deadline_in(int64_t ms) {
  if (ms < 0)
    return 0;
  /* 0 would mean no deadline: a receive due now still looks once. */
  uint64_t deadline = ftmw_now_ms() + (uint64_t)ms;
  return deadline ? deadline : 1;
}

int ftmw_recv(ftmw_ctx *cx, const char *call, void *buf, int count,
              FT_Datatype type, int source, int tag, FT_Status *status) {
  ftmw_set_status(status, source, tag, 0, FT_SUCCESS);
  if (!cx->st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED);
  size_t bytes;
  int rc = ftmw_check_buffer(cx, buf, count, type, &bytes);
  if (rc == FT_SUCCESS && tag < 0 && tag != FT_ANY_TAG)
    rc = FT_ERR_TAG;
  if (rc != FT_SUCCESS) {
    ftmw_set_status(status, source, tag, 0, rc);
    return ftmw_fail(rc);
  }
  recv_want w = {.call = call, .from = FROM_ANY, .tag = tag, .buf = buf,
                 .bytes = bytes, .size = ft_type_size(type),
                 .status = status};
  return recv_from(cx, &w, source, NULL);
}

int ftmw_recv_owned(int source, int tag, int64_t ms, ftmw_msg **m,
                    FT_Status *status, int *timed_out) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  *m = NULL;
  *timed_out = 0;
  ftmw_set_status(status, source, tag, 0, FT_SUCCESS);
  int rc = !cx->st.initialized            ? FT_ERR_NOT_INITIALIZED
           : tag < 0 && tag != FT_ANY_TAG ? FT_ERR_TAG
           : ms >= 0 && (source != FT_ANY_SOURCE || !ftmw_is_master(cx))
               ? FT_ERR_ROLE
               : FT_SUCCESS;
  if (rc != FT_SUCCESS) {
    ftmw_set_status(status, source, tag, 0, rc);
    return ftmw_fail(rc);
  }
  recv_want w = {.call = "ft_recv", .from = FROM_ANY, .tag = tag,
                 .size = 1, .status = status, .deadline = deadline_in(ms),
                 .take = m};
  recv_from(cx, &w, source, timed_out);
  return *m != NULL;
}

/* A receive the application makes: its tag may not be the library's. */
static int app_recv(ftmw_ctx *cx, const char *call, void *buf, int count,
                    FT_Datatype type, int source, int tag, FT_Status *status) {
  if (ftmw_check_tag(tag, 1) != FT_SUCCESS) {
    ftmw_set_status(status, source, tag, 0, FT_ERR_TAG);
    return ftmw_fail(FT_ERR_TAG);
  }
  return ftmw_recv(cx, call, buf, count, type, source, tag, status);
}

int ft_recv(void *buf, int count, FT_Datatype type, int source, int tag,
            FT_Status *status) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return app_recv(cx, "ft_recv", buf, count, type, source, tag, status);
}

int ft_rcv(void *buf, int count, FT_Datatype type, int source, int tag,
           FT_Status *status) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return app_recv(cx, "ft_rcv", buf, count, type, source, tag, status);
}

/* --- probes ------------------------------------------------------------------ */

/* A PROBE decision's value: the message's tag and size. */
#define PROBE_BYTES_BITS 33 /* up to FTMW_MAX_MESSAGE, 4 GiB, included */
static uint64_t probe_value(const ftmw_msg *m) {
  return (uint64_t)(uint32_t)m->tag << PROBE_BYTES_BITS | m->len;
}

/* ft_probe (block) and ft_iprobe: complete()'s search for a message,
 * which it leaves queued, and its failure reports. With master replicas
 * the outcome is the primary's decision (PROBE: a message found, with its
 * tag and size; PROBED: none yet, or the error reported), and a replica
 * returns it without looking: the message may not have reached it yet,
 * and the receive that follows waits for it (or asks the primary's
 * verdict if its sender dies first). */
typedef struct {
  const char *call;
  ftmw_peer *p; /* the source, or NULL (FT_ANY_SOURCE) */
  int tag, block;
  int pass;  /* looks made */
  int asked; /* the worker whose exchange it asked to begin, or 0 */
} probe_want;

/* The probe's choice where this master decides (ftmw_rep_choose_fn). */
static int probe_choose(ftmw_ctx *cx, void *arg, ftmw_rep_choice *c) {
  probe_want *q = arg;
  int master = ftmw_is_master(cx);
  if (q->asked && !c->begun) /* the protocol waited: a new look */
    q->pass++;
  q->asked = 0;
  for (;; q->pass++) {
    if (!master)
      q->p = ftmw_peer_of(cx, 0); /* the primary may change while we wait */
    ftmw_peer *p = q->p;
    ftmw_msg *m = p ? ftmw_match_peer(master ? p : &cx->st.masters[0], q->tag)
                    : ftmw_match_any(&cx->st.arrivals, q->tag);
    if (m != NULL) {
      c->kind = FTMW_DECIDE_PROBE;
      c->rank = m->source;
      c->value = probe_value(m);
      return 0;
    }
    int rc = FT_SUCCESS;
    c->rank = p && master ? p->id : 0;
    /* After SIGTERM a master's probe that would wait reports it before
     * any failure, as complete() does (term.h): a decision like any
     * probe's, whatever its source. */
    if (q->block && master && ftmw_term_requested())
      rc = FT_ERR_TERMINATED;
    else if (p == NULL) {
      if (any_source_failure_locked(cx, q->call, c, &rc) == FTMW_REP_BEGIN)
        return q->asked = c->rank, FTMW_REP_BEGIN;
    } else if (master && !ftmw_peer_is_up(p) && c->begun != p->id)
      return q->asked = c->rank, FTMW_REP_BEGIN;
    else
      rc = ftmw_peer_gone_locked(cx, p, q->call);
    if (rc != FT_SUCCESS || (!q->block && q->pass > 0)) {
      c->kind = FTMW_DECIDE_PROBED;
      c->value = (uint64_t)rc;
      return 0;
    }
    /* ft_iprobe lets the I/O run once before it says "none". */
    ftmw_wait_locked(cx, q->block ? -1 : 0);
    c->begun = 0; /* begun before the wait: begun again after it */
  }
}

/* The probe's outcome (st.lock held): the decision's kind, its rank and
 * value in *rank and *v. */
static int probe_locked(ftmw_ctx *cx, const char *call, ftmw_peer *p, int tag,
                        int block, int *rank, uint64_t *v) {
  probe_want q = {.call = call, .p = p, .tag = tag, .block = block};
  ftmw_rep_choice c;
  ftmw_rep_decided(cx, FTMW_DECIDE_OR(FTMW_DECIDE_PROBE, FTMW_DECIDE_PROBED),
                   p && ftmw_is_master(cx) ? p->id : -1, probe_choose, &q, &c);
  if (c.followed && c.kind == FTMW_DECIDE_PROBED && c.value != FT_SUCCESS &&
      c.value != (uint64_t)FT_ERR_TERMINATED && c.rank >= 1)
    ftmw_decided_gone_locked(cx, &cx->st.workers[c.rank], call); /* here too */
  *rank = c.rank;
  *v = c.value;
  return c.kind;
}

static int probe(ftmw_ctx *cx, const char *call, int source, int tag, int block,
                 int *flag, FT_Status *status) {
  if (flag)
    *flag = 0;
  int rc =
      !cx->st.initialized ? FT_ERR_NOT_INITIALIZED : ftmw_check_tag(tag, 1);
  if (rc == FT_SUCCESS && !block && flag == NULL)
    rc = FT_ERR_NULL_ARG;
  ftmw_set_status(status, source, tag, 0, rc);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  ftmw_peer *p;
  if (ftmw_source_peer(cx, source, &p) != FT_SUCCESS) {
    ftmw_set_status(status, source, tag, 0, FT_ERR_RANK);
    return 0;
  }
  int rank;
  uint64_t v;
  uv_mutex_lock(&cx->st.lock);
  int kind = probe_locked(cx, call, p, tag, block, &rank, &v);
  uv_mutex_unlock(&cx->st.lock);
  if (kind == FTMW_DECIDE_PROBE) {
    size_t bytes = (size_t)(v & ((UINT64_C(1) << PROBE_BYTES_BITS) - 1));
    ftmw_set_status(status, rank, (int)(v >> PROBE_BYTES_BITS),
                    bytes > INT_MAX ? INT_MAX : (int)bytes, FT_SUCCESS);
    if (status)
      status->bytes = bytes;
    if (flag)
      *flag = 1;
  } else if (v != FT_SUCCESS) {
    ftmw_set_status(status, rank, tag, 0, (int)v);
    return ftmw_fail((int)v);
  }
  ftmw_ok();
  return 1;
}

int ft_probe(int source, int tag, FT_Status *status) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return probe(cx, "ft_probe", source, tag, 1, NULL, status);
}

int ft_iprobe(int source, int tag, int *flag, FT_Status *status) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return probe(cx, "ft_iprobe", source, tag, 0, flag, status);
}

int ft_get_count(const FT_Status *status, FT_Datatype type) {
  size_t size = ft_type_size(type);
  if (status == NULL || size == 0)
    return ftmw_fail(status ? FT_ERR_TYPE : FT_ERR_NULL_ARG), -1;
  ftmw_ok();
  if (status->bytes % size != 0 || status->bytes / size > INT_MAX)
    return FT_UNDEFINED;
  return (int)(status->bytes / size);
}

/* --- posted receives ------------------------------------------------------- */

/* Appends post to p's posted receives: FT_SUCCESS, or FT_ERR_NOMEM. */
static int post_push(ftmw_ctx *cx, ftmw_peer *p, const ftmw_post *post) {
  ftmw_posts *q = posts_of(cx, p);
  if (q->n == q->cap) { /* grow, unrolling the ring */
    int cap = q->cap ? 2 * q->cap : 4;
    ftmw_post *v = malloc((size_t)cap * sizeof(*v));
    if (v == NULL)
      return FT_ERR_NOMEM;
    for (int i = 0; i < q->n; i++)
      v[i] = q->v[(q->head + i) % q->cap];
    free(q->v);
    *q = (ftmw_posts){.v = v, .cap = cap, .head = 0, .n = q->n};
  }
  q->v[(q->head + q->n) % q->cap] = *post;
  q->n++;
  return FT_SUCCESS;
}

/* p's oldest posted receive completed (error FT_SUCCESS) or failed for
 * good; a failure, once reported, cancels every receive posted for p. The
 * ms_* log learns the outcome of an ms_irecv among them. */
static void post_done(ftmw_ctx *cx, ftmw_peer *p, int error) {
  ftmw_posts *q = posts_of(cx, p);
  do {
    if (q->v[q->head].logged)
      ftmw_mslog_posted_done(&ftmw_app_of(cx, p)->log, error == FT_SUCCESS);
    q->head = (q->head + 1) % q->cap;
    q->n--;
  } while (error != FT_SUCCESS && q->n > 0);
}

/* ft_irecv's choice where this master decides: whether p's data is
 * queued, or the failure or end to report (ftmw_rep_choose_fn). */
typedef struct {
  const char *call;
  ftmw_peer *p;
  int tag;
} post_want;

static int post_choose(ftmw_ctx *cx, void *arg, ftmw_rep_choice *c) {
  const post_want *w = arg;
  c->rank = w->p->id;
  c->value = (uint64_t)(ftmw_match_peer(w->p, w->tag)
                            ? FT_SUCCESS
                            : ftmw_peer_gone_locked(cx, w->p, w->call));
  return 0;
}

int ftmw_irecv(ftmw_ctx *cx, const char *call, int logged, void *buf, int count,
               FT_Datatype type, int source, int tag) {
  ftmw_peer *p = ftmw_master_peer(cx, source);
  if (p == NULL)
    return 0;
  size_t bytes;
  int rc = ftmw_check_buffer(cx, buf, count, type, &bytes);
  if (rc == FT_SUCCESS)
    rc = ftmw_check_tag(tag, 1);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  /* The log replays one posted receive: an ms_irecv comes alone. */
  if (logged && posts_of(cx, p)->n)
    return ftmw_fail(FT_ERR_ALREADY_POSTED);
  ftmw_post post = {.buf = buf, .count = count, .type = type, .tag = tag,
                    .logged = logged};
  if (post_push(cx, p, &post) != FT_SUCCESS)
    return ftmw_fail(FT_ERR_NOMEM);
  /* A sender that has finished or died may still have its data queued.
   * Whether this call reports the failure is the primary's decision. */
  post_want pw = {call, p, tag};
  ftmw_rep_choice c;
  uv_mutex_lock(&cx->st.lock);
  ftmw_rep_decided(cx, FTMW_DECIDE_POST, source, post_choose, &pw, &c);
  rc = (int)c.value;
  if (c.followed && rc == FT_ERR_PEER_FAILED) /* reported here too, traced */
    ftmw_decided_gone_locked(cx, p, call);
  uv_mutex_unlock(&cx->st.lock);
  if (rc != FT_SUCCESS) {
    /* Reported: nothing posted for p can complete any more. */
    if (--posts_of(cx, p)->n > 0)
      post_done(cx, p, rc);
    return ftmw_fail(rc);
  }
  ftmw_ok();
  return 1;
}

int ft_irecv(void *buf, int count, FT_Datatype type, int source, int tag) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return ftmw_irecv(cx, "ft_irecv", 0, buf, count, type, source, tag);
}

int ftmw_wait(ftmw_ctx *cx, const char *call, int rank) {
  ftmw_peer *p = ftmw_master_peer(cx, rank);
  if (p == NULL)
    return 0;
  const ftmw_post *q = oldest_post(cx, p);
  if (q == NULL)
    return ftmw_fail(FT_ERR_NOT_POSTED);
  int n = ftmw_recv(cx, call, q->buf, q->count, q->type, rank, q->tag, NULL);
  int error = ftmw_last_error();
  if (error != FT_ERR_TRUNCATE && error != FT_ERR_TERMINATED) /* it stays */
    post_done(cx, p, error);
  return n;
}

int ft_wait(int rank) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  return ftmw_wait(cx, "ft_wait", rank);
}

int ft_waitany(int *rank) {
  ftmw_ctx *cx = &ftmw_default_ctx;
  if (rank == NULL)
    return ftmw_fail(FT_ERR_NULL_ARG), -1;
  *rank = 0;
  if (!cx->st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED), -1;
  if (!ftmw_is_master(cx))
    return ftmw_fail(FT_ERR_ROLE), -1;
  int posted = 0;
  for (int r = 1; r <= cx->job.W && !posted; r++)
    posted = posts_of(cx, &cx->st.workers[r])->n > 0;
  if (!posted)
    return ftmw_fail(FT_ERR_NONE_POSTED), -1;
  recv_want w = {.call = "ft_waitany", .from = FROM_POSTED};
  uv_mutex_lock(&cx->st.lock);
  int n = complete(cx, &w);
  int error = ftmw_last_error();
  *rank = w.rank;
  if (w.rank >= 1 && error != FT_ERR_TRUNCATE)
    post_done(cx, &cx->st.workers[w.rank], error);
  return n < 0 ? -1 : w.rank;
}
