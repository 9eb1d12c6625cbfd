/* The replica protocol's state (replica_state.h), which masters
 * replicate with this one, and the drop of a dead primary's path:
 * defined apart, so that the protocol's parts
 * (replica.c, replica_calls.c and replica_outcomes.c on the application
 * thread, replica_frames.c on the loop's owner) use them without
 * depending on each other both ways. */
#include "ftmw_impl.h"
#include "peer.h"
#include "replica_state.h"

#include <stdlib.h>

ftmw_rep_worker *ftmw_rep_of(ftmw_ctx *cx, int rank) {
  return &cx->rep->workers[rank];
}

int ftmw_rep_alive(ftmw_ctx *cx, int k) {
  return k != cx->job.id && ftmw_peer_is_up(&cx->st.masters[k]);
}

uint64_t ftmw_rep_drop_after(ftmw_ctx *cx, uint64_t n) {
  ftmw_rep_state *rs = cx->rep;
  uint64_t dropped = 0;
  for (ftmw_qnode *q = rs->decisions.next; q != &rs->decisions;) {
    ftmw_decision *d = FTMW_CONTAINER_OF(q, ftmw_decision, node);
    q = q->next;
    if (d->number > n) {
      ftmw_q_remove(&d->node);
      free(d);
      dropped++;
    }
  }
  for (int i = 0; i < FTMW_REP_HISTORY; i++)
    if (rs->history[i].number > n)
      rs->history[i].number = 0;
  if (rs->dec_rcvd > n)
    rs->dec_rcvd = n;
  if (rs->learned > n)
    rs->learned = n;
  for (int r = 1; r <= cx->job.W; r++) {
    ftmw_rep_worker *w = &rs->workers[r];
    for (size_t i = 0; i < sizeof(w->verdicts) / sizeof(w->verdicts[0]); i++)
      if (w->verdicts[i].n > w->calls)
        w->verdicts[i].n = 0;
  }
  return dropped;
}
