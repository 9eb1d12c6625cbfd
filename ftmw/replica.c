/* Master replicas: the lock-step protocol and failover (see replica.h).
 *
 * Everything a master sends to the other masters goes out in priority
 * order (replica 1 first), and so does what a worker sends to them
 * (ACKED, COPY). So when the primary dies in the middle of a round, the
 * replica that takes over, the first live one, has everything that any
 * other live replica has: it only has to resend the last decision.
 *
 * The file has three parts: the state; the exchange sequence, in a solo
 * and a replicated implementation; and ft_is_primary's decision. The
 * calls made over that sequence (ft_send's wait for ACKED, a worker's
 * COPY and CONFIRM, ft_restore's follow) are replica_calls.c's; the frames
 * the other processes send are replica_frames.c's (on the loop's owner);
 * the link the protocol sends through is replica_link.c's, and what a
 * master sends when the primary changes replica_takeover.c's. */
#include "ftmw_impl.h"
#include "down.h"
#include "transport.h"
#include "replica.h"
#include "inbox.h"
#include "replica_state.h"
#include "leave.h"

#include <stdlib.h>

/* --- state ---------------------------------------------------------------- */

int ftmw_rep_init(ftmw_ctx *cx) {
  static const int types[] = {FTMW_FRAME_DECIDE,  FTMW_FRAME_DECIDED,
                              FTMW_FRAME_KEPT,    FTMW_FRAME_ACKED,
                              FTMW_FRAME_MARK,    FTMW_FRAME_DONE,
                              FTMW_FRAME_SUSPECT, FTMW_FRAME_VERDICT};
  ftmw_rep_state *rs = calloc(1, sizeof(*rs));
  if (rs == NULL)
    return -1;
  rs->workers = calloc((size_t)cx->job.W + 1, sizeof(*rs->workers));
  rs->owed = calloc((size_t)cx->job.W + 1, sizeof(*rs->owed));
  if (rs->workers == NULL || rs->owed == NULL) {
    free(rs->workers);
    free(rs->owed);
    free(rs);
    return -1;
  }
  ftmw_q_init(&rs->decisions);
  cx->rep = rs;
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    ftmw_transport_route(cx, types[i], ftmw_rep_on_frame);
  return 0;
}

void ftmw_rep_free(ftmw_ctx *cx) {
  ftmw_rep_state *rs = cx->rep;
  if (rs == NULL)
    return;
  for (int r = 0; r <= cx->job.W; r++) {
    ftmw_rep_worker *w = &rs->workers[r];
    for (uint32_t i = 0; i < w->kept; i++)
      ftmw_msg_free(w->ring[(w->first + i) % w->cap].msg);
    free(w->ring);
  }
  free(rs->workers);
  free(rs->owed);
  while (!ftmw_q_empty(&rs->decisions)) {
    ftmw_qnode *n = ftmw_q_head(&rs->decisions);
    ftmw_q_remove(n);
    free(FTMW_CONTAINER_OF(n, ftmw_decision, node));
  }
  free(rs);
  cx->rep = NULL;
}

static int with_replicas(ftmw_ctx *cx) {
  return cx->job.M > 0 && cx->job.role == FTMW_ROLE_MASTER;
}

/* A replica whose program did not make the call the primary decided: it
 * can no longer follow, and leaves the job as if it had crashed. */
static void diverged(int kind, int want) {
  ftmw_trace("diverged", "\"kind\":%d,\"call_kind\":%d", kind, want);
  ftmw_leave(FTMW_LEAVE_DIVERGED, 0,
             "the primary decided another call (kind %d; this call: kind "
             "%d, or another worker): the program is not deterministic; "
             "leaving the job", kind, want);
}

/* --- the exchange sequence ------------------------------------------------ */

/* Sends the verdict on worker p's exchange n to master to, or (to < 0)
 * every live replica, after the data this master kept if the exchange
 * received some. Returns 0 if it could not (out of memory). */
