/* Master replicas: the data path's calls, each one exchange over
 * replica.c's sequence (see replica.h).
 * - A send (ftmw_rep_send_call, ftmw_rep_worker_send): the data path
 *   hands over the write of its DATA frame, and everything the protocol
 *   does around it is here: the numbering every master shares, a
 *   replica's wait for the worker's word, the primary's waits before it
 *   writes, the verdict asked for when the worker fails; a worker's COPY
 *   to the other masters, its move to a new primary and its CONFIRM.
 * - ft_restore's follow, which only masters with replicas make. */
#include "calls.h"
#include "ftmw_impl.h"
#include "match.h"
#include "replica.h"
#include "replica_state.h"

uint64_t ftmw_rep_restore_value(int code, const ftmw_peer *p) {
  uint64_t v = (uint16_t)code;
  if (code == FT_SUCCESS)
    v |= (uint64_t)(uint16_t)p->from_spare << 16 | (uint64_t)p->epoch << 32;
  return v;
}

int ftmw_rep_follow_restore(ftmw_ctx *cx, ftmw_peer *p, uint64_t v,
                            uint32_t *epoch) {
  int code = (int)(v & 0xffff), s = (int)(v >> 16 & 0xffff) - 1;
  uint32_t e = *epoch = (uint32_t)(v >> 32);
  if (code == FT_ERR_NOT_FAILED)
    return code;
  /* The failure this restore answers is reported. One of the new
   * incarnation, adopted here before this decision came and failed since,
   * is not (ftmw_report_failure_locked). */
  if (code != FT_SUCCESS || p->epoch < e || !ftmw_peer_is_failed(p))
    p->unreported = 0;
  if (code != FT_SUCCESS) {
    /* The primary's ft_restore dropped what the failed incarnation had
     * left queued before it tried, and so does every replica: kept here,
     * it was delivered once this master took over, a result the primary
     * had dropped (chaos seed 20261128, run 40). The primary's DOWN came
     * before this decision, so nothing more arrives from it. */
    ftmw_match_drop(p);
    return code;
  }
  /* A spare's ACTIVATED, or a spawned worker's HELLO, is on its way: it
   * left before the primary heard from it. A spare that dies first is
   * seen; a spawned worker is given the launch deadline. */
  const ftmw_peer *sp = s >= 0 && s < cx->job.S ? &cx->st.spares[s] : NULL;
  uint64_t deadline = ftmw_now_ms() + FTMW_LAUNCH_WAIT_MS;
  while (p->epoch < e) {
    uint64_t now = ftmw_now_ms();
    if (sp != NULL ? !ftmw_peer_is_up(sp) : now >= deadline)
      break;
    ftmw_wait_locked(cx, sp != NULL ? -1 : (int64_t)(deadline - now));
  }
  if (p->epoch < e) { /* it died before it reached this master */
    ftmw_match_drop(p);
    /* the incarnation the primary made (an older one still live here was
     * replaced there: it is failed with it) */
    ftmw_peer_begin_locked(cx, p, e, FTMW_PEER_JOINING,
                           "restored by the primary");
    ftmw_peer_failed_locked(cx, p, 1, "died before it reached this master");
  }
  ftmw_trace("restore_followed", "\"peer\":%d,\"peer_epoch\":%u", p->id, e);
  return FT_SUCCESS;
}

int ftmw_rep_send(ftmw_ctx *cx, ftmw_peer *p, uint64_t seq) {
  while (ftmw_rep_of(cx, p->id)->acked_seq < seq) {
    if (!ftmw_peer_is_up(p))
      return ftmw_peer_is_failed(p) ? FT_ERR_PEER_FAILED
                                    : FT_ERR_PEER_FINALIZED;
    if (!ftmw_is_replica(cx))
      return FTMW_REP_SEND_SELF;
    ftmw_wait_locked(cx, -1);
  }
  return FT_SUCCESS;
}

void ftmw_rep_number(ftmw_ctx *cx, ftmw_peer *p, uint64_t seq) {
  if (cx->job.M > 0 && seq > ftmw_rep_of(cx, p->id)->numbered)
    ftmw_rep_of(cx, p->id)->numbered = seq;
}

int ftmw_rep_acked(ftmw_ctx *cx, ftmw_peer *p, uint64_t seq) {
  return cx->job.M > 0 && ftmw_rep_of(cx, p->id)->acked_seq >= seq;
}

/* What a master's send to p reports when p has failed or finished: a
 * master that took over first asks whether the old primary's same send
 * succeeded and it went on (ftmw_rep_send_verdict); then the send
 * succeeds here too (ftmw-sim seed 13291: the worker's failure came while
 * the new primary waited to send the DATA itself, and it reported it
 * where the old primary had gone on to its next decision; every replica
 * then left the job). */
