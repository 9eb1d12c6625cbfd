/* The public ft_* calls: argument checks, then the data path into the
 * transport and the matching queues. Application thread only. */
#include "ftmw_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define st ftmw_st

static int is_master(void) { return st.role == FTMW_ROLE_MASTER; }

/* The peer a call names: a worker rank from a master, rank 0 (the primary
 * master) from a worker. NULL, with the error set, for a bad rank. */
static ftmw_peer *peer_of(int rank) {
  if (is_master()) {
    if (rank >= 1 && rank <= st.W)
      return &st.workers[rank];
  } else if (rank == 0) {
    /* Written by the loop under st.lock; read here also without it, to
     * check a rank: a call that goes on reads it again under the lock. */
    return &st.masters[__atomic_load_n(&st.primary, __ATOMIC_RELAXED)];
  }
  ftmw_fail(FT_ERR_RANK);
  return NULL;
}

/* For the master-only calls that name one worker: the worker's peer, or
 * NULL with the error set (not initialized, not a master, bad rank). */
ftmw_peer *ftmw_master_peer(int rank) {
  if (!st.initialized)
    ftmw_fail(FT_ERR_NOT_INITIALIZED);
  else if (!is_master())
    ftmw_fail(FT_ERR_ROLE);
  else
    return peer_of(rank);
  return NULL;
}

/* Checks a buffer description; returns its size in bytes via *bytes. */
int ftmw_check_buffer(const void *buf, int count, FT_Datatype type,
                      size_t *bytes) {
  size_t size = ft_type_size(type);
  if (size == 0)
    return FT_ERR_TYPE;
  if (count < 0)
    return FT_ERR_COUNT;
  if (buf == NULL && count > 0)
    return FT_ERR_BUFFER;
  *bytes = (size_t)count * size;
  if (*bytes > st.cfg.max_message)
    return FT_ERR_TOO_BIG;
  return FT_SUCCESS;
}

/* Reports p's failure from the API call named call (st.lock held): clears
 * p's pending report and traces the call's name, so that a test can check
 * which call heard of a failure. Returns the error. */
static int report_failure_locked(ftmw_peer *p, const char *call) {
  p->unreported = 0;
  ftmw_trace("failure_reported",
             "\"peer\":\"%s %d\",\"call\":\"%s\",\"latency_ms\":%.3f",
             ftmw_role_name(p->kind), p->id, call,
             (uv_hrtime() - p->failed_at) / 1e6);
  return p->kind == FTMW_ROLE_MASTER ? FT_ERR_NO_MASTER : FT_ERR_PEER_FAILED;
}

/* The error the API call named call reports when p, which it names,
 * cannot take part any more (st.lock held), or FT_SUCCESS. */
static int peer_gone_locked(ftmw_peer *p, const char *call) {
  if (ftmw_peer_is_failed(p))
    return report_failure_locked(p, call);
  if (p->state == FTMW_PEER_FINISHED || p->fin)
    return FT_ERR_PEER_FINALIZED;
  return FT_SUCCESS;
}

/* A replica told by the primary that worker p failed waits until it sees
 * it too (it will: the worker is gone), or sees p replaced by the
 * incarnation the primary's next ft_restore made, so that the calls that
 * follow agree. */
static void await_gone_locked(ftmw_peer *p) {
  while (ftmw_peer_is_up(p) && !p->fin && p->epoch == p->app_epoch)
    ftmw_wait_locked(-1);
}

/* A replica's call reports the failure (or end) of p that the primary's
 * same call reported. */
static int decided_gone_locked(ftmw_peer *p, const char *call) {
  await_gone_locked(p);
  int rc = peer_gone_locked(p, call);
  return rc != FT_SUCCESS ? rc : report_failure_locked(p, call);
}

/* With FT_TRACE_DATA=N, every Nth data message this process sends or
 * receives is traced (application thread only). */