static int tell_verdict_to(ftmw_ctx *cx, int to, ftmw_peer *p, uint64_t n) {
  const ftmw_rep_outcome *o = ftmw_rep_outcome_of(ftmw_rep_of(cx, p->id), n);
  if (o == NULL) /* dropped: no live replica had it to do (a bug) */
    ftmw_log("master %d: the outcome of exchange %llu with worker %d, asked "
             "for, is no longer kept: reported as a failure",
             cx->job.id, (unsigned long long)n, p->id);
  int ok = o != NULL && o->ok;
  if (ok && o->msg != NULL) { /* the data the replicas may not have */
    ftmw_msg *k = ftmw_rep_kept_of(p, o->msg);
    if (k == NULL)
      return 0;
    ftmw_rep_send_kept(cx, to, k, 0);
    ftmw_msg_free(k);
  }
  for (int k = 0; k <= cx->job.M; k++)
    if (ftmw_rep_alive(cx, k) && (to < 0 || k == to)) {
      ftmw_rep_send_master(cx, k, FTMW_FRAME_VERDICT, p->id,
                           ok ? FTMW_FLAG_OK : 0, n, NULL, 0);
      ftmw_trace("verdict_sent", "\"replica\":%d,\"worker\":%d,\"call\":%llu,"
                 "\"ok\":%d", k, p->id, (unsigned long long)n, ok);
    }
  return 1;
}

/* Primary: the verdict on worker p's exchange n to every live replica. */
static int tell_verdict(ftmw_ctx *cx, ftmw_peer *p, uint64_t n) {
  return tell_verdict_to(cx, -1, p, n);
}

/* Primary: answers the replicas that suspect worker p's exchange n. The
 * verdict goes to every live replica, once: a replica that has not asked
 * yet then follows it without asking, and whichever replica takes over
 * has it if any other has. Out of memory, it is tried again at the next
 * ftmw_rep_serve. */
static void answer(ftmw_ctx *cx, ftmw_peer *p, uint64_t n) {
  ftmw_rep_worker *w = ftmw_rep_of(cx, p->id);
  if (w->answered_n != n) {
    if (!tell_verdict(cx, p, n))
      return;
    w->answered_n = n;
  }
  for (int k = 0; k <= cx->job.M; k++)
    if (w->suspect_by[k] == n)
      w->suspect_by[k] = 0;
}

void ftmw_rep_catch_up(ftmw_ctx *cx) {
  /* Its sends run the loop: the primary may change again meanwhile. */
  while (with_replicas(cx) && cx->st.primary != cx->rep->seen_primary)
    ftmw_rep_primary_changed(cx);
}

static int flush_primary_call(ftmw_ctx *cx);

static int replicated_serve(ftmw_ctx *cx) {
  if (cx->rep->serving)
    return 0;
  cx->rep->serving = 1;
  /* Telling a decision waits for its write, running the loop: what
   * came meanwhile (a replica's DONE) may be the change the caller waits
   * for, so it counts as an answer. */
  int n = flush_primary_call(cx);
  if (cx->st.primary != cx->rep->seen_primary) {
    ftmw_rep_catch_up(cx);
    n++;
  }
  /* A replica that lacks a decision of the old primary may be what this
   * master waits for (its DONE, in ftmw_rep_begin): it gets it now, not
   * at the next decision (ftmw-sim seeds 4916064, 4973975, four masters:
   * the new primary waited for ever for a replica stuck before that
   * decision). Its sends run the loop: what came meanwhile counts. */
  n += ftmw_rep_fill_gaps(cx);
  for (int r = 1; r <= cx->job.W && cx->job.id == cx->st.primary; r++) {
    ftmw_rep_worker *w = &cx->rep->workers[r];
    for (int k = 0; k <= cx->job.M; k++) {
      /* Nobody waits for the answer when the asker is dead, or has
       * completed that exchange since (its SUSPECT crossed the VERDICT,
       * and its DONE followed): the outcome may be dropped by then. */
      if (w->suspect_by[k] != 0 &&
          (!ftmw_rep_alive(cx, k) || w->done_by[k] >= w->suspect_by[k]))
        w->suspect_by[k] = 0;
      if (w->suspect_by[k] != 0 && w->suspect_by[k] <= w->calls) {
        answer(cx, &cx->st.workers[r], w->suspect_by[k]);
        n++;
      }
    }
  }
  /* A replica answers a primary that took over behind it, about an
   * exchange it has completed (its own data, if a receive's). */
  for (int r = 1; r <= cx->job.W && cx->job.id != cx->st.primary; r++) {
    ftmw_rep_worker *w = &cx->rep->workers[r];
    uint64_t asked = w->suspect_by[cx->st.primary];
    if (asked != 0 && asked <= w->calls) {
      w->suspect_by[cx->st.primary] = 0;
      tell_verdict_to(cx, cx->st.primary, &cx->st.workers[r], asked);
      n++;
    }
  }
  cx->rep->serving = 0;
  return n;
}

