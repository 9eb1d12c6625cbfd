/* Master replicas: the data path's calls, each one exchange over
 * replica.c's sequence (see replica.h).
 * - A send (ftmw_rep_send_call, ftmw_rep_worker_send): the data path
 *   hands over the write of its DATA frame, and everything the protocol
 *   does around it is here: the numbering every master shares, a
 *   replica's wait for the worker's word, the primary's waits before it
 *   writes, the verdict asked for when the worker fails; a worker's COPY
 *   to the other masters, its move to a new primary and its CONFIRM.
 * - A decided call (ftmw_rep_decided): the data path hands over its
 *   choice, made only where this master decides.
 * - A receive (ftmw_rep_recv_call): the data path hands over what it
 *   waits for (how to look for it, whether it fits, what failure to
 *   report when nothing can come), and the exchange runs here: the
 *   primary's decision followed or made, the exchange begun and ended,
 *   the verdict asked for when the source failed, the waits.
 * - ft_restore's follow, which only masters with replicas make. */
#include "calls.h"
#include "ftmw_impl.h"
#include "inbox.h"
#include "match.h"
#include "term.h"
#include "replica.h"
#include "replica_state.h"

void ftmw_rep_decided(ftmw_ctx *cx, int kind, int want_rank,
                      ftmw_rep_choose_fn choose, void *arg,
                      ftmw_rep_choice *c) {
  *c = (ftmw_rep_choice){.kind = FTMW_DECIDE_KIND(kind),
                         .rank = want_rank > 0 ? want_rank : 0};
  int followed = ftmw_rep_follow(cx, kind, want_rank, &c->rank, &c->value);
  if (followed) {
    c->kind = followed;
    c->followed = 1;
    return;
  }
  while (choose(cx, arg, c) == FTMW_REP_BEGIN)
    c->begun = ftmw_rep_begin(cx, &cx->st.workers[c->rank]) ? 0 : c->rank;
  ftmw_rep_decide(cx, c->kind, c->rank, c->value);
}

/* A receive's message m was found (st.lock held): taken, or left queued
 * if it does not fit (a decision followed is put back: the retry with a
 * larger buffer follows it again). From several sources the primary
 * decides it; a master counts the exchange and keeps its data. */
static void take_locked(ftmw_ctx *cx, const ftmw_rep_recv *r, ftmw_msg *m,
                        int decided, int rank, uint64_t seq,
                        ftmw_rep_received *got) {
  got->rank = m->source;
  got->m = m;
  if (!r->fits(cx, r->arg, m)) {
    if (decided)
      ftmw_rep_unfollow(cx, FTMW_DECIDE_RECV, rank, seq);
    got->how = FTMW_RECV_TRUNCATED;
    return;
  }
  ftmw_match_take(m);
  if (ftmw_is_master(cx)) {
    if (r->kind && !decided)
      ftmw_rep_decide(cx, FTMW_DECIDE_RECV, m->source, m->seq);
    got->kept = ftmw_rep_end(cx, &cx->st.workers[m->source], 1, m);
  }
  got->how = FTMW_RECV_TAKEN;
}

/* From several sources, nothing to take and nothing decided: the failure
 * the data path reports now (decided for the replicas if it says so), in
 * got, or FT_SUCCESS. *again: the protocol waited before the exchange
 * with its worker began (look again: data may have come meanwhile). */
static int undecided_failure_locked(ftmw_ctx *cx, const ftmw_rep_recv *r,
                                    ftmw_rep_received *got, int *again) {
  ftmw_rep_choice c = {0};
  int rc;
  *again = 0;
  while (r->failure(cx, r->arg, &c, &rc) == FTMW_REP_BEGIN) {
    if (ftmw_rep_begin(cx, &cx->st.workers[c.rank])) {
      *again = 1;
      return FT_SUCCESS;
    }
    c.begun = c.rank;
  }
  got->rank = c.rank;
  if (c.kind)
    ftmw_rep_decide(cx, c.kind, c.rank, 0);
  return rc;
}

