/* A peer goes down: the transport's side of a failure (peer.h has the
 * lifecycle): its connection fenced and closed, the primary's succession,
 * what it left held, the replicas told. */
#ifndef FTMW_DOWN_H
#define FTMW_DOWN_H

#include "ctx.h"
#include "peer.h"

/* Declares p failed (or finished, when done), fences it and wakes every
 * call waiting on it; the one way a connected peer goes (the loop's
 * owner, st.lock not held). A primary's death makes the next live master
 * primary (failover, SPEC section 6); a master that finds itself primary
 * takes over at its next wait (ftmw_rep_serve). A master writes FENCE on
 * a live peer's connection while it still works, then closes it: a
 * process declared failed while alive (stopped, starved, cut off past
 * FT_TIMEOUT_MS) exits as soon as it reads it, instead of acting on a
 * view of the job that nobody shares any more. */
void ftmw_peer_down(ftmw_ctx *cx, ftmw_peer *p, int done, const char *why);

/* A worker of a job with replicas tells its primary, if that is not
 * master 0 (which never takes over), that it takes it for primary
 * (MARK), on its connection to it: every ACKED it sent that master
 * before, of a DATA of the master it took for primary before, arrives
 * first. Called when the primary changes (ftmw_peer_down, which read
 * every frame of the dead primary first) and when a spare becomes this
 * worker; a worker that starts with another primary than master 0 marks
 * it in ft_init (launch.c). A master that took over waits for these
 * before it decides a send nobody has a verdict on (replica.c, marked).
 * The loop's owner, st.lock not held. */
void ftmw_mark_primary(ftmw_ctx *cx);

#endif