/* Whether every live replica is done with w's exchange n. */
static int done_by_all(ftmw_ctx *cx, const ftmw_rep_worker *w, uint64_t n) {
  for (int k = 0; k <= cx->job.M; k++)
    if (ftmw_rep_alive(cx, k) && w->done_by[k] < n)
      return 0;
  return 1;
}

static int replicated_begin(ftmw_ctx *cx, ftmw_peer *p) {
  const ftmw_rep_worker *w = ftmw_rep_of(cx, p->id);
  if (cx->job.id != cx->st.primary || w->calls == 0)
    return 0;
  int waited = 0;
  while (!done_by_all(cx, w, w->calls)) {
    ftmw_wait_locked(cx, -1); /* which answers the replicas' SUSPECTs */
    waited = 1;
  }
  return waited;
}

static void replicated_decide(ftmw_ctx *cx, int kind, int rank,
                              uint64_t value) {
  if (cx->job.id != cx->st.primary)
    return;
  /* A master that has just taken over resends the old primary's last
   * decision first: a replica that missed it would take a new one for
   * out of order. */
  ftmw_rep_catch_up(cx);
  flush_primary_call(cx); /* decisions go out in the order they were made */
  ftmw_rep_fill_gaps(cx);
  ftmw_decision d = {.kind = kind,
                     .rank = rank,
                     .value = value,
                     .number = ++cx->rep->dec_taken};
  if (kind != FTMW_DECIDE_PRIMARY)
    cx->rep->dec_acted = d.number;
  for (int k = 0; k <= cx->job.M; k++)
    if (ftmw_rep_alive(cx, k))
      ftmw_rep_send_decision(cx, k, &d);
}

/* Whether a master that took over has every live replica's SYNC (else
 * a replica may hold a decision of the old primary that it lacks). */
static int synced(ftmw_ctx *cx) {
  ftmw_rep_catch_up(cx);
  for (int k = 0; k <= cx->job.M && cx->rep->took_over; k++)
    if (ftmw_rep_alive(cx, k) && !cx->rep->synced[k])
      return 0;
  return 1;
}

static int replicated_follow(ftmw_ctx *cx, int kind, int want_rank, int *rank,
                             uint64_t *value) {
  while (ftmw_q_empty(&cx->rep->decisions)) {
    if (!ftmw_is_replica(cx) && synced(cx))
      return 0;
    ftmw_wait_locked(cx, -1);
  }
  ftmw_decision *d =
      FTMW_CONTAINER_OF(ftmw_q_head(&cx->rep->decisions), ftmw_decision, node);
  int alt = FTMW_DECIDE_ALT(kind);
  kind = FTMW_DECIDE_KIND(kind);
  /* A receive from several sources may also report SIGTERM (recv.c). */
  int term = d->kind == FTMW_DECIDE_TERM && kind == FTMW_DECIDE_RECV;
  if ((d->kind != kind && (alt == 0 || d->kind != alt) && !term) ||
      (want_rank >= 0 && d->rank != want_rank))
    diverged(d->kind, kind);
  ftmw_q_remove(&d->node);
  *rank = d->rank;
  *value = d->value;
  cx->rep->dec_taken = d->number;
  if (d->kind != FTMW_DECIDE_PRIMARY)
    cx->rep->dec_acted = d->number;
  kind = d->kind;
  free(d);
  return kind;
}