void ftmw_rep_recv_call(ftmw_ctx *cx, const ftmw_rep_recv *r,
                        ftmw_rep_received *got) {
  ftmw_peer *p = r->p;
  int master = ftmw_is_master(cx);
  int decided = 0, verdict_asked = 0, decided_rank = 0;
  uint64_t decided_seq = 0;
  *got = (ftmw_rep_received){0};
  int followed =
      r->kind ? ftmw_rep_follow(cx, r->kind, -1, &decided_rank, &decided_seq)
              : 0;
  if (followed) {
    decided = 1;
    if (followed == FTMW_DECIDE_TERM) { /* the primary's reported SIGTERM */
      got->how = FTMW_RECV_TERMINATED;
      return;
    }
    if (decided_rank == 0) { /* TIMEOUT: the primary's receive gave up */
      got->how = FTMW_RECV_TIMED_OUT;
      return;
    }
    p = &cx->st.workers[decided_rank];
  }
  if (p && master && r->begin_first)
    ftmw_rep_begin(cx, p);
  for (;;) {
    if (!master)
      p = ftmw_peer_of(cx, 0); /* the primary may change while we wait */
    /* A decision naming a message: the primary took it, so its copy
     * here, if still unconfirmed, is confirmed by that. */
    if (decided && decided_seq != 0 && ftmw_match_seq(p, decided_seq) == NULL)
      ftmw_inbox_confirm_locked(cx, p, decided_seq);
    ftmw_msg *m = !decided           ? r->look(cx, r->arg, p)
                  : decided_seq != 0 ? ftmw_match_seq(p, decided_seq)
                                     : NULL;
    /* From several sources, in the primary: an exchange with m's sender. */
    if (m != NULL && !decided && r->kind &&
        ftmw_rep_begin(cx, &cx->st.workers[m->source]))
      continue;
    if (m != NULL) {
      take_locked(cx, r, m, decided, decided_rank, decided_seq, got);
      return;
    }
    if (decided && decided_seq != 0 && ftmw_peer_is_up(p)) {
      ftmw_wait_locked(cx, -1); /* the copy is on its way */
      continue;
    }
    if (!decided && r->stop_on_term && ftmw_term_requested()) {
      if (r->kind) /* before any failure: stop */
        ftmw_rep_decide(cx, FTMW_DECIDE_TERM, 0, 0);
      got->how = FTMW_RECV_TERMINATED;
      return;
    }
    /* A master whose worker died before its copy came: the primary's
     * verdict says whether this call succeeded there (then its data is
     * queued here now) or reports the failure. Either way the queue is
     * looked at again: a master that took over may have been sent the
     * data meanwhile by a replica that held it (ftmw-sim seed 9690). */
    if (p && master && ftmw_peer_is_failed(p) && !verdict_asked &&
        (!decided || decided_seq != 0)) {
      verdict_asked = 1;
      ftmw_rep_verdict(cx, p);
      continue;
    }
    /* A master that took over, whose worker failed with no copy of the
     * message here: if the old primary took it (it decided so, or went
     * past this receive from p alone), the message is lost with p, and
     * this master goes on from here on its own, or leaves. */
    if (p && master && verdict_asked && ftmw_peer_is_failed(p) &&
        ftmw_rep_took_over(cx) && (!decided || decided_seq != 0)) {
      while (!ftmw_rep_marked(cx)) /* every live worker's ACKEDs are in */
        ftmw_wait_locked(cx, -1);
      if (decided || ftmw_rep_took_past(cx, p)) {
        while (!ftmw_rep_caught_up(cx))
          ftmw_wait_locked(cx, -1); /* which answers their SUSPECTs */
        ftmw_rep_abandon(cx, p, decided_seq);
        while (ftmw_rep_abandoning(cx))
          ftmw_wait_locked(cx, -1);
      }
    }
    int rc;
    if (p) { /* one source, or the one the primary's call reported */
      got->rank = p->id;
      rc = decided && decided_seq == 0
               ? ftmw_decided_gone_locked(cx, p, r->call)
               : ftmw_peer_gone_locked(cx, p, r->call);
      if (rc == FT_ERR_PEER_FAILED && master && (!decided || decided_seq != 0))
        ftmw_rep_end(cx, p, 0, NULL);
    } else {
      int again;
      rc = undecided_failure_locked(cx, r, got, &again);
      if (again)
        continue;
    }
    if (rc != FT_SUCCESS) {
      got->how = FTMW_RECV_FAILED;
      got->rc = rc;
      return;
    }
    int64_t ms = -1;
    if (r->deadline != 0) {
      uint64_t now = ftmw_now_ms();
      if (now >= r->deadline) { /* replicas time out at the same call */
        ftmw_rep_decide(cx, FTMW_DECIDE_TIMEOUT, 0, 0);
        got->how = FTMW_RECV_TIMED_OUT;
        return;
      }
      ms = (int64_t)(r->deadline - now);
    }
    ftmw_wait_locked(cx, ms);
  }
}

