/* Master replicas (SPEC section 6): the lock-step protocol and failover
 * (see docs/replicas.md), one module. The data path runs every exchange
 * through its sequence: a send in one call (send.c hands over its write),
 * a receive step by step (recv.c); its frames reach it from the
 * transport (ftmw_transport_route); its state is its own
 * (replica_state.h). Every function here is called with st.lock held,
 * from the application thread. */
#ifndef FTMW_REPLICA_H
#define FTMW_REPLICA_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

struct ftmw_peer;
struct ftmw_msg;

/* What the protocol needs of the transport: the transport itself, or a
 * fake in the unit tests (tests/test_replica.c). st.lock held on entry
 * and return of both. */
typedef struct ftmw_rep_link {
  /* Writes a frame without ACK to master k (this process's view of it,
   * st.masters[k]) and waits until it is written or k has failed. */
  void (*send)(ftmw_ctx *cx, int k, int type, int tag, unsigned flags,
               uint64_t seq, const void *data, size_t len);
  /* Runs until anything changes that a caller may wait for, or for at
   * most ms (forever if ms < 0). Returns 0 on a change, -1 on timeout. */
  int (*wait_locked)(ftmw_ctx *cx, int64_t ms);
} ftmw_rep_link;

/* Makes cx's protocol use l (NULL: the transport, the default). */
void ftmw_rep_use_link(ftmw_ctx *cx, const ftmw_rep_link *l);

/* Sets up the protocol's state for cx->job.W workers, cx->rep (before the
 * transport starts: frames may come at once), and routes its frames to
 * it. Returns 0, or -1 out of memory. ftmw_rep_free frees it
 * (ft_finalize). */
int ftmw_rep_init(ftmw_ctx *cx);
void ftmw_rep_free(ftmw_ctx *cx);

/* --- the exchange sequence ---
 * Every exchange of a master with worker p (a send, a receive, a failure
 * reported) runs the same sequence, with st.lock held:
 *
 *   ftmw_rep_begin(p)                  before it
 *   ftmw_rep_follow() / ..._decide()   at each nondeterministic choice
 *   ftmw_rep_end(p, ok, m)             after it
 *
 * A master with replicas runs the replicated implementation; any other
 * process the solo one, where each step does nothing. */

/* Begin: the primary waits until every live replica has reported the
 * previous exchange with p done (a replica still in it may ask for the
 * primary's verdict on it, which only the last outcome answers), whatever
 * this one's outcome (data, or p's failure reported). Returns 1 if it
 * waited (what the caller matched may have changed). */
int ftmw_rep_begin(ftmw_ctx *cx, struct ftmw_peer *p);

/* Decide-or-follow, at a nondeterministic call of that kind (naming worker
 * want_rank, or -1): ftmw_rep_follow returns 1 when the call must follow
 * the primary's decision (then in *rank and *value), which it waits for;
 * 0 when this master decides: it makes the choice and then tells it with
 * ftmw_rep_decide (the primary tells every live replica, in priority
 * order; a replica's call tells nobody). A replica whose call is not the
 * one decided leaves the job (exit 70). The non-zero that ftmw_rep_follow
 * returns is the kind decided (of the two that FTMW_DECIDE_OR allows). */
int ftmw_rep_follow(ftmw_ctx *cx, int kind, int want_rank, int *rank,
                    uint64_t *value);
/* A call that may be decided one of two ways (a receive with a deadline:
 * RECV, or TIMEOUT with rank 0) follows FTMW_DECIDE_OR(kind, alt). */
#define FTMW_DECIDE_OR(kind, alt) ((kind) | (alt) << 8)
#define FTMW_DECIDE_KIND(k) ((k) & 0xff)
#define FTMW_DECIDE_ALT(k) ((k) >> 8)
void ftmw_rep_decide(ftmw_ctx *cx, int kind, int rank, uint64_t value);

/* Puts the decision just followed back (the call returned FT_ERR_TRUNCATE
 * and will be made again). */
void ftmw_rep_unfollow(ftmw_ctx *cx, int kind, int rank, uint64_t value);

/* End, after an exchange with p that succeeded (ok; m: the message
 * received, NULL for a send) or reported p's failure (!ok): counts it and
 * keeps its outcome (and m itself, until the next exchange with p), to
 * answer replicas that suspect that exchange if this master is or becomes
 * primary; a replica tells the primary (DONE). Returns 1 when it keeps m:
 * the caller must not free it. */
