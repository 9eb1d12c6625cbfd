/* Master replicas: what a master that took over can tell of the path of
 * the primary it took over from, whose last steps it may not have seen
 * (replica_state.h): whether every live worker's word of it is in, whether
 * it went past an exchange, and whether a path nobody can follow may be
 * abandoned. */
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

void ftmw_rep_abandon(ftmw_ctx *cx, const ftmw_peer *p, uint64_t seq) {
  int alone = 1;
  for (int k = 0; k <= cx->job.M; k++)
    alone &= !ftmw_rep_alive(cx, k);
  char what[64];
  if (seq != 0)
    snprintf(what, sizeof(what), "worker %d's message %llu", p->id,
             (unsigned long long)seq);
  else
    snprintf(what, sizeof(what), "a message of worker %d", p->id);
  if (!alone || seen_outside(cx)) {
    ftmw_trace("unfollowable", "\"worker\":%d,\"seq\":%llu,\"alone\":%d", p->id,
               (unsigned long long)seq, alone);
    ftmw_leave(FTMW_LEAVE_DIVERGED, 0,
               "the primary this master took over from received %s, which "
               "no live master holds, and went on: this master cannot "
               "follow it; leaving the job",
               what);
  }
  /* The old primary's verdicts on exchanges this master has not
   * completed belong to the path dropped: its own decide them now. */
  for (int r = 1; r <= cx->job.W; r++) {
    ftmw_rep_worker *w = &cx->rep->workers[r];
    for (size_t i = 0; i < sizeof(w->verdicts) / sizeof(w->verdicts[0]); i++)
      if (w->verdicts[i].n > w->calls)
        w->verdicts[i].n = 0;
  }
  uint64_t dropped = 0;
  while (!ftmw_q_empty(&cx->rep->decisions)) {
    ftmw_qnode *n = ftmw_q_head(&cx->rep->decisions);
    ftmw_q_remove(n);
    free(FTMW_CONTAINER_OF(n, ftmw_decision, node));
    dropped++;
  }
  ftmw_trace("abandoned", "\"worker\":%d,\"seq\":%llu,\"decisions\":%llu",
             p->id, (unsigned long long)seq, (unsigned long long)dropped);
  ftmw_log("master %d: %s reached only the primary it took over from, "
           "which died; it goes on without what that primary did after it "
           "(%llu decisions, which no live process saw)",
           cx->job.id, what, (unsigned long long)dropped);
}