static void trace_data(const char *event, int peer, int tag, size_t bytes) {
  static unsigned long count;
  if (st.cfg.trace_data > 0 && ftmw_trace_enabled() &&
      ++count % (unsigned long)st.cfg.trace_data == 0)
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
  }
}

/* --- init and finalize ---------------------------------------------------- */

int ft_init(int *argc, char ***argv, int *rank, int *workers) {
  if (st.initialized) {
    ftmw_fail(FT_ERR_ALREADY_INITIALIZED);
    return -1;
  }
  if (rank == NULL || workers == NULL) {
    ftmw_fail(FT_ERR_NULL_ARG);
    return -1;
  }
  uv_mutex_init(&st.lock);
  ftmw_q_init(&st.submit);
  ftmw_q_init(&st.arrivals);
  ftmw_q_init(&st.decisions);
  int rc = ftmw_launch_init(argc, argv);
  if (rc < 0) {
    ftmw_fail(FT_ERR_ENV);
    return -1;
  }
  st.initialized = 1;
  *rank = is_master() ? 0 : st.id;
  *workers = st.W;
  ftmw_ok();
  return rc;
}

/* Sends a frame without ACK to every live peer in v[from..to] and waits
 * until each is written (st.lock held). */
static void broadcast_locked(ftmw_peer *v, int from, int to, int type,
                             unsigned flags) {
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
    ftmw_op_frame(&ops[i], p, type, 0, flags, NULL, 0);
    ftmw_transport_submit(&ops[i], 1);
  }
  for (int i = 0; i < n; i++)
    if (ops[i].kind)
      ftmw_op_wait_locked(&ops[i]);
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

static void free_all(void) {
  uv_mutex_lock(&st.lock);
  for (int r = 0; r <= st.W; r++) {
    ftmw_match_drop(&st.workers[r]);
    ftmw_mslog_clear(&st.workers[r].log);
    ftmw_msg_free(st.workers[r].kept);
  }
  while (!ftmw_q_empty(&st.decisions)) {
    ftmw_qnode *n = ftmw_q_head(&st.decisions);
    ftmw_q_remove(n);
    free(FTMW_CONTAINER_OF(n, ftmw_decision, node));
  }
  for (int k = 0; k <= st.M; k++)
    ftmw_match_drop(&st.masters[k]);
  uv_mutex_unlock(&st.lock);
  free(st.workers);
  free(st.masters);
  free(st.spares);
  ftmw_msg_release_cache();
  ftmw_hosts_free(&st.hosts);
  st.workers = st.masters = st.spares = NULL;
}

