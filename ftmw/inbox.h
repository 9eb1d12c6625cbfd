/* Inbound application data: DATA and COPY from a peer, KEPT from the
 * primary. Each is queued once for the application's receives
 * (duplicates that failover makes are dropped), DATA is acknowledged, and
 * a master with replicas that is not primary holds a worker's DATA until
 * it becomes primary or the worker is gone (SPEC section 6). The loop's
 * owner only; st.lock not held. */
#ifndef FTMW_INBOX_H
#define FTMW_INBOX_H

#include "ftmw_impl.h"

/* DATA or COPY h from peer p on c, payload its data (NULL when empty):
 * queued, or held. Returns 0, or -1 when out of memory (p must go). */
int ftmw_inbox_data(ftmw_conn *c, ftmw_peer *p, const ftmw_hdr *h,
                    void *payload);

/* KEPT h from master p: a dead worker's data the primary had, queued as
 * its COPY would have been. Returns 0, or -1 when malformed. */
int ftmw_inbox_kept(ftmw_peer *p, const ftmw_hdr *h, void *payload);

/* Replica: DECIDE d arrived (st.lock held). Returns 0 (queued), 1 (a
 * decision it has: a new primary's resend), or -1 if its number does not
 * follow the last one (protocol error). */
int ftmw_inbox_decision_locked(const ftmw_decision *d);

/* This master has just become primary: the DATA it held is taken and
 * acknowledged, as if it came now. */
void ftmw_inbox_release_held(void);

/* Frees the DATA held from worker p: p is gone. */
void ftmw_inbox_drop_held(ftmw_peer *p);

#endif
