/* The replica protocol's state (replica_state.h), and which masters
 * replicate with this one: defined apart, so that the protocol's parts
 * (replica.c, replica_calls.c and replica_outcomes.c on the application
 * thread, replica_frames.c on the loop's owner) use them without
 * depending on each other both ways. */
#include "ftmw_impl.h"
#include "peer.h"
#include "replica_state.h"

ftmw_rep_worker *ftmw_rep_of(ftmw_ctx *cx, int rank) {
  return &cx->rep->workers[rank];
}

int ftmw_rep_alive(ftmw_ctx *cx, int k) {
  return k != cx->job.id && ftmw_peer_is_up(&cx->st.masters[k]);
}
