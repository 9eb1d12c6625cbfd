/* Master replicas (SPEC section 6): the lock-step protocol's pieces that
 * the data path (api.c) calls. Failure-free part only so far (see
 * docs/design-replicas.md). Every function is called with st.lock held,
 * from the application thread. */
#ifndef FTMW_REPLICA_H
#define FTMW_REPLICA_H

#include <stddef.h>
#include <stdint.h>

struct ftmw_peer;

/* This master is a replica (not the primary). */
int ftmw_rep_is_replica(void);

/* Primary: before an exchange with worker p, waits until every live
 * replica has reported the previous exchange with p done. */
void ftmw_rep_before(struct ftmw_peer *p);

struct ftmw_msg;

/* Every master, after an exchange with worker p that succeeded (m: the
 * message received, NULL for a send) or reported p's failure: counts it;
 * a replica tells the primary (DONE); the primary keeps the outcome (and
 * a copy of m) to answer replicas that suspect that exchange. */
void ftmw_rep_after(struct ftmw_peer *p, const struct ftmw_msg *m);
void ftmw_rep_failed(struct ftmw_peer *p);

/* Replica, when worker p failed during its exchange: asks the primary
 * (SUSPECT) and waits for its VERDICT. 1: the primary's exchange
 * succeeded (for a receive, its data is queued by now): complete this one
 * too; 0: report the failure from this call. */
int ftmw_rep_verdict(struct ftmw_peer *p);

/* Primary: answers the replicas' SUSPECTs whose exchange has ended.
 * Called by ftmw_wait_locked, so wherever the primary waits. Returns how
 * many it answered (the caller then re-checks what it waits for: wake-ups
 * may have come while it was answering). */
int ftmw_rep_serve(void);

/* Replica's ft_send to worker p: sends nothing, waits until the worker
 * has acknowledged the primary's DATA of the same call. Returns
 * FT_SUCCESS, or the error of p's failure. */
int ftmw_rep_send(struct ftmw_peer *p);

/* Worker, after the primary acknowledged its DATA (tag, seq): sends the
 * same data to every live replica (COPY) and waits until it is written. */
void ftmw_rep_copy(int tag, uint64_t seq, const void *buf, size_t len);

/* Primary: tells every live replica which message (worker rank, seq) its
 * FT_ANY_SOURCE receive or ft_waitany took. */
void ftmw_rep_decide(int rank, uint64_t seq);

/* Replica: the primary's next decision. Returns 0, or -1 if the primary
 * is gone. */
int ftmw_rep_decision(int *rank, uint64_t *seq);

/* Replica: puts a decision back at the head of the queue (the call that
 * took it returned FT_ERR_TRUNCATE and will be made again). */
void ftmw_rep_undecide(int rank, uint64_t seq);

#endif