int ftmw_rep_end(ftmw_ctx *cx, struct ftmw_peer *p, int ok, struct ftmw_msg *m);

/* When worker p failed during the exchange: the primary's verdict on the
 * same exchange, asked for (SUSPECT) if none came yet, and asked again of
 * a new primary. 1: the primary's exchange succeeded (for a receive, its
 * data is queued here by now): complete this one too; 0: report the
 * failure from this call (also what a master that is primary, or becomes
 * primary, decides when no verdict came). */
int ftmw_rep_verdict(ftmw_ctx *cx, struct ftmw_peer *p);

/* Whatever the protocol needs from a master while it waits: a master that
 * became primary takes over, a replica re-reports to a new primary, the
 * primary tells a pending ft_is_primary and answers SUSPECTs whose
 * exchange has ended. Called by ftmw_wait_locked, at the end of each
 * exchange and in ft_finalize. Returns non-zero if it did anything (the
 * caller then re-checks what it waits for: wake-ups may have come). */
int ftmw_rep_serve(ftmw_ctx *cx);

/* --- a send, one call ---
 * The data path hands the protocol the write of its DATA frame: fn writes
 * it to p (st.lock held, released while it waits) and returns
 * FT_SUCCESS once p has it (written, for an eager send; acknowledged,
 * else), FTMW_REP_UNDELIVERED when it did not get through (p failed or
 * left first; nothing reported yet), or an error it reported itself. */
#define FTMW_REP_UNDELIVERED (-2) /* not an FT_ERR_* code */
typedef struct ftmw_rep_write {
  int (*fn)(ftmw_ctx *cx, struct ftmw_peer *p, void *arg);
  void *arg;
} ftmw_rep_write;

/* A master's send to worker p, its DATA number seq (every master numbers
 * its sends to p alike, sent or not), as one exchange (st.lock held):
 * the primary, once every live replica is done with the previous
 * exchange with p and holds every decision, writes it (w); a replica
 * writes nothing and waits for the worker's word that it has the
 * primary's (ACKED), and if the worker dies first, for the primary's
 * verdict on the same call; a master that takes over meanwhile writes it
 * itself (a worker that had it drops the duplicate). Returns FT_SUCCESS
 * or the error to report, the same in every master. */
int ftmw_rep_send_call(ftmw_ctx *cx, const char *call, struct ftmw_peer *p,
                       uint64_t seq, const ftmw_rep_write *w);

/* A worker's send of DATA (tag, seq: buf, len) to the master it takes
 * for the primary (st.lock held): the same data goes first to every
 * other live master (COPY), which holds it unconfirmed, so that no master
 * can have the message alone; then w writes it to the primary, and again
 * to the master that takes over if the primary dies first; then the
 * others are told which master acknowledged it (CONFIRM). Returns
 * FT_SUCCESS or the error to report. */
int ftmw_rep_worker_send(ftmw_ctx *cx, const char *call, int tag, uint64_t seq,
                         const void *buf, size_t len, const ftmw_rep_write *w);

/* The value of an ft_restore decision on worker p: the outcome code, and
 * on success the new incarnation and the spare it came from. */
uint64_t ftmw_rep_restore_value(int code, const struct ftmw_peer *p);

/* Replica's ft_restore of p, given the primary's decision v: waits until
 * the new incarnation is adopted (a spare's ACTIVATED, a spawned worker's
 * HELLO), or its spare is gone or the launch deadline passed (then the
 * new incarnation counts as failed here). Returns the outcome code; on
 * FT_SUCCESS, *epoch is the incarnation the primary made. When the
 * primary could not restore p, what p left queued is dropped here, as the
 * primary dropped it. */
int ftmw_rep_follow_restore(ftmw_ctx *cx, struct ftmw_peer *p, uint64_t v,
                            uint32_t *epoch);

/* ft_is_primary with replicas: 1 in the master that decides this call
 * (the primary); 0 in a replica, which follows the primary's answer. The
 * primary tells the replicas at its next call into the library, after
 * the output ft_is_primary guards: if it dies before, the master that
 * takes over answers 1 at the same call and writes that output. */
int ftmw_rep_primary_call(ftmw_ctx *cx);

/* Every wait of the library (st.lock held, released meanwhile): a
 * primary first answers its replicas (ftmw_rep_serve), then the loop
 * runs until anything changes that a caller may wait for, or for at most
 * ms (forever if ms < 0). Returns 0 on a change, -1 on timeout. */
int ftmw_wait_locked(ftmw_ctx *cx, int64_t ms);

#endif