int ft_finalize(void) {
  if (!st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED);
  if (st.M > 0 && is_master()) { /* what ft_is_primary guarded is done */
    uv_mutex_lock(&st.lock);
    ftmw_rep_serve();
    uv_mutex_unlock(&st.lock);
  }
  /* What the program printed is out before the shutdown, which may wait
   * for seconds and end in a fence's _exit (a pipe's stdout is buffered
   * until exit): a process that dies from here on has printed. */
  fflush(stdout);
  fflush(stderr);
  ftmw_fault_hit(FTMW_FAULT_FINALIZE);
  ftmw_trace("finalize", NULL);
  int clean = 0;
  uv_mutex_lock(&st.lock);
  st.finalizing = 1;
  if (is_master()) {
    /* FIN: no more data from us. A replica also tells every master, so
     * that whichever is primary at the end knows, and waits for the
     * primary's BYE, unless it becomes primary meanwhile. */
    broadcast_locked(st.workers, 1, st.W, FTMW_FRAME_FIN, 0);
    broadcast_locked(st.spares, 0, st.S - 1, FTMW_FRAME_FIN, 0);
    if (st.id != st.primary)
      broadcast_locked(st.masters, 0, st.M, FTMW_FRAME_FIN, 0);
    while (st.id != st.primary && !st.masters[st.primary].bye)
      ftmw_wait_locked(-1);
    ftmw_rep_serve(); /* it may have become primary meanwhile */
    if (st.id != st.primary) {
      clean = st.masters[st.primary].bye_clean;
    } else {
      /* The primary waits for each live worker's and replica's FIN (one
       * that dies meanwhile is skipped); then BYE tells them whether every
       * process is known to reach MPI_Finalize. */
      while (!finished_locked(st.workers, 1, st.W) ||
             !finished_locked(st.masters, 0, st.M))
        ftmw_wait_locked(-1);
      clean = !st.failure_seen;
      st.bye_sent = 1;
      unsigned flags = clean ? FTMW_FLAG_CLEAN : 0;
      broadcast_locked(st.workers, 1, st.W, FTMW_FRAME_BYE, flags);
      broadcast_locked(st.spares, 0, st.S - 1, FTMW_FRAME_BYE, flags);
      broadcast_locked(st.masters, 0, st.M, FTMW_FRAME_BYE, flags);
    }
  } else {
    /* A worker or spare: FIN to every master, then the BYE of whichever
     * is primary (or every master is gone). */
    broadcast_locked(st.masters, 0, st.M, FTMW_FRAME_FIN, 0);
    ftmw_peer *m = &st.masters[st.primary];
    while (ftmw_peer_is_up(m) && !m->bye) {
      ftmw_wait_locked(-1);
      m = &st.masters[st.primary];
    }
    clean = m->bye && m->bye_clean;
  }
  uv_mutex_unlock(&st.lock);
  ftmw_transport_stop();
  ftmw_trace_close();
  free_all();
  st.initialized = 0;
  ftmw_launch_finalize(clean);
  ftmw_ok();
  return 1;
}

/* --- send ----------------------------------------------------------------- */

/* Sends DATA number seq to p and waits for its ACK (st.lock held); the
 * master that acknowledged goes to *acker. A worker whose primary dies
 * first sends it again to the master that takes over (which drops it if
 * it already had it). Returns FT_SUCCESS or the error to report. */
static int send_data_locked(const char *call, ftmw_peer *p, uint64_t seq,
                            int tag, const void *buf, size_t bytes,
                            int *acker) {
  for (;;) {
    ftmw_op op = {.out = {.seq = seq, .want_ack = 1}};
    ftmw_op_frame(&op, p, FTMW_FRAME_DATA, tag, 0, buf, bytes);
    ftmw_transport_submit(&op, 1);
    if (ftmw_op_wait_locked(&op) == FT_SUCCESS) {
      if (acker)
        *acker = p->id;
      return FT_SUCCESS;
    }
    if (!is_master()) {
      while (ftmw_peer_is_up(p)) /* a failed write comes first */
        ftmw_wait_locked(-1);
      ftmw_peer *next = peer_of(0);
      if (next != p && ftmw_peer_is_up(next)) {
        p = next;
        continue;
      }
    }
    int rc = peer_gone_locked(p, call);
    return rc != FT_SUCCESS ? rc : FT_ERR_PEER_FAILED;
  }
}

