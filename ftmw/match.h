/* Inbound messages: their memory, and matching (per-source order,
 * FT_ANY_TAG and FT_ANY_SOURCE), pure list logic over ftmw_msg for which
 * callers hold st.lock. */
#ifndef FTMW_MATCH_H
#define FTMW_MATCH_H

#include "ftmw.h" /* FT_ANY_TAG */
#include "msg.h"
#include "mslog.h" /* FTMW_TAG_BCAST */
#include "peer.h"
#include "queue.h"

/* Queues m (from peer p) at the tail of p->inbox and of arrivals. */
void ftmw_match_push(ftmw_qnode *arrivals, ftmw_peer *p, ftmw_msg *m);

/* The oldest message from p with tag (or any tag), or NULL. */
ftmw_msg *ftmw_match_peer(ftmw_peer *p, int tag);

/* The message from p with sequence number seq, or NULL. */
ftmw_msg *ftmw_match_seq(ftmw_peer *p, uint64_t seq);

/* The oldest message from any source with tag (or any tag), or NULL. */
ftmw_msg *ftmw_match_any(ftmw_qnode *arrivals, int tag);

/* The oldest message that completes a posted receive of workers[1..W], or
 * NULL. posted(ctx, &workers[rank], &tag) says whether that worker has a
 * receive posted, and for which tag. */
ftmw_msg *ftmw_match_posted(ftmw_qnode *arrivals, ftmw_peer *workers, int W,
                            int (*posted)(void *ctx, const ftmw_peer *w,
                                          int *tag),
                            void *ctx);

/* Unlinks m from both queues; the caller then owns it. */
void ftmw_match_take(ftmw_msg *m);

/* Frees every queued message from p (a fenced incarnation), and those
 * held unconfirmed (inbox.h). Returns how many queued were dropped. */
int ftmw_match_drop(ftmw_peer *p);

/* FT_ANY_TAG matches every application tag, never a broadcast's. */
static inline int ftmw_tag_matches(int want, int tag) {
  return want == tag || (want == FT_ANY_TAG && tag != FTMW_TAG_BCAST);
}

#endif
