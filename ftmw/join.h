/* Who a connection is: a process's HELLO (join.c), the WELCOME that
 * answers it, the adoption of a worker's new incarnation by a replica,
 * and a spare becoming a worker. The transport (transport.c) hands these
 * frames over once the link has checked the job's secret; everything
 * here runs on the thread that owns the loop, except ftmw_join_start and
 * ftmw_self_place. */
#ifndef FTMW_JOIN_H
#define FTMW_JOIN_H

#include "ctx.h"
#include "link.h"
#include "peer.h"
#include "wire.h"

/* Reads where this process runs (job.host set: into job.place) and tells
 * the transport's link (cx->link) who this process is, which this module
 * tells again when a spare becomes a worker. Before the loop runs. */
void ftmw_join_start(ftmw_ctx *cx);

/* Where this process runs (set by ftmw_join_start). Any thread. */
const ftmw_place *ftmw_self_place(ftmw_ctx *cx);

/* The link's on_hello (link.h): binds c to the peer the HELLO names, if
 * it is the incarnation this process waits for (or, in a replica, a later
 * one the primary restored), and welcomes it. */
int ftmw_join_hello(void *ctx, ftmw_conn *c, const ftmw_hello *hello,
                    const char **reject);

/* ACTIVATE from master p on c, h checked (a spare, a worker's id): this
 * spare becomes worker h->tag, incarnation h->seq, and tells every
 * master. */
void ftmw_join_activate(ftmw_ctx *cx, ftmw_conn *c, ftmw_peer *p,
                        const ftmw_hdr *h);

/* ACTIVATED from spare sp on c, in a master: it adopts c as the worker's
 * new incarnation. Returns non-zero when it put sp down (a malformed
 * frame). */
int ftmw_join_adopt(ftmw_ctx *cx, ftmw_conn *c, ftmw_peer *sp,
                    const ftmw_hdr *h);

#endif