int ftmw_send(const char *call, const void *buf, int count, FT_Datatype type,
              int dest, int tag) {
  if (!st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED);
  size_t bytes;
  int rc = ftmw_check_buffer(buf, count, type, &bytes);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  if (tag < 0)
    return ftmw_fail(FT_ERR_TAG);
  ftmw_peer *p = peer_of(dest);
  if (p == NULL)
    return 0;
  ftmw_fault_hit(FTMW_FAULT_SEND_ENTER);
  uv_mutex_lock(&st.lock);
  if (is_master()) {
    /* Every master numbers its sends to p alike, sent or not: a replica
     * waits for the worker's ACKED of the same number. */
    uint64_t seq = ++p->next_seq;
    rc = FTMW_REP_SEND_SELF;
    if (ftmw_is_replica()) {
      /* Only the primary sends; a replica waits for the worker's word, and
       * if the worker dies, for the primary's verdict on the same call. */
      rc = ftmw_rep_send(p, seq);
      if (rc == FT_ERR_PEER_FAILED)
        rc = ftmw_rep_verdict(p) ? FT_SUCCESS : peer_gone_locked(p, call);
    }
    if (rc == FTMW_REP_SEND_SELF) {
      ftmw_rep_before(p); /* also before reporting p's failure */
      rc = peer_gone_locked(p, call);
      if (rc == FT_SUCCESS)
        rc = send_data_locked(call, p, seq, tag, buf, bytes, NULL);
    }
    if (rc == FT_SUCCESS)
      ftmw_rep_after(p, NULL);
    else if (rc == FT_ERR_PEER_FAILED)
      ftmw_rep_failed(p);
  } else {
    int acker;
    uint64_t seq = ++st.tx_seq;
    p = peer_of(0); /* the primary, now that the lock is held */
    rc = peer_gone_locked(p, call);
    if (rc == FT_SUCCESS)
      rc = send_data_locked(call, p, seq, tag, buf, bytes, &acker);
    if (rc == FT_SUCCESS)
      ftmw_rep_copy(acker, tag, seq, buf, bytes);
  }
  uv_mutex_unlock(&st.lock);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  trace_data("sent", dest, tag, bytes);
  ftmw_fault_hit(FTMW_FAULT_SEND_EXIT);
  ftmw_ok();
  return count;
}

int ft_send(const void *buf, int count, FT_Datatype type, int dest, int tag) {
  return ftmw_send("ft_send", buf, count, type, dest, tag);
}

/* --- receive -------------------------------------------------------------- */

/* Copies m into buf and frees it unless the replica protocol keeps it
 * (st.lock not held: m is unlinked, and only this thread uses kept data). */
static int deliver(ftmw_msg *m, int kept, void *buf, size_t size,
                   FT_Status *status) {
  int n = (int)(m->len / size);
  if (m->len)
    memcpy(buf, m->data, m->len);
  trace_data("received", m->source, m->tag, m->len);
  ftmw_set_status(status, m->source, m->tag, n, FT_SUCCESS);
  if (!kept)
    ftmw_msg_free(m);
  ftmw_fault_hit(FTMW_FAULT_RECV_EXIT);
  ftmw_ok();
  return n;
}

/* A queued message that does not fit stays queued: nothing is lost, and
 * the caller may receive it again with a larger buffer. */
static int too_big(const ftmw_msg *m, size_t bytes, size_t size,
                   FT_Status *status) {
  ftmw_set_status(status, m->source, m->tag, (int)(m->len / size),
                  FT_ERR_TRUNCATE);
  return m->len > bytes;
}

/* Any worker with a failure no call has reported yet (st.lock held). */
static ftmw_peer *unreported_worker_locked(void) {
  for (int r = 1; r <= st.W; r++)
    if (ftmw_peer_is_failed(&st.workers[r]) && st.workers[r].unreported)
      return &st.workers[r];
  return NULL;
}

/* For FT_ANY_SOURCE with nothing queued: an error if no worker can ever
 * send again (st.lock held), else FT_SUCCESS (keep waiting). */
static int any_source_hopeless_locked(int *source) {
  int failed = 0;
  for (int r = st.W; r >= 1; r--) {
    const ftmw_peer *p = &st.workers[r];
    if (ftmw_peer_is_up(p) && !p->fin)
      return FT_SUCCESS;
    if (ftmw_peer_is_failed(p)) {
      failed = 1;
      *source = r;
    }
  }
  return failed ? FT_ERR_PEER_FAILED : FT_ERR_PEER_FINALIZED;
}