static int replicated_end(ftmw_ctx *cx, ftmw_peer *p, int ok, ftmw_msg *m) {
  ftmw_rep_worker *w = ftmw_rep_of(cx, p->id);
  w->calls++;
  int kept = ftmw_rep_keep_outcome(cx, w, ok, m);
  if (!ok || m != NULL) { /* a message taken, a failure: before_seen */
    w->owed_n = w->calls;
    if (!w->owed_listed) {
      w->owed_listed = 1;
      cx->rep->owed[cx->rep->n_owed++] = p->id;
    }
  }
  /* The primary tells a failure at once, before any later decision: a
   * replica whose primary dies then knows that a decision it holds from
   * it, or a later DATA's ACKED, came after a success (went_past). Not
   * when no live replica can still ask (ftmw_rep_keep_outcome kept
   * nothing). */
  if (!ok && cx->job.id == cx->st.primary && w->answered_n != w->calls &&
      ftmw_rep_outcome_of(w, w->calls) != NULL && tell_verdict(cx, p, w->calls))
    w->answered_n = w->calls;
  /* A replica tells the primary, which holds the next exchange until
   * every replica is done with this one, and the other replicas, which
   * keep its outcome until then (one of them may become the primary). So
   * does a master that took over: it may be behind a replica, which keeps
   * what it may still ask until its DONE. Each of them, also when this
   * master becomes the primary as it tells them (the sends run the loop). */
  int tell = ftmw_is_replica(cx) || cx->rep->took_over;
  for (int k = 0; k <= cx->job.M && tell; k++)
    if (ftmw_rep_alive(cx, k))
      ftmw_rep_send_master(cx, k, FTMW_FRAME_DONE, p->id, 0, w->calls, NULL, 0);
  /* A primary can now answer SUSPECTs of this exchange; a master that
   * became primary takes over. */
  replicated_serve(cx);
  return kept;
}

/* Primary: waits until every live replica holds its decisions up to
 * number n and has completed every exchange that took a message or
 * reported a failure. */
static void wait_held(ftmw_ctx *cx, uint64_t n) {
  /* (A replica that lacks decisions gets them in the wait: serve.) */
  for (int k = 0; k <= cx->job.M; k++)
    while (ftmw_rep_alive(cx, k) && cx->rep->dec_held[k] < n)
      ftmw_wait_locked(cx, -1);
  /* Every live replica has completed each exchange in which this master
   * took a message or reported a failure (its DONE): a worker acts on a
   * DATA, a reader on an output, so the master that takes over must be
   * able to follow the path they came from (ftmw-sim seed 4212840: a
   * partition held a worker's COPY to the replica, the primary took its
   * DATA, sent another worker its next task and died; the replica could
   * not follow and left, the last master). A failure told (VERDICT) and
   * held on its way likewise: the next primary would take the worker's
   * unconfirmed COPY instead (a helper's review). Before a DATA, the DONE
   * of the destination's last exchange was waited for already
   * (ftmw_rep_begin); in a farm so was every other one's, before its own
   * next task. */
  ftmw_rep_state *s = cx->rep;
  for (int i = 0; i < s->n_owed;) {
    ftmw_rep_worker *w = &s->workers[s->owed[i]];
    if (!done_by_all(cx, w, w->owed_n)) {
      ftmw_wait_locked(cx, -1); /* which answers the replicas' SUSPECTs */
      continue;
    }
    w->owed_listed = 0;
    s->owed[i] = s->owed[--s->n_owed];
  }
}

void ftmw_rep_before_seen(ftmw_ctx *cx) {
  if (!with_replicas(cx) || cx->job.id != cx->st.primary)
    return;
  flush_primary_call(cx); /* an ft_is_primary the program acts on */
  wait_held(cx, cx->rep->dec_taken);
}

