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

/* Every master, after an exchange with worker p: counts it; a replica
 * also tells the primary (DONE). */
void ftmw_rep_after(struct ftmw_peer *p);

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
