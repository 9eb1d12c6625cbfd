/* Inbound application data: DATA and COPY from a peer, and KEPT's data
 * (replica.c). Each is queued once for the application's receives
 * (duplicates that failover makes are dropped), DATA is acknowledged, and
 * a master with replicas that is not primary holds a worker's DATA until
 * it becomes primary or the worker is gone (SPEC section 6).
 *
 * A worker's COPY reaches a replica before its DATA reaches the primary,
 * so that no master can have the message alone; the replica holds it
 * unconfirmed, out of every receive's sight, until it learns that a
 * master took the DATA: the worker's CONFIRM, the primary's KEPT, a
 * decision naming it, or (a master that took over, with no word from the
 * old primary) its own judgement (replica.c).
 *
 * The loop's owner, st.lock not held, unless the name says _locked. */
#ifndef FTMW_INBOX_H
#define FTMW_INBOX_H

#include "ftmw_impl.h"

/* DATA or COPY h from peer p on c, payload its data (NULL when empty):
 * queued, or held. Returns 0, or -1 when out of memory (p must go). */
int ftmw_inbox_data(ftmw_ctx *cx, ftmw_conn *c, ftmw_peer *p, const ftmw_hdr *h,
                    void *payload);

/* Worker p's message m, which another master kept (KEPT): queued as its
 * DATA would be, or held as its COPY was when unconfirmed there; dropped
 * if m->epoch, the incarnation that sent it, is not p's here (what an
 * incarnation left is dropped with it: this master has begun a later one,
 * or not yet the later one the sender has) or it is a duplicate. */
void ftmw_inbox_kept(ftmw_ctx *cx, ftmw_peer *p, ftmw_msg *m, int unconfirmed);

/* Queues worker p's unconfirmed message number seq (0: every one) for the
 * receives, as if its DATA had come. Returns how many it queued. */
int ftmw_inbox_confirm_locked(ftmw_ctx *cx, ftmw_peer *p, uint64_t seq);

/* This master has just become primary: the DATA it held is taken and
 * acknowledged, as if it came now. */
void ftmw_inbox_release_held(ftmw_ctx *cx);

/* Frees the DATA held from worker p: p is gone. */
void ftmw_inbox_drop_held(ftmw_peer *p);

#endif
