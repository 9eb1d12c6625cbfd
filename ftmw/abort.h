/* Ending the whole job (ft_abort, MPI_Abort's counterpart).
 *
 * The process that ends the job, and every process that hears of it
 * (an ABORT frame, its exit status in the tag), tells every process it
 * is connected to, then exits with that status once each of them has
 * closed its connection or told it ABORT as well (so every frame it sent
 * was read: no close of a socket with unread data throws it away), or
 * FTMW_ABORT_WAIT_MS after it started. A worker thus reaches the
 * masters, and they every worker and spare. The primary master records
 * the status for ftmwrun. The loop's side (abort.c); ft_abort is api.c's. */
#ifndef FTMW_ABORT_H
#define FTMW_ABORT_H

#include "ctx.h"
#include "peer.h"

#define FTMW_ABORT_WAIT_MS 2000

/* The loop's owner: starts ending the job with status code (0..255),
 * told by peer from (NULL: this process's ft_abort). Once only: later
 * calls change nothing. */
void ftmw_abort_start(ftmw_ctx *cx, int code, const ftmw_peer *from);

/* The loop's owner, at each tick and each connection closed: exits the
 * process if the job is being ended and nobody is left to wait for. */
void ftmw_abort_poll(ftmw_ctx *cx);

/* Once the job is being ended, st.aborting is 1 (any thread may read
 * it, atomically). */

#endif