int ftmw_recv(const char *call, void *buf, int count, FT_Datatype type,
              int source, int tag, FT_Status *status) {
  ftmw_set_status(status, source, tag, 0, FT_SUCCESS);
  if (!st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED);
  size_t bytes;
  int rc = ftmw_check_buffer(buf, count, type, &bytes);
  if (rc == FT_SUCCESS && tag < 0 && tag != FT_ANY_TAG)
    rc = FT_ERR_TAG;
  if (rc != FT_SUCCESS) {
    ftmw_set_status(status, source, tag, 0, rc);
    return ftmw_fail(rc);
  }
  size_t size = ft_type_size(type);
  ftmw_peer *p = NULL;
  if (source != FT_ANY_SOURCE || !is_master()) {
    p = peer_of(source == FT_ANY_SOURCE ? 0 : source);
    if (p == NULL) {
      ftmw_set_status(status, source, tag, 0, FT_ERR_RANK);
      return 0;
    }
  }
  ftmw_fault_hit(FTMW_FAULT_RECV_ENTER);
  uv_mutex_lock(&st.lock);
  /* A replica takes the message the primary's FT_ANY_SOURCE receive took,
   * or reports the failure it reported. */
  int decided = 0, decided_rank = 0, verdict_asked = 0;
  uint64_t decided_seq = 0;
  if (p == NULL &&
      ftmw_rep_follow(FTMW_DECIDE_RECV, -1, &decided_rank, &decided_seq)) {
    decided = 1;
    p = &st.workers[decided_rank];
  }
  if (p && is_master())
    ftmw_rep_before(p);
  for (;;) {
    if (!is_master())
      p = peer_of(0); /* the primary may change while we wait */
    ftmw_msg *m = decided ? (decided_seq ? ftmw_match_seq(p, decided_seq) : NULL)
                  : p     ? ftmw_match_peer(is_master() ? p : &st.masters[0], tag)
                          : ftmw_match_any(&st.arrivals, tag);
    /* FT_ANY_SOURCE in the primary: an exchange with m's sender. */
    if (m != NULL && p == NULL && ftmw_rep_before(&st.workers[m->source]))
      continue;
    if (m != NULL) {
      if (too_big(m, bytes, size, status)) {
        if (decided) /* the retry with a larger buffer takes it */
          ftmw_rep_unfollow(FTMW_DECIDE_RECV, decided_rank, decided_seq);
        uv_mutex_unlock(&st.lock);
        return ftmw_fail(FT_ERR_TRUNCATE);
      }
      ftmw_match_take(m);
      int kept = 0;
      if (is_master()) {
        if (source == FT_ANY_SOURCE && !decided)
          ftmw_rep_decide(FTMW_DECIDE_RECV, m->source, m->seq);
        kept = ftmw_rep_after(&st.workers[m->source], m);
      }
      uv_mutex_unlock(&st.lock);
      return deliver(m, kept, buf, size, status);
    }
    if (decided && decided_seq != 0 && ftmw_peer_is_up(p)) {
      ftmw_wait_locked(-1); /* the copy is on its way */
      continue;
    }
    /* A master whose worker died before its copy came: the primary's
     * verdict says whether this call succeeded there (then its data is
     * queued here now) or reports the failure. */
    if (p && is_master() && ftmw_peer_is_failed(p) && !verdict_asked &&
        (!decided || decided_seq != 0)) {
      verdict_asked = 1;
      if (ftmw_rep_verdict(p))
        continue;
    }
    int failed_rank = p ? p->id : 0;
    if (p && decided && decided_seq == 0)
      rc = decided_gone_locked(p, call);
    else if (p)
      rc = peer_gone_locked(p, call);
    else {
      ftmw_peer *u = unreported_worker_locked();
      if (u && ftmw_rep_before(u))
        continue;
      if (u) {
        failed_rank = u->id;
        rc = peer_gone_locked(u, call);
      } else
        rc = any_source_hopeless_locked(&failed_rank);
      if (rc == FT_ERR_PEER_FAILED) /* replicas report it too */
        ftmw_rep_decide(FTMW_DECIDE_RECV, failed_rank, 0);
    }
    if (rc != FT_SUCCESS) {
      if (p && is_master() && rc == FT_ERR_PEER_FAILED &&
          (!decided || decided_seq != 0))
        ftmw_rep_failed(p);
      uv_mutex_unlock(&st.lock);
      ftmw_set_status(status, failed_rank, tag, 0, rc);
      return ftmw_fail(rc);
    }
    ftmw_wait_locked(-1);
  }
}