static int replicated_verdict(ftmw_ctx *cx, ftmw_peer *p, int send) {
  const ftmw_rep_worker *w = ftmw_rep_of(cx, p->id);
  uint64_t n = w->calls + 1;
  int asked = -1;
  for (;;) {
    int held = ftmw_rep_verdict_of(w, n);
    if (held >= 0)
      return held;
    /* The primary reports what it saw. One that took over first gets
     * what the replicas hold (synced); a replica that completed this
     * exchange (its DONE came) then tells how it went; else it follows
     * its predecessor's send where that one went on. A receive takes the
     * worker's unconfirmed COPY: with no verdict anywhere, the old
     * primary either received that message or never completed this
     * exchange (it tells a failure before going on), and did nothing a
     * live process saw after it (ftmw-sim seeds 14888, 16192: the worker
     * died before it confirmed, the old primary after it went on, and
     * the new primary reported the failure its successor's decisions
     * contradicted). With none, the call fails: the worker sent the DATA
     * nowhere. */
    if (!ftmw_is_replica(cx)) {
      if (!synced(cx)) {
        ftmw_wait_locked(cx, -1); /* the old primary's decisions may come */
        continue;
      }
      if (send && w->numbered > 0 && w->acked_seq >= w->numbered)
        return 1; /* the worker has this call's DATA (a replica said so) */
      int ahead = -1;
      for (int k = 0; k <= cx->job.M && ahead < 0; k++)
        if (ftmw_rep_alive(cx, k) && w->done_by[k] >= n)
          ahead = k;
      if (ahead < 0 && send && !ftmw_rep_marked(cx)) {
        ftmw_wait_locked(cx, -1); /* a worker's ACKED may be on its way */
        continue;
      }
      if (ahead < 0 && send)
        return ftmw_rep_went_past(cx);
      if (ahead < 0)
        return cx->rep->took_over && ftmw_inbox_confirm_locked(cx, p, 0) > 0;
      if (asked != ahead) {
        asked = ahead;
        ftmw_trace("suspect_sent", "\"replica\":%d,\"worker\":%d,"
                   "\"call\":%llu", ahead, p->id, (unsigned long long)n);
        ftmw_rep_send_master(cx, ahead, FTMW_FRAME_SUSPECT, p->id, 0, n, NULL,
                             0);
        continue;
      }
      ftmw_wait_locked(cx, -1);
      continue;
    }
    if (asked != cx->st.primary) { /* first asking, or a new primary */
      asked = cx->st.primary;
      ftmw_trace("suspect_sent", "\"primary\":%d,\"worker\":%d,\"call\":%llu",
                 asked, p->id, (unsigned long long)n);
      ftmw_rep_send_master(cx, asked, FTMW_FRAME_SUSPECT, p->id, 0, n, NULL, 0);
      continue; /* the verdict may have come while sending */
    }
    ftmw_wait_locked(cx, -1);
  }
}

/* A master alone (or any process but a master with replicas): every
 * exchange is its own to decide, and nobody asks about it. */
static int solo_begin(ftmw_ctx *cx, ftmw_peer *p) {
  (void)cx, (void)p;
  return 0;
}
static int solo_follow(ftmw_ctx *cx, int kind, int want_rank, int *rank,
                       uint64_t *value) {
  (void)cx, (void)kind, (void)want_rank, (void)rank, (void)value;
  return 0;
}
static void solo_decide(ftmw_ctx *cx, int kind, int rank, uint64_t value) {
  (void)cx, (void)kind, (void)rank, (void)value;
}
static int solo_end(ftmw_ctx *cx, ftmw_peer *p, int ok, ftmw_msg *m) {
  (void)cx, (void)p, (void)ok, (void)m;
  return 0;
}
static int solo_verdict(ftmw_ctx *cx, ftmw_peer *p, int send) {
  (void)cx, (void)p, (void)send;
  return 0;
}
static int solo_serve(ftmw_ctx *cx) {
  (void)cx;
  return 0;
}

typedef struct exchange_impl {
  int (*begin)(ftmw_ctx *cx, ftmw_peer *p);
  int (*follow)(ftmw_ctx *cx, int kind, int want_rank, int *rank,
                uint64_t *value);
  void (*decide)(ftmw_ctx *cx, int kind, int rank, uint64_t value);
  int (*end)(ftmw_ctx *cx, ftmw_peer *p, int ok, ftmw_msg *m);
  int (*verdict)(ftmw_ctx *cx, ftmw_peer *p, int send);
  int (*serve)(ftmw_ctx *cx);
} exchange_impl;

