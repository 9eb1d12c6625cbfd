/* What a layer above the API (the task farm, farm.c and farm_worker.c;
 * the MPI layer) needs of the library beyond the ft_* calls, with
 * timed.h (time) and error.h (ft_error): where this process stands in
 * the job, and messages handed over instead of copied: a send that
 * writes the caller's buffers to the socket as they are and tells the
 * caller when it may reuse them, and a receive that gives the caller the
 * library's own message, into which the socket's bytes were read. Each
 * is ft_isend's or ft_recv's otherwise: same checks, same failure
 * reports, same replica lock-step. Application thread only. */
#ifndef FTMW_OWNED_H
#define FTMW_OWNED_H

#include <stddef.h>
#include <stdint.h>

#include "ftmw.h"
#include "msg.h"

/* A piece of a message, and the most pieces one send takes. owner, if
 * not NULL, is what the send gives back (release) once it no longer uses
 * base. */
typedef struct ftmw_piece {
  const void *base;
  size_t len;
  void *owner;
} ftmw_piece;
#define FTMW_PIECES_MAX 2

/* Gives a piece's owner back: called on the application thread, with the
 * library's lock held (it may not call the library), in some later call
 * once the frame is settled (acknowledged, or its destination failed);
 * at the latest at ft_finalize. */
typedef void (*ftmw_release_fn)(void *owner);

/* ft_isend(..., tag, NULL) of the concatenation of head (copied, a few
 * bytes: a header) and pieces[0..n-1] (n <= FTMW_PIECES_MAX, not copied),
 * to dest. flags is FTMW_FLAG_LAZY (ft_isend's frame: it may wait up to
 * 1 ms for the next one) or FTMW_FLAG_EAGER (ft_send's: written now,
 * acknowledged when the receiver likes). release is called exactly once for each piece's owner: later,
 * once the frame is settled, or before the call returns if it failed or
 * if master replicas (whose sends wait for their ACK) made it copy the
 * pieces. call names the API call that reports dest's failure. Returns 1,
 * or 0 with the error set (ft_isend's). */
int ftmw_isend_owned(const char *call, int dest, int tag, const void *head,
                     size_t headlen, const ftmw_piece *pieces, int n,
                     ftmw_release_fn release, unsigned flags);

/* ft_recv(.., source, tag, status) of a message of any size, handed over
 * in *m (the caller frees it with ftmw_msg_free) instead of copied to a
 * buffer. source may be FT_ANY_SOURCE (a master), and then ms >= 0 gives
 * up after ms milliseconds with nothing taken (*timed_out set, FT_SUCCESS;
 * with replicas, timing out is the primary's decision, which the
 * replicas' same call follows); ms < 0 waits for ever. Returns 1 with *m
 * set, or 0 with *m NULL: the error set, or *timed_out. With master replicas a message the lock-step keeps is
 * copied; out of memory for that copy (FT_ERR_NOMEM) this master has lost
 * it and must leave the job. */
int ftmw_recv_owned(int source, int tag, int64_t ms, ftmw_msg **m,
                    FT_Status *status, int *timed_out);

/* This process in the job: 0 outside ft_init..ft_finalize; else 1,
 * with *master 1 in a master (a replica too), *workers the job's
 * workers and *replicas its master replicas (FT_NUM_MASTERS). */
int ftmw_layer_job(int *master, int *workers, int *replicas);

/* How many times a peer of this process was declared failed (or
 * fenced), ever; read without the library's lock, from any thread. A
 * layer that asks ft_testany() only when this moved since the last time
 * ft_testany() returned 0 (reading it before that call) misses no
 * failure, and spares the lock and the scan of every worker otherwise. */
unsigned long ftmw_failures(void);

#endif
