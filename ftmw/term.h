/* SIGTERM: a batch system's time limit (Slurm sends it to every process
 * of the job, then SIGKILL KillWait seconds later, 30 s by default),
 * scancel, a kill. From ft_init's start of the transport to ft_finalize,
 * every process takes it on its loop (its handler hands it to the loop)
 * and does not die of it:
 *  - a master's receive that would wait reports FT_ERR_TERMINATED from
 *    then on (recv.c), so that its program writes what it has and calls
 *    ft_finalize (with replicas, the primary's receive from several
 *    sources decides it and the replicas' same call follows); the
 *    primary's FIN then says the job is being stopped
 *    (FTMW_FLAG_STOPPING);
 *  - a worker goes on until the primary's ft_finalize, as at any end (a
 *    spare too: it ends at the BYE, in ft_init). If that FIN comes while
 *    its program computes (in no call that waits) and the job is being
 *    stopped, or it had SIGTERM itself, it does not finish: it answers
 *    FIN (FTMW_FLAG_LEAVING: it will not reach MPI_Finalize, so the
 *    primary's BYE says MPI_Finalize is not safe) and leaves at the BYE.
 * A process still running FT_TERM_GRACE_MS after its SIGTERM leaves (the
 * primary records 143 for ftmwrun first). With FT_TERM_GRACE_MS=0 the
 * signal keeps its default action: the process ends at once. From the
 * loop's last pass in ft_finalize until it returns, a SIGTERM does
 * nothing (the process is ending MPI); after, one has its default action
 * again, unless one came before (then a late copy is ignored: the
 * process is ending).
 *
 * The loop's owner runs everything here, but ftmw_term_requested (any
 * thread). */
#ifndef FTMW_TERM_H
#define FTMW_TERM_H

#include <stdint.h>
#include <uv.h>

#include "ctx.h"

/* A process that leaves because of SIGTERM exits with 143 (leave.h:
 * FTMW_LEAVE_TERMINATED), 128 + 15, what the signal's default action
 * gives. */

/* Takes SIGTERM on loop from now on, unless grace_ms is 0, and tells it
 * to cx's waiting calls. Returns 0, or a libuv error (SIGTERM then keeps
 * its default). */
int ftmw_term_start(ftmw_ctx *cx, uv_loop_t *loop, int grace_ms);

/* In the loop's last pass (ft_finalize): the loop takes SIGTERM no more;
 * the handler still does, and drops it, so that a late copy cannot kill
 * the process before it ends MPI. */
void ftmw_term_close(void);

/* At the end of ft_finalize, MPI ended: SIGTERM has its default action
 * again (the handler's doing), or is ignored if one came already, with no
 * moment in between where a late copy could kill the process. */
void ftmw_term_end(void);

/* 1 once this process has had SIGTERM. */
int ftmw_term_requested(void);

/* At each tick: a process still running its grace after SIGTERM leaves. */
void ftmw_term_poll(ftmw_ctx *cx, uint64_t now);

/* A FIN (bye 0; stopping: it says FTMW_FLAG_STOPPING) or a BYE (bye 1)
 * from the primary master. In a worker whose job is being stopped (the
 * FIN says so, or it had SIGTERM) and whose program computes, now or at a
 * later tick: tells every master it leaves (FIN), then leaves once the
 * BYE has come. Nothing in other processes. */
void ftmw_term_on_primary_end(ftmw_ctx *cx, int bye, int stopping);

#endif