/* ft_restore's choice: the exchange with p begins (every replica done
 * with the old incarnation), and once the replicas hold all this master
 * took, the data path restores it. */
typedef struct {
  ftmw_peer *p;
  int (*restore)(ftmw_ctx *cx, void *arg);
  void *arg;
  int rc;
} restore_choice;

static int restore_choose(ftmw_ctx *cx, void *arg, ftmw_rep_choice *c) {
  restore_choice *r = arg;
  c->rank = r->p->id;
  if (c->begun != r->p->id)
    return FTMW_REP_BEGIN;
  /* A spare or a spawned worker sees a restore: it waits until the
   * replicas hold what this master took. Only a failed incarnation is
   * restored (the rest is FT_ERR_NOT_FAILED, or one adopted); the check
   * and the restore run with the lock held throughout. */
  if (ftmw_peer_is_failed(r->p))
    ftmw_rep_before_seen(cx);
  r->rc = r->restore(cx, r->arg);
  c->value = ftmw_rep_restore_value(r->rc, r->p);
  return 0;
}

int ftmw_rep_restore_call(ftmw_ctx *cx, ftmw_peer *p,
                          int (*restore)(ftmw_ctx *cx, void *arg), void *arg,
                          int *followed, uint32_t *epoch) {
  restore_choice r = {p, restore, arg, FT_SUCCESS};
  ftmw_rep_choice c;
  ftmw_rep_decided(cx, FTMW_DECIDE_RESTORE, p->id, restore_choose, &r, &c);
  *followed = c.followed;
  *epoch = p->epoch;
  return c.followed ? ftmw_rep_follow_restore(cx, p, c.value, epoch) : r.rc;
}

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
    /* Once p's FIN came, p (in ft_finalize, alive until the BYE) may
     * still take a DATA the primary wrote before it saw that FIN, its
     * ACKED then coming after the FIN, or never take it: the primary's
     * verdict says which (ftmw_rep_send_call asks for it). */
    if (!ftmw_peer_is_up(p) || p->fin)
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

/* This master's own DATA went out, and p failed before its ACK came. p
 * may still have taken it and told a replica so (ACKED), its ACK to this
 * master lost: a partition, or a host that lost power (ftmw-sim seed
 * 3465840: the replica completed the send, the primary reported the
 * failure). Each live replica completes this exchange on that ACKED
 * (DONE) or asks for the verdict (SUSPECT), so this master waits for
 * every one's word first. Where no master took over, a replica's DONE
 * means that ACKED (a replica completes a send on it or on the primary's
 * verdict, not given yet): the send succeeded. A master that took over
 * asks the replica how it went (gone_locked). After p's FIN too: p, in
 * ft_finalize, still takes DATA, and a replica whose view is that p
 * finished asks (SUSPECT) as for a failure (ftmw_rep_send_call), so every
 * live replica answers. Skipping the wait after the FIN reported a
 * failure where a replica that had p's ACKED succeeded; a replica that
 * told nothing about a finished worker hung the wait (a partition that
 * let the FIN reach it alone; a helper's review found both). */
static int done_elsewhere_locked(ftmw_ctx *cx, ftmw_peer *p) {
  if (cx->job.M == 0 || !ftmw_peer_is_failed(p))
    return 0;
  const ftmw_rep_worker *w = ftmw_rep_of(cx, p->id);
  uint64_t n = w->calls + 1;
  for (;;) {
    int done = 0, waiting = 0;
    for (int k = 0; k <= cx->job.M; k++)
      if (ftmw_rep_alive(cx, k)) {
        done |= w->done_by[k] >= n;
        waiting |= w->done_by[k] < n && w->suspect_by[k] < n;
      }
    if (done || !waiting)
      return done && !ftmw_rep_took_over(cx);
    ftmw_wait_locked(cx, -1);
  }
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
  ftmw_rep_before_seen(cx); /* the replicas hold what it did first */
  if (ftmw_rep_acked(cx, p, seq))
    return FT_SUCCESS;        /* came while it waited */
  if (ftmw_peer_is_failed(p)) /* or the old primary's success */
    return gone_locked(cx, p, call);
  int rc = ftmw_peer_gone_locked(cx, p, call); /* p finished */
  if (rc == FT_SUCCESS)
    rc = w->fn(cx, p, w->arg);
  if (rc != FTMW_REP_UNDELIVERED)
    return rc;
  if (ftmw_rep_acked(cx, p, seq) || done_elsewhere_locked(cx, p))
    return FT_SUCCESS;
  if (ftmw_peer_is_failed(p))
    return gone_locked(cx, p, call);
  return undelivered_locked(cx, p, call);
}