static int gone_locked(ftmw_ctx *cx, ftmw_peer *p, const char *call) {
  if (ftmw_rep_took_over(cx) && ftmw_peer_is_failed(p) &&
      ftmw_rep_send_verdict(cx, p))
    return FT_SUCCESS;
  return ftmw_peer_gone_locked(cx, p, call);
}

/* A write that did not get through to p: the error to report. */
static int undelivered_locked(ftmw_ctx *cx, ftmw_peer *p, const char *call) {
  int rc = ftmw_peer_gone_locked(cx, p, call);
  return rc != FT_SUCCESS ? rc : FT_ERR_PEER_FAILED;
}

/* A master's own send of DATA number seq to p, every replica done with
 * the exchange before. Eager: its outcome is decided now, and the
 * replicas follow it through the worker's ACKED, or this master's verdict
 * (success) if the worker dies first. A master that took over completes
 * it as a replica would where the worker's ACKED of that number came
 * while it waited: the old primary's DATA reached the worker (ftmw-sim
 * seed 244126: the worker finished meanwhile, and the new primary
 * reported that where the replica completed the send); so too where it
 * came while this master's own DATA was on its way. */
static int send_self_locked(ftmw_ctx *cx, const char *call, ftmw_peer *p,
                            uint64_t seq, const ftmw_rep_write *w) {
  if (ftmw_rep_acked(cx, p, seq))
    return FT_SUCCESS;
  ftmw_rep_before_data(cx); /* the replicas hold every decision first */
  if (ftmw_rep_acked(cx, p, seq))
    return FT_SUCCESS;        /* came while it waited */
  if (ftmw_peer_is_failed(p)) /* or the old primary's success */
    return gone_locked(cx, p, call);
  int rc = ftmw_peer_gone_locked(cx, p, call); /* p finished */
  if (rc == FT_SUCCESS)
    rc = w->fn(cx, p, w->arg);
  if (rc != FTMW_REP_UNDELIVERED)
    return rc;
  if (ftmw_rep_acked(cx, p, seq))
    return FT_SUCCESS;
  if (ftmw_peer_is_failed(p))
    return gone_locked(cx, p, call);
  return undelivered_locked(cx, p, call);
}

int ftmw_rep_send_call(ftmw_ctx *cx, const char *call, ftmw_peer *p,
                       uint64_t seq, const ftmw_rep_write *w) {
  ftmw_rep_number(cx, p, seq);
  int rc = FTMW_REP_SEND_SELF;
  if (ftmw_is_replica(cx) || ftmw_rep_acked(cx, p, seq) ||
      (ftmw_rep_took_over(cx) && ftmw_peer_is_failed(p))) {
    /* Only the primary sends; a replica waits for the worker's word, and
     * if the worker dies, for the primary's verdict on the same call. A
     * primary that took over after the worker's word came completes as
     * the replica it was (ftmw-sim seed 571: it sent again, found the
     * worker finished, and reported so where the others succeeded); so
     * does one that finds the worker failed, where the old primary may
     * have gone past this call (ftmw-sim seed 36689). */
    rc = ftmw_rep_send(cx, p, seq);
    if (rc == FT_ERR_PEER_FAILED)
      rc = ftmw_rep_send_verdict(cx, p) ? FT_SUCCESS
                                        : ftmw_peer_gone_locked(cx, p, call);
  }
  if (rc == FTMW_REP_SEND_SELF) {
    ftmw_rep_begin(cx, p); /* also before reporting p's failure */
    rc = send_self_locked(cx, call, p, seq, w);
  }
  if (rc == FT_SUCCESS)
    ftmw_rep_end(cx, p, 1, NULL);
  else if (rc == FT_ERR_PEER_FAILED)
    ftmw_rep_end(cx, p, 0, NULL);
  return rc;
}

int ftmw_rep_worker_send(ftmw_ctx *cx, const char *call, int tag, uint64_t seq,
                         const void *buf, size_t len, const ftmw_rep_write *w) {
  ftmw_peer *p = ftmw_peer_of(cx, 0); /* the primary, now that the lock is
                                          held */
  int rc = ftmw_peer_gone_locked(cx, p, call);
  if (rc != FT_SUCCESS)
    return rc;
  ftmw_rep_copy(cx, p->id, tag, seq, buf, len);
  /* A primary that dies first: the DATA goes again to the master that
   * takes over (which drops it if it already had it). */
  while ((rc = w->fn(cx, p, w->arg)) == FTMW_REP_UNDELIVERED) {
    while (ftmw_peer_is_up(p)) /* a failed write comes first */
      ftmw_wait_locked(cx, -1);
    ftmw_peer *next = ftmw_peer_of(cx, 0);
    if (next == p || !ftmw_peer_is_up(next))
      return undelivered_locked(cx, p, call);
    p = next;
  }
  if (rc == FT_SUCCESS)
    ftmw_rep_confirm(cx, p->id, seq); /* p acknowledged it */
  return rc;
}