int ft_recv(void *buf, int count, FT_Datatype type, int source, int tag,
            FT_Status *status) {
  return ftmw_recv("ft_recv", buf, count, type, source, tag, status);
}

int ft_rcv(void *buf, int count, FT_Datatype type, int source, int tag,
           FT_Status *status) {
  return ftmw_recv("ft_rcv", buf, count, type, source, tag, status);
}

/* --- posted receives ------------------------------------------------------- */

int ftmw_irecv(const char *call, void *buf, int count, FT_Datatype type,
               int source, int tag) {
  ftmw_peer *p = ftmw_master_peer(source);
  if (p == NULL)
    return 0;
  size_t bytes;
  int rc = ftmw_check_buffer(buf, count, type, &bytes);
  if (rc == FT_SUCCESS && tag < 0 && tag != FT_ANY_TAG)
    rc = FT_ERR_TAG;
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  if (p->post.active)
    return ftmw_fail(FT_ERR_ALREADY_POSTED);
  /* A sender that has finished or died may still have its data queued.
   * Whether this call reports the failure is the primary's decision. */
  uv_mutex_lock(&st.lock);
  int r;
  uint64_t v;
  if (ftmw_rep_follow(FTMW_DECIDE_POST, source, &r, &v)) {
    rc = (int)v;
    if (rc == FT_ERR_PEER_FAILED) /* reported here too, and traced */
      decided_gone_locked(p, call);
  } else {
    rc = ftmw_match_peer(p, tag) ? FT_SUCCESS : peer_gone_locked(p, call);
    ftmw_rep_decide(FTMW_DECIDE_POST, source, (uint64_t)rc);
  }
  uv_mutex_unlock(&st.lock);
  if (rc != FT_SUCCESS)
    return ftmw_fail(rc);
  p->post.active = 1;
  p->post.buf = buf;
  p->post.count = count;
  p->post.type = type;
  p->post.tag = tag;
  ftmw_ok();
  return 1;
}

int ft_irecv(void *buf, int count, FT_Datatype type, int source, int tag) {
  return ftmw_irecv("ft_irecv", buf, count, type, source, tag);
}

/* A posted receive of p has completed or failed for good: the ms_* log
 * learns the outcome of its ms_irecv, if that is what posted it. */
static void post_done(ftmw_peer *p, int error) {
  p->post.active = 0;
  ftmw_mslog_posted_done(&p->log, error == FT_SUCCESS);
}

int ftmw_wait(const char *call, int rank) {
  ftmw_peer *p = ftmw_master_peer(rank);
  if (p == NULL)
    return 0;
  if (!p->post.active)
    return ftmw_fail(FT_ERR_NOT_POSTED);
  int n = ftmw_recv(call, p->post.buf, p->post.count, p->post.type, rank,
                    p->post.tag, NULL);
  int error = ft_error();
  if (error != FT_ERR_TRUNCATE)
    post_done(p, error);
  return n;
}

int ft_wait(int rank) { return ftmw_wait("ft_wait", rank); }

