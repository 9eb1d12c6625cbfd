/* Master replicas when the primary changes. What each master sends then:
 * the one that takes over, its last decisions; a replica, what it holds
 * (its exchanges, the workers' messages, verdicts, ACKEDs, decisions,
 * SYNC). And what a master that took over can tell of the path of the
 * primary it took over from, whose last steps it may not have seen
 * (replica_state.h): whether every live worker's word of it is in,
 * whether it went past an exchange, and whether a path nobody can follow
 * may be abandoned. */
#include "ftmw_impl.h"
#include "leave.h"
#include "peer.h"
#include "replica_state.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>

/* Whether every live worker has told this master, which took over, that
 * it takes it for primary (MARK, down.h): each did so after reading the
 * last frame of the dead primary, and after the ACKED of every DATA of it
 * that it took, on the same connection. Before, a worker's ACKED that
 * shows the old primary went on may still be on its way (ftmw-sim seed
 * 865070: the new primary reported a failure at a send the old one had
 * completed before giving another worker its next task, gave that worker
 * another task under the number the old one had used, which it dropped as
 * a duplicate, and got the old task's result). A worker cut off from this
 * master is failed in the end (FT_TIMEOUT_MS), fenced if alive; one that
 * still reaches an old primary alive (one replica, a partition between
 * the masters alone) never marks: docs/replicas.md, Limits. */
int ftmw_rep_marked(ftmw_ctx *cx) {
  for (int r = 1; r <= cx->job.W; r++)
    if (ftmw_peer_is_up(&cx->st.workers[r]) &&
        cx->rep->workers[r].marked != (uint64_t)cx->st.workers[r].epoch + 1)
      return 0;
  return 1;
}

/* Whether a worker ACKed a DATA of the old primary that this master has
 * not numbered yet (every master numbers its sends to a worker alike, and
 * this one numbered those of every earlier call). */
static int acked_past(ftmw_ctx *cx) {
  for (int r = 1; r <= cx->job.W; r++)
    if (cx->rep->workers[r].acked_seq > cx->rep->workers[r].numbered)
      return 1;
  return 0;
}

int ftmw_rep_went_past(ftmw_ctx *cx) {
  return !ftmw_q_empty(&cx->rep->decisions) || acked_past(cx);
}

int ftmw_rep_took_past(ftmw_ctx *cx, const ftmw_peer *p) {
  const ftmw_rep_worker *w = ftmw_rep_of(cx, p->id);
  if (ftmw_rep_verdict_of(w, w->calls + 1) == 0)
    return 0; /* it reported p's failure there, and told it first */
  return ftmw_rep_went_past(cx);
}

/* Whether the old primary's decisions queued here tell of something a
 * live process saw: an output (ft_is_primary answered 1) or a restore
 * (a spare activated, a process spawned). */
static int seen_outside(ftmw_ctx *cx) {
  for (ftmw_qnode *n = ftmw_q_head(&cx->rep->decisions);
       n != &cx->rep->decisions; n = n->next) {
    int kind = FTMW_CONTAINER_OF(n, ftmw_decision, node)->kind;
    if (kind == FTMW_DECIDE_PRIMARY || kind == FTMW_DECIDE_RESTORE)
      return 1;
  }
  return acked_past(cx);
}

int ftmw_rep_caught_up(ftmw_ctx *cx) {
  for (int k = 0; k <= cx->job.M; k++)
    for (int r = 1; r <= cx->job.W && ftmw_rep_alive(cx, k); r++)
      if (cx->rep->workers[r].done_by[k] < cx->rep->workers[r].calls)
        return 0;
  return 1;
}

int ftmw_rep_abandoning(ftmw_ctx *cx) {
  for (int k = 0; k <= cx->job.M; k++)
    if (ftmw_rep_alive(cx, k) && cx->rep->abandoning[k])
      return 1;
  return 0;
}

