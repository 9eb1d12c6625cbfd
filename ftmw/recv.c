/* The receiving calls: ft_recv, ft_irecv, ft_wait, ft_waitany (and
 * their ms_* forms through ftmw_recv, ftmw_irecv, ftmw_wait). With master
 * replicas, each receive is one exchange of the lock-step (replica.h).
 * Application thread only. */
#include "calls.h"

#include <string.h>

#define st ftmw_st

/* --- receive -------------------------------------------------------------- */

/* Copies m into buf and frees it unless the replica protocol keeps it
 * (st.lock not held: m is unlinked, and only this thread uses kept data). */
static int deliver(ftmw_msg *m, int kept, void *buf, size_t size,
                   FT_Status *status) {
  int n = (int)(m->len / size);
  if (m->len)
    memcpy(buf, m->data, m->len);
  ftmw_trace_data("received", m->source, m->tag, m->len);
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
  if (source != FT_ANY_SOURCE || !ftmw_is_master()) {
    p = ftmw_peer_of(source == FT_ANY_SOURCE ? 0 : source);
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
  if (p && ftmw_is_master())
    ftmw_rep_before(p);
  for (;;) {
    if (!ftmw_is_master())
      p = ftmw_peer_of(0); /* the primary may change while we wait */
    ftmw_msg *m = decided ? (decided_seq ? ftmw_match_seq(p, decided_seq) : NULL)
                  : p     ? ftmw_match_peer(ftmw_is_master() ? p : &st.masters[0], tag)
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
      if (ftmw_is_master()) {
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
    if (p && ftmw_is_master() && ftmw_peer_is_failed(p) && !verdict_asked &&
        (!decided || decided_seq != 0)) {
      verdict_asked = 1;
      if (ftmw_rep_verdict(p))
        continue;
    }
    int failed_rank = p ? p->id : 0;
    if (p && decided && decided_seq == 0)
      rc = ftmw_decided_gone_locked(p, call);
    else if (p)
      rc = ftmw_peer_gone_locked(p, call);
    else {
      ftmw_peer *u = unreported_worker_locked();
      if (u && ftmw_rep_before(u))
        continue;
      if (u) {
        failed_rank = u->id;
        rc = ftmw_peer_gone_locked(u, call);
      } else
        rc = any_source_hopeless_locked(&failed_rank);
      if (rc == FT_ERR_PEER_FAILED) /* replicas report it too */
        ftmw_rep_decide(FTMW_DECIDE_RECV, failed_rank, 0);
    }
    if (rc != FT_SUCCESS) {
      if (p && ftmw_is_master() && rc == FT_ERR_PEER_FAILED &&
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
      ftmw_decided_gone_locked(p, call);
  } else {
    rc = ftmw_match_peer(p, tag) ? FT_SUCCESS : ftmw_peer_gone_locked(p, call);
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
  if (!ftmw_is_master())
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
      int rc = decided        ? ftmw_decided_gone_locked(p, "ft_waitany")
               : p->post.active ? ftmw_peer_gone_locked(p, "ft_waitany")
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