int ft_waitany(int *rank) {
  if (rank == NULL)
    return ftmw_fail(FT_ERR_NULL_ARG), -1;
  *rank = 0;
  if (!st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED), -1;
  if (!is_master())
    return ftmw_fail(FT_ERR_ROLE), -1;
  int posted = 0;
  for (int r = 1; r <= st.W; r++)
    posted += st.workers[r].post.active;
  if (!posted)
    return ftmw_fail(FT_ERR_NONE_POSTED), -1;
  uv_mutex_lock(&st.lock);
  /* A replica completes the receive the primary's call completed. */
  int decided = 0, decided_rank = 0, verdict_asked = 0;
  uint64_t decided_seq = 0;
  if (ftmw_rep_follow(FTMW_DECIDE_RECV, -1, &decided_rank, &decided_seq))
    decided = 1;
  for (;;) {
    ftmw_msg *m =
        !decided ? ftmw_match_posted(&st.arrivals, st.workers, st.W)
        : decided_seq ? ftmw_match_seq(&st.workers[decided_rank], decided_seq)
                      : NULL;
    if (m != NULL && !decided && ftmw_rep_before(&st.workers[m->source]))
      continue;
    if (m != NULL) {
      ftmw_peer *p = &st.workers[m->source];
      size_t size = ft_type_size(p->post.type);
      *rank = m->source;
      if (too_big(m, (size_t)p->post.count * size, size, NULL)) {
        if (decided)
          ftmw_rep_unfollow(FTMW_DECIDE_RECV, decided_rank, decided_seq);
        uv_mutex_unlock(&st.lock);
        return ftmw_fail(FT_ERR_TRUNCATE), -1;
      }
      ftmw_match_take(m);
      if (!decided)
        ftmw_rep_decide(FTMW_DECIDE_RECV, m->source, m->seq);
      int kept = ftmw_rep_after(p, m);
      uv_mutex_unlock(&st.lock);
      deliver(m, kept, p->post.buf, size, NULL);
      post_done(p, FT_SUCCESS);
      return *rank;
    }
    if (decided && decided_seq != 0) {
      ftmw_peer *p = &st.workers[decided_rank];
      if (ftmw_peer_is_failed(p) && !verdict_asked) {
        verdict_asked = 1; /* its copy will not come: the primary's? */
        if (ftmw_rep_verdict(p))
          continue;
      }
    }
    int waited = 0;
    for (int r = 1; r <= st.W && !waited; r++) {
      ftmw_peer *p = &st.workers[r];
      if (decided && (r != decided_rank || decided_seq != 0))
        continue; /* a replica reports only the failure the primary did */
      if (!decided && p->post.active &&
          (!ftmw_peer_is_up(p) || p->fin) && ftmw_rep_before(p)) {
        waited = 1; /* then look again: data may have come meanwhile */
        break;
      }
      int rc = decided        ? decided_gone_locked(p, "ft_waitany")
               : p->post.active ? peer_gone_locked(p, "ft_waitany")
                                : FT_SUCCESS;
      if (rc != FT_SUCCESS) {
        if (!decided)
          ftmw_rep_decide(FTMW_DECIDE_RECV, r, 0);
        uv_mutex_unlock(&st.lock);
        post_done(p, rc);
        *rank = r;
        return ftmw_fail(rc), -1;
      }
    }
    if (!waited)
      ftmw_wait_locked(-1);
  }
}

/* --- failure queries and restore ---------------------------------------- */

int ft_test(int rank) {
  if (!st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED);
  ftmw_peer *p = peer_of(rank);
  if (p == NULL)
    return 0;
  uv_mutex_lock(&st.lock);
  if (!is_master())
    p = peer_of(0); /* the primary, now that the lock is held */
  int failed, r;
  uint64_t v;
  if (is_master() && ftmw_rep_follow(FTMW_DECIDE_TEST, rank, &r, &v)) {
    failed = v != 0;
    if (failed)
      await_gone_locked(p);
  } else {
    failed = ftmw_peer_is_failed(p);
    if (is_master())
      ftmw_rep_decide(FTMW_DECIDE_TEST, rank, (uint64_t)failed);
  }
  if (failed)
    p->unreported = 0;
  uv_mutex_unlock(&st.lock);
  ftmw_ok();
  return failed;
}