int ftmw_rep_send_call(ftmw_ctx *cx, const char *call, ftmw_peer *p,
                       uint64_t seq, const ftmw_rep_write *w) {
  ftmw_rep_number(cx, p, seq);
  ftmw_rep_catch_up(cx);
  int rc = FTMW_REP_SEND_SELF;
  if (ftmw_is_replica(cx) || ftmw_rep_acked(cx, p, seq) ||
      (ftmw_rep_took_over(cx) && (ftmw_peer_is_failed(p) || p->fin))) {
    /* Only the primary sends; a replica waits for the worker's word, and
     * if the worker dies, for the primary's verdict on the same call. A
     * primary that took over after the worker's word came completes as
     * the replica it was (ftmw-sim seed 571: it sent again, found the
     * worker finished, and reported so where the others succeeded); so
     * does one that finds the worker failed, where the old primary may
     * have gone past this call (ftmw-sim seed 36689), or its FIN come,
     * where the old primary's DATA may have been taken after it, the
     * ACKED still on its way (a helper's review). */
    rc = ftmw_rep_send(cx, p, seq);
    /* A worker whose FIN came is asked about as a failed one: the
     * primary may have written its DATA first (then it succeeded), or may
     * have seen the worker's end alone, a partition having let the FIN
     * reach this master only, and then waits for its word
     * (done_elsewhere_locked). */
    if (rc == FT_ERR_PEER_FAILED || rc == FT_ERR_PEER_FINALIZED)
      rc = ftmw_rep_send_verdict(cx, p) ? FT_SUCCESS
                                        : ftmw_peer_gone_locked(cx, p, call);
  }
  if (rc == FTMW_REP_SEND_SELF) {
    ftmw_rep_begin(cx, p); /* also before reporting p's failure */
    rc = send_self_locked(cx, call, p, seq, w);
  }
  /* A send to a finished worker ends as a failed one, in every master
   * alike, which tells its replicas at once (they ask, above). */
  if (rc == FT_SUCCESS)
    ftmw_rep_end(cx, p, 1, NULL);
  else if (rc == FT_ERR_PEER_FAILED || rc == FT_ERR_PEER_FINALIZED)
    ftmw_rep_end(cx, p, 0, NULL);
  return rc;
}

/* --- a worker's COPY and CONFIRM ------------------------------------------ */

/* Worker: sends a frame to every live master but `except`, one after the
 * other, so that a death between two (fault point `point`, hit before
 * each) reaches exactly the first. */
static void to_other_masters(ftmw_ctx *cx, int except, int point, int type,
                             int tag, uint64_t seq, const void *buf,
                             size_t len) {
  if (cx->job.M == 0 || cx->job.role != FTMW_ROLE_WORKER)
    return;
  for (int k = 0; k <= cx->job.M; k++) {
    if (k == except || !ftmw_peer_is_up(&cx->st.masters[k]))
      continue;
    ftmw_fault_hit(point);
    ftmw_rep_send_master(cx, k, type, tag, 0, seq, buf, len);
  }
}

void ftmw_rep_copy(ftmw_ctx *cx, int primary, int tag, uint64_t seq,
                   const void *buf, size_t len) {
  to_other_masters(cx, primary, FTMW_FAULT_SEND_COPY, FTMW_FRAME_COPY, tag, seq,
                   buf, len);
}

void ftmw_rep_confirm(ftmw_ctx *cx, int acker, uint64_t seq) {
  to_other_masters(cx, acker, FTMW_FAULT_SEND_CONFIRM, FTMW_FRAME_CONFIRM, 0,
                   seq, NULL, 0);
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
