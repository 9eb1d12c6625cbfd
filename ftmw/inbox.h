/* Inbound application data: DATA and COPY from a peer, and KEPT's data
 * (replica.c). Each is queued once for the application's receives
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

/* Queues m, a message from p, for the application's receives, unless it
 * is a duplicate (then frees it): a KEPT's data, as its COPY would have
 * been queued. */
void ftmw_inbox_push(ftmw_peer *p, ftmw_msg *m);

/* This master has just become primary: the DATA it held is taken and
 * acknowledged, as if it came now. */
void ftmw_inbox_release_held(void);

/* Frees the DATA held from worker p: p is gone. */
void ftmw_inbox_drop_held(ftmw_peer *p);

#endif