static const exchange_impl solo = {solo_begin, solo_follow, solo_decide,
                                   solo_end, solo_verdict, solo_serve};
static const exchange_impl replicated = {
    replicated_begin, replicated_follow,  replicated_decide,
    replicated_end,   replicated_verdict, replicated_serve};

static const exchange_impl *impl(ftmw_ctx *cx) {
  return with_replicas(cx) ? &replicated : &solo;
}

int ftmw_rep_begin(ftmw_ctx *cx, ftmw_peer *p) {
  return impl(cx)->begin(cx, p);
}
int ftmw_rep_follow(ftmw_ctx *cx, int kind, int want_rank, int *rank,
                    uint64_t *value) {
  return impl(cx)->follow(cx, kind, want_rank, rank, value);
}
void ftmw_rep_decide(ftmw_ctx *cx, int kind, int rank, uint64_t value) {
  impl(cx)->decide(cx, kind, rank, value);
}
int ftmw_rep_end(ftmw_ctx *cx, ftmw_peer *p, int ok, ftmw_msg *m) {
  return impl(cx)->end(cx, p, ok, m);
}
int ftmw_rep_verdict(ftmw_ctx *cx, ftmw_peer *p) {
  return impl(cx)->verdict(cx, p, 0);
}
int ftmw_rep_send_verdict(ftmw_ctx *cx, ftmw_peer *p) {
  return impl(cx)->verdict(cx, p, 1);
}
int ftmw_rep_serve(ftmw_ctx *cx) { return impl(cx)->serve(cx); }

void ftmw_rep_unfollow(ftmw_ctx *cx, int kind, int rank, uint64_t value) {
  ftmw_decision *d = malloc(sizeof(*d));
  if (d == NULL)
    diverged(kind, 0); /* cannot keep it: cannot follow any more */
  d->kind = kind;
  d->rank = rank;
  d->value = value;
  d->number = cx->rep->dec_taken--;
  ftmw_q_insert_head(&cx->rep->decisions, &d->node);
}

int ftmw_wait_locked(ftmw_ctx *cx, int64_t ms) {
  /* A primary answers its replicas while it waits; answering waits for
   * writes, and a wake-up meant for the caller may have come meanwhile. */
  int rc = ftmw_rep_serve(cx) > 0 ? 0 : ftmw_rep_link_wait(cx, ms);
  /* What woke the caller (or what serving it waited for) may be that this
   * master became the primary: it takes over before the caller acts as
   * one. */
  ftmw_rep_catch_up(cx);
  return rc;
}

int ftmw_rep_took_over(ftmw_ctx *cx) {
  return with_replicas(cx) && cx->rep->took_over;
}

/* --- ft_is_primary -------------------------------------------------------- */

/* Tells the replicas this master's ft_is_primary of 1, if it has not yet.
 * Returns 1 if it did. */
static int flush_primary_call(ftmw_ctx *cx) {
  if (!cx->rep->primary_call_pending)
    return 0;
  cx->rep->primary_call_pending = 0;
  ftmw_rep_decide(cx, FTMW_DECIDE_PRIMARY, 0, 1);
  return 1;
}

int ftmw_rep_primary_call(ftmw_ctx *cx) {
  int r;
  uint64_t v;
  flush_primary_call(cx); /* two in a row: the first is told now */
  if (ftmw_rep_follow(cx, FTMW_DECIDE_PRIMARY, -1, &r, &v))
    return 0;
  /* The output it guards follows a path the replicas can follow: not
   * waiting for the ft_is_primary answers since the last other decision
   * (told at this call or before, not awaited), which a master that takes
   * over gives again if they were lost on their way (their output then
   * appears twice). */
  uint64_t n = cx->rep->dec_acted;
  wait_held(cx, n < cx->rep->dec_taken ? n : cx->rep->dec_taken);
  /* One pass of the loop first: a primary that was stopped or starved
   * past FT_TIMEOUT_MS, and replaced meanwhile, finds its FENCE there and
   * exits instead of writing the output a new primary writes. */
  ftmw_wait_locked(cx, 0);
  cx->rep->primary_call_pending = 1;
  return 1;
}