void ftmw_rep_abandon(ftmw_ctx *cx, const ftmw_peer *p, uint64_t seq) {
  char what[64];
  if (seq != 0)
    snprintf(what, sizeof(what), "worker %d's message %llu", p->id,
             (unsigned long long)seq);
  else
    snprintf(what, sizeof(what), "a message of worker %d", p->id);
  if (seen_outside(cx)) {
    ftmw_trace("unfollowable", "\"worker\":%d,\"seq\":%llu", p->id,
               (unsigned long long)seq);
    ftmw_leave(FTMW_LEAVE_DIVERGED, 0,
               "the primary this master took over from received %s, which "
               "no live master holds, and went on: this master cannot "
               "follow it; leaving the job",
               what);
  }
  /* The live replicas hold the same path (synced): they drop it with
   * this master, once each stands where this master does, so that a
   * verdict each holds past that point is of the path dropped too, and
   * before this master decides anything afresh: the decisions it makes
   * now bear the numbers of those dropped (ftmw-sim seeds 4650070,
   * 4666456: with two replicas, the first to take over left the job). */
  uint64_t n = cx->rep->dec_taken;
  uint64_t dropped = ftmw_rep_drop_after(cx, n);
  ftmw_decision d = {.kind = FTMW_DECIDE_ABANDON, .number = n};
  for (int k = 0; k <= cx->job.M; k++)
    if (ftmw_rep_alive(cx, k)) {
      cx->rep->abandoning[k] = 1;
      cx->rep->dec_held[k] = n;
      ftmw_rep_send_decision(cx, k, &d);
    }
  ftmw_trace("abandoned", "\"worker\":%d,\"seq\":%llu,\"decisions\":%llu",
             p->id, (unsigned long long)seq, (unsigned long long)dropped);
  ftmw_log("master %d: %s reached only the primary it took over from, "
           "which died; it goes on without what that primary did after it "
           "(%llu decisions, which no live process saw)",
           cx->job.id, what, (unsigned long long)dropped);
}

/* --- what a master tells when the primary changed ----------------------- */

/* Sends master k, as KEPT, every message of worker p that this master
 * holds and its program has not received (flags 0), then those it holds
 * unconfirmed (FTMW_FLAG_UNCONFIRMED): a worker's COPY may have reached
 * this replica and not the master that took over, which would then
 * decide without it (ftmw-sim seed 9690: it reported the worker's
 * failure where this replica received the message). Copied first: the
 * lock is released while each goes. */
static void send_inbox(ftmw_ctx *cx, int k, ftmw_peer *p) {
  /* First the messages of the exchanges with p that this master completed
   * and still keeps, in their order: a new primary behind this replica
   * asks for them (SUSPECT), and a later one of the inbox must not reach
   * it first, where its receive from p would take it (ftmw-sim seed
   * 4188566: it took the worker's second part for its first). */
  const ftmw_rep_worker *w = ftmw_rep_of(cx, p->id);
  for (uint64_t j = 0; j < w->kept; j++) {
    const ftmw_rep_outcome *o =
        ftmw_rep_outcome_of(w, w->calls - w->kept + 1 + j);
    ftmw_msg *m = o && o->ok && o->msg ? ftmw_rep_kept_of(p, o->msg) : NULL;
    if (m)
      ftmw_rep_send_kept(cx, k, m, 0);
    ftmw_msg_free(m);
  }
  size_t n = 0, i = 0, confirmed;
  ftmw_qnode *q;
  ftmw_q_foreach(q, &p->inbox) n++;
  confirmed = n;
  ftmw_q_foreach(q, &p->unconfirmed) n++;
  if (n == 0 || !ftmw_rep_alive(cx, k))
    return;
  ftmw_msg **v = calloc(n, sizeof(*v));
  if (v == NULL)
    return; /* it decides without them, as before */
  ftmw_q_foreach(q, &p->inbox) v[i++] = FTMW_CONTAINER_OF(q, ftmw_msg, by_peer);
  ftmw_q_foreach(q, &p->unconfirmed) v[i++] =
      FTMW_CONTAINER_OF(q, ftmw_msg, by_peer);
  for (i = 0; i < n && (v[i] = ftmw_rep_kept_of(p, v[i])) != NULL; i++)
    ;
  for (size_t j = 0; j < i; j++) {
    ftmw_rep_send_kept(cx, k, v[j], j < confirmed ? 0 : FTMW_FLAG_UNCONFIRMED);
    ftmw_msg_free(v[j]);
  }
  free(v);
}

/* Sends master k the verdicts this replica holds on exchanges with worker
 * r it has not completed: the primary that died may have told them to it
 * alone (a partition held the others' copy), and the master that took
 * over must follow them (a receive's data, if it succeeded, went as KEPT
 * first: it is in this master's inbox, or unconfirmed). */
static void send_verdicts(ftmw_ctx *cx, int k, int r) {
  const ftmw_rep_worker *w = &cx->rep->workers[r];
  for (size_t i = 0; i < sizeof(w->verdicts) / sizeof(w->verdicts[0]); i++)
    if (w->verdicts[i].n > w->calls && ftmw_rep_alive(cx, k))
      ftmw_rep_send_master(cx, k, FTMW_FRAME_VERDICT, r,
                           w->verdicts[i].ok ? FTMW_FLAG_OK : 0,
                           w->verdicts[i].n, NULL, 0);
}

