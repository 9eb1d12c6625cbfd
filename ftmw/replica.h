/* Master replicas (SPEC section 6): the lock-step protocol's pieces that
 * the data path (api.c) calls, and failover (see docs/replicas.md). Every
 * function is called with st.lock held, from the application thread
 * (DECIDE frames arrive in inbox.c). */
#ifndef FTMW_REPLICA_H
#define FTMW_REPLICA_H

#include <stddef.h>
#include <stdint.h>

struct ftmw_peer;
struct ftmw_msg;
struct ftmw_decision;

/* What the protocol needs of the transport: the transport itself, or a
 * fake in the unit tests (tests/test_replica.c). st.lock held on entry
 * and return of both. */
typedef struct ftmw_rep_link {
  /* Writes a frame without ACK to master k (this process's view of it,
   * st.masters[k]) and waits until it is written or k has failed. */
  void (*send)(int k, int type, int tag, unsigned flags, uint64_t seq,
               const void *data, size_t len);
  /* Runs until anything changes that a caller may wait for, or for at
   * most ms (forever if ms < 0). Returns 0 on a change, -1 on timeout. */
  int (*wait_locked)(int64_t ms);
} ftmw_rep_link;

/* Makes the protocol use l (NULL: the transport, the default). */
void ftmw_rep_use_link(const ftmw_rep_link *l);


/* Primary: before an exchange with worker p, whatever its outcome (data,
 * or p's failure reported), waits until every live replica has reported
 * the previous exchange with p done: a replica still in it may ask for
 * the primary's verdict on it, which only the last outcome answers.
 * Returns 1 if it waited (what the caller matched may have changed). */
int ftmw_rep_before(struct ftmw_peer *p);

/* Every master, after an exchange with worker p that succeeded (m: the
 * message received, NULL for a send) or reported p's failure: counts it
 * and keeps its outcome (and m itself, until the next exchange with p), to
 * answer replicas that suspect that exchange if this master is or becomes
 * primary; a replica tells the primary (DONE). ftmw_rep_after returns 1
 * when it keeps m: the caller must not free it. */
int ftmw_rep_after(struct ftmw_peer *p, struct ftmw_msg *m);
void ftmw_rep_failed(struct ftmw_peer *p);

/* Master, when worker p failed during its exchange: the primary's
 * verdict on the same exchange, asked for (SUSPECT) if none came yet, and
 * asked again of a new primary. 1: the primary's exchange succeeded (for
 * a receive, its data is queued here by now): complete this one too;
 * 0: report the failure from this call (also what a master that is
 * primary, or becomes primary, decides when no verdict came). */
int ftmw_rep_verdict(struct ftmw_peer *p);

/* Whatever the protocol needs from a master while it waits: a master that
 * became primary takes over, a replica re-reports to a new primary, the
 * primary tells a pending ft_is_primary and answers SUSPECTs whose
 * exchange has ended. Called by ftmw_wait_locked, at the end of each
 * exchange and in ft_finalize. Returns non-zero if it did anything (the
 * caller then re-checks what it waits for: wake-ups may have come). */
int ftmw_rep_serve(void);

/* Replica's ft_send to worker p, DATA number seq: sends nothing, waits
 * until the worker has acknowledged the primary's DATA. Returns
 * FT_SUCCESS, the error of p's failure, or FTMW_REP_SEND_SELF when this
 * master became primary before the worker acknowledged: it must send the
 * DATA itself (a worker that had it drops the duplicate). */
#define FTMW_REP_SEND_SELF (-1) /* not an FT_ERR_* code */
int ftmw_rep_send(struct ftmw_peer *p, uint64_t seq);

/* Worker, after master acker acknowledged its DATA (tag, seq): sends the
 * same data to every other live master (COPY) and waits until written. */
void ftmw_rep_copy(int acker, int tag, uint64_t seq, const void *buf,
                   size_t len);

/* Primary: tells every live replica, in priority order, the outcome of a
 * nondeterministic call (FTMW_DECIDE_* kind, worker rank, value). */
void ftmw_rep_decide(int kind, int rank, uint64_t value);

/* Master, at a nondeterministic call of that kind (naming worker rank,
 * or -1): 1 when the call must follow the primary's decision (then in
 * *rank and *value), which it waits for; 0 when this master decides (it
 * is the primary and has no decision of an old primary left to follow).
 * A replica whose call is not the one decided leaves the job (exit 70). */
int ftmw_rep_follow(int kind, int want_rank, int *rank, uint64_t *value);

/* Puts the decision just followed back (the call returned FT_ERR_TRUNCATE
 * and will be made again). */
void ftmw_rep_unfollow(int kind, int rank, uint64_t value);

/* The value of an ft_restore decision on worker p: the outcome code, and
 * on success the new incarnation and the spare it came from. */
uint64_t ftmw_rep_restore_value(int code, const struct ftmw_peer *p);

/* Replica's ft_restore of p, given the primary's decision v: waits until
 * the new incarnation is adopted (a spare's ACTIVATED, a spawned worker's
 * HELLO), or its spare is gone or the launch deadline passed (then the
 * new incarnation counts as failed here). Returns the outcome code. */
int ftmw_rep_follow_restore(struct ftmw_peer *p, uint64_t v);

/* ft_is_primary with replicas: 1 in the master that decides this call
 * (the primary); 0 in a replica, which follows the primary's answer. The
 * primary tells the replicas at its next call into the library, after
 * the output ft_is_primary guards: if it dies before, the master that
 * takes over answers 1 at the same call and writes that output. */
int ftmw_rep_primary_call(void);

/* Every wait of the library (st.lock held, released meanwhile): a
 * primary first answers its replicas (ftmw_rep_serve), then the loop
 * runs until anything changes that a caller may wait for, or for at most
 * ms (forever if ms < 0). Returns 0 on a change, -1 on timeout. */
int ftmw_wait_locked(int64_t ms);

#endif