int ft_testany(void) {
  if (!st.initialized)
    return ftmw_fail(FT_ERR_NOT_INITIALIZED);
  if (!is_master())
    return ftmw_fail(FT_ERR_ROLE);
  ftmw_ok();
  int found = 0;
  uint64_t v;
  uv_mutex_lock(&st.lock);
  if (ftmw_rep_follow(FTMW_DECIDE_TESTANY, -1, &found, &v)) {
    if (found)
      await_gone_locked(&st.workers[found]);
  } else {
    for (int r = 1; r <= st.W && !found; r++)
      if (ftmw_peer_is_failed(&st.workers[r]))
        found = r;
    ftmw_rep_decide(FTMW_DECIDE_TESTANY, found, 0);
  }
  if (found)
    st.workers[found].unreported = 0;
  uv_mutex_unlock(&st.lock);
  return found;
}

int ft_restore(int rank) {
  ftmw_peer *p = ftmw_master_peer(rank);
  if (p == NULL)
    return 0;
  uv_mutex_lock(&st.lock);
  int r;
  uint64_t v;
  if (ftmw_rep_follow(FTMW_DECIDE_RESTORE, rank, &r, &v)) {
    /* A replica: the primary restored (or did not), and says how. */
    int rc = ftmw_rep_follow_restore(p, v);
    uv_mutex_unlock(&st.lock);
    if (rc != FT_SUCCESS)
      return ftmw_fail(rc);
    ftmw_ok();
    return 1;
  }
  ftmw_rep_before(p); /* every replica is done with the old incarnation */
  /* Restored by an old primary that died before it could tell: the
   * replicas adopted the new incarnation, and so did this master. */
  int adopted = ftmw_peer_is_up(p) && p->epoch != p->app_epoch;
  int failed = ftmw_peer_is_failed(p);
  int dropped = failed ? ftmw_match_drop(p) : 0;
  p->unreported = 0;
  if (!failed && !adopted)
    ftmw_rep_decide(FTMW_DECIDE_RESTORE, rank,
                    ftmw_rep_restore_value(FT_ERR_NOT_FAILED, p));
  uv_mutex_unlock(&st.lock);
  if (!failed && !adopted)
    return ftmw_fail(FT_ERR_NOT_FAILED);
  p->post.active = 0;
  p->log.posted = NULL; /* ms_restore posts it again if it replays it */
  uint64_t t0 = uv_hrtime();
  ftmw_trace("restore_started", "\"peer\":%d,\"dropped\":%d", rank, dropped);
  int rc = adopted ? FT_SUCCESS : ftmw_launch_restore(p);
  double ms = (uv_hrtime() - t0) / 1e6;
  uv_mutex_lock(&st.lock);
  if (rc == FT_SUCCESS)
    p->app_epoch = p->epoch;
  ftmw_rep_decide(FTMW_DECIDE_RESTORE, rank, ftmw_rep_restore_value(rc, p));
  uv_mutex_unlock(&st.lock);
  if (rc != FT_SUCCESS) {
    ftmw_trace("restore_failed", "\"peer\":%d,\"ms\":%.3f", rank, ms);
    ftmw_log("worker %d could not be restored: %s", rank, ft_strerror(rc));
    return ftmw_fail(rc);
  }
  ftmw_trace("restore_finished", "\"peer\":%d,\"peer_epoch\":%u,\"ms\":%.3f",
             rank, p->epoch, ms);
  ftmw_log("worker %d restored (incarnation %u, pid %d on %s) in %.1f ms", rank,
           p->epoch, (int)p->at.pid, p->at.host, ms);
  ftmw_ok();
  return 1;
}

int ft_is_primary(void) {
  if (!st.initialized || !is_master())
    return 0;
  if (st.M == 0)
    return 1;
  uv_mutex_lock(&st.lock);
  int primary = ftmw_rep_primary_call();
  uv_mutex_unlock(&st.lock);
  return primary;
}
