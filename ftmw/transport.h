/* The transport: the job's peers over the link layer (link.h), on the
 * process's one loop (loop.h). It starts both, decides who a connection
 * is, gives each frame its meaning for this process's role, and carries
 * out the work the application hands it through ftmw_transport_submit at
 * the caller's next wait (a call that waits runs the loop on its own
 * thread; the I/O thread runs it the rest of the time). */
#ifndef FTMW_TRANSPORT_H
#define FTMW_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "link.h"
#include "op.h"
#include "peer.h"

/* Creates the loop and, in a master, the listener on st.listen_ip (port
 * chosen by the kernel, stored in st.listen_port), then starts the thread.
 * Returns FT_SUCCESS or an FT_ERR_* code after logging why. */
int ftmw_transport_start(ftmw_ctx *cx, int listen);

/* Queues op for the loop; the caller's ftmw_op_wait_locked on it carries
 * it out. The caller keeps op alive until op->out.done (an atomic: link.h).
 * lock_held says whether the caller already holds st.lock. */
void ftmw_transport_submit(ftmw_ctx *cx, ftmw_op *op, int lock_held);

/* Closes every connection and joins the thread. Application thread. */
void ftmw_transport_stop(ftmw_ctx *cx);

/* Milliseconds this process's loop has not run so far, over all its
 * stalls (traced `stalled`): time in which it watched nobody. Any thread. */
uint64_t ftmw_transport_stalled_ms(ftmw_ctx *cx);

/* Prepares op to carry one frame to peer p (its current incarnation):
 * type, tag, flags and data (NULL/0 for none). seq is left for the caller
 * (DATA numbers its frames per peer). */
void ftmw_op_frame(ftmw_ctx *cx, ftmw_op *op, ftmw_peer *p, int type, int tag,
                   unsigned flags, const void *data, size_t len);
/* The same, its data in n <= FTMW_OUT_BUFS - 1 pieces, written in order
 * with no copy (the caller keeps them alive as it would data). */
void ftmw_op_frame_v(ftmw_ctx *cx, ftmw_op *op, ftmw_peer *p, int type, int tag,
                     unsigned flags, const uv_buf_t *pieces, unsigned n);

/* Blocks (st.lock held, released meanwhile), running the loop, until
 * op->out.done and, for ACKed frames, until the ACK or the peer's failure.
 * Returns 0 when acknowledged/written, else FT_ERR_PEER_FAILED. */
int ftmw_op_wait_locked(ftmw_ctx *cx, ftmw_op *op);

/* Runs the loop (st.lock held, released meanwhile) until anything changes
 * that a caller may wait for, or for at most ms (or forever if ms < 0).
 * Returns 0 on wake-up, -1 on timeout. Callers use ftmw_wait_locked
 * (replica.h), which answers the replicas first. */
int ftmw_transport_wait_locked(ftmw_ctx *cx, int64_t ms);

/* A handler for frames of one type from peer p (the loop's owner, st.lock
 * not held): it owns payload (ftmw_msg_free_data), and returns non-zero
 * when it put p down. */
typedef int (*ftmw_frame_fn)(ftmw_ctx *cx, ftmw_peer *p, const ftmw_hdr *h,
                             void *payload);

/* Frames of that type, once they have passed the transport's checks
 * (identity, epoch, a new primary's order), go to fn: how a module above
 * the transport (the replica protocol) receives its own frames without
 * the transport knowing it. Set before ftmw_transport_start. */
void ftmw_transport_route(ftmw_ctx *cx, int type, ftmw_frame_fn fn);

#endif