/* Sends master k the last decisions this master received, oldest first:
 * what k lacks of them it queues, the rest are duplicates. */
static void send_history(ftmw_ctx *cx, int k) {
  uint64_t from = cx->rep->dec_rcvd >= FTMW_REP_HISTORY
                      ? cx->rep->dec_rcvd - FTMW_REP_HISTORY + 1
                      : 1;
  for (uint64_t n = from; n <= cx->rep->dec_rcvd && ftmw_rep_alive(cx, k); n++)
    if (cx->rep->history[n % FTMW_REP_HISTORY].number == n)
      ftmw_rep_send_decision(cx, k, &cx->rep->history[n % FTMW_REP_HISTORY]);
}

/* A master that took over and got from one replica (its history, before
 * SYNC) a decision of the old primary that another replica's SYNC said it
 * lacks sends that one its history: else the replica never gets it (the
 * history this master sent at the takeover was older), waits for ever
 * for it, and refuses this master's next decision as out of order. Only
 * with three replicas or more: with two, the one that had it is the
 * other. */
int ftmw_rep_fill_gaps(ftmw_ctx *cx) {
  int sent = 0;
  for (int k = 0; k <= cx->job.M && cx->rep->took_over; k++)
    if (ftmw_rep_alive(cx, k) && cx->rep->synced[k] &&
        cx->rep->dec_held[k] < cx->rep->learned &&
        cx->rep->filled[k] < cx->rep->learned) {
      cx->rep->filled[k] = cx->rep->learned; /* sent up to dec_rcvd */
      send_history(cx, k);
      sent++;
    }
  return sent;
}

/* This master noticed that the primary changed. If it is now the primary,
 * it resends the last decisions it received (a replica behind it may have
 * missed some: with a partition, more than the last), and decides nothing
 * until every live replica has sent what it holds (synced); otherwise it
 * sends the new primary that:
 * the exchanges it has completed, the workers' messages it holds, the
 * verdicts it has not followed yet, the last DATA each worker said it
 * ACKed (ftmw-sim seed 32094: a partition held the worker's ACKED to the
 * master that took over, which reported the send failed where this
 * replica had completed it), the decisions it received, SYNC. */
void ftmw_rep_primary_changed(ftmw_ctx *cx) {
  cx->rep->seen_primary = cx->st.primary;
  if (cx->st.primary == cx->job.id) {
    ftmw_trace("role_change", "\"role\":\"primary\",\"decisions\":%llu",
               (unsigned long long)cx->rep->dec_rcvd);
    ftmw_log("master %d takes over as primary", cx->job.id);
    cx->rep->took_over = 1; /* once: a primary never steps down and stays */
    for (int k = 0; k <= cx->job.M; k++)
      send_history(cx, k);
    return;
  }
  /* It reports the exchanges it has completed (its DONEs went to the old
   * one). The new primary may also lack the old one's last decisions,
   * which this replica holds (ftmw-sim seed 5347: one held by a partition
   * on its way there): it gets them, then SYNC, after which it knows all
   * this replica knows, before it decides anything. */
  for (int r = 1; r <= cx->job.W; r++) {
    if (cx->rep->workers[r].calls > 0 &&
        ftmw_peer_is_up(&cx->st.masters[cx->st.primary]))
      ftmw_rep_send_master(cx, cx->st.primary, FTMW_FRAME_DONE, r, 0,
                           cx->rep->workers[r].calls, NULL, 0);
  }
  for (int r = 1; r <= cx->job.W; r++) {
    send_inbox(cx, cx->st.primary, &cx->st.workers[r]);
    send_verdicts(cx, cx->st.primary, r);
    if (cx->rep->workers[r].acked_seq > 0 && ftmw_rep_alive(cx, cx->st.primary))
      ftmw_rep_send_master(cx, cx->st.primary, FTMW_FRAME_ACKED, r, 0,
                           cx->rep->workers[r].acked_seq, NULL, 0);
  }
  send_history(cx, cx->st.primary);
  if (ftmw_rep_alive(cx, cx->st.primary))
    ftmw_rep_send_decision(cx, cx->st.primary,
                           &(ftmw_decision){.kind = FTMW_DECIDE_SYNC,
                                            .number = cx->rep->dec_rcvd});
}
