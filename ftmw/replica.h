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

/* --- the calls, one exchange each ---
 * Every exchange of a master with worker p (a send, a receive, a failure
 * reported) runs the protocol's sequence (replica_state.h): the exchange
 * begins (the primary waits for its replicas), the primary's decision is
 * followed or made at a nondeterministic choice, and the exchange ends
 * (counted, its outcome kept for the replicas that may ask). The data
 * path makes each of its calls one call here, handing over its own part
 * (the write of a send, the choice of a decided call, what a receive
 * waits for), which the protocol runs inside the exchange. A master with
 * replicas runs the replicated implementation; any other process the
 * solo one, where the protocol adds nothing. */

/* A call that may be decided one of two ways (a receive with a deadline:
 * RECV, or TIMEOUT with rank 0) follows FTMW_DECIDE_OR(kind, alt). */
#define FTMW_DECIDE_OR(kind, alt) ((kind) | (alt) << 8)
#define FTMW_DECIDE_KIND(k) ((k) & 0xff)
#define FTMW_DECIDE_ALT(k) ((k) >> 8)

/* Whatever the protocol needs from a master while it waits: a master that
 * became primary takes over, a replica re-reports to a new primary, the
 * primary tells a pending ft_is_primary and answers SUSPECTs whose
 * exchange has ended. Called by ftmw_wait_locked, at the end of each
 * exchange and in ft_finalize. Returns non-zero if it did anything (the
 * caller then re-checks what it waits for: wake-ups may have come). */
int ftmw_rep_serve(ftmw_ctx *cx);

/* --- a decided call, one call ---
 * A call whose outcome is one of several (whether ft_test finds its
 * worker failed, which one ft_testany finds, the masters' clock, whether
 * a posted receive's source has gone, what a probe finds, ft_restore's
 * outcome) is decided once, by the primary, and every replica's same
 * call follows it. ftmw_rep_decided runs the whole of it: a replica
 * waits for the primary's decision (c->followed); where this master
 * decides (the primary, and any process without replicas, where the
 * protocol does nothing), choose makes the choice and it is told to the
 * live replicas in priority order. */
typedef struct ftmw_rep_choice {
  int kind;       /* the kind decided (FTMW_DECIDE_OR allows two; choose
                     finds the first set, and may set the other) */
  int rank;       /* the worker the outcome names, or 0 (choose finds the
                     one the call names, want_rank, if any) */
  uint64_t value; /* the outcome */
  int followed;   /* the primary's decision, followed here */
  int begun;      /* to choose: the worker whose exchange has begun, with
                     no wait since (see FTMW_REP_BEGIN), or 0 */
} ftmw_rep_choice;

/* choose fills c and returns 0; or, before it reports the
 * failure or end of worker c->rank, it returns FTMW_REP_BEGIN: the
 * exchange with that worker begins (the primary waits until every live
 * replica is done with the one before), and choose is called again,
 * with c->begun = c->rank, or 0 if the protocol waited (what choose
 * looked at may have changed meanwhile). choose may wait itself
 * (ftmw_wait_locked). Only a master's choice names a worker. */
#define FTMW_REP_BEGIN 1
typedef int (*ftmw_rep_choose_fn)(ftmw_ctx *cx, void *arg, ftmw_rep_choice *c);
void ftmw_rep_decided(ftmw_ctx *cx, int kind, int want_rank,
                      ftmw_rep_choose_fn choose, void *arg, ftmw_rep_choice *c);

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

/* --- a receive, one call ---
 * Every receive (ft_recv, ft_wait, ft_waitany, and the farm's) is one
 * exchange, which ftmw_rep_recv_call runs from start to end (st.lock held
 * on entry and on return, released while it waits): a receive from
 * several sources follows the primary's decision of which message it
 * takes (or which failure, SIGTERM or timeout it reports), or decides it;
 * the exchange with the worker begins first and is counted at the end,
 * with its data kept for the replicas that may ask (ftmw_rep_end); a
 * replica whose source failed asks the primary's verdict. The data path
 * says what it waits for: */
typedef struct ftmw_rep_recv {
  const char *call;    /* the API call, for failure reports */
  int kind;            /* from several sources: FTMW_DECIDE_RECV, or with a
                          deadline FTMW_DECIDE_OR(RECV, TIMEOUT); 0: one source */
  struct ftmw_peer *p; /* one source: the worker (a worker's receive: its
                          primary, looked up again after each wait) */
  uint64_t deadline;   /* ftmw_now_ms() to give up at, or 0 */
  int stop_on_term;    /* after SIGTERM (term.h), stop instead of waiting */
  int begin_first;     /* the exchange with p, or with the source the
                          primary decided, begins before the receive looks
                          (all but ft_waitany's) */
  void *arg;           /* the data path's, handed to the three below */
  /* The message the receive takes now, with nothing decided, or NULL. */
  struct ftmw_msg *(*look)(ftmw_ctx *cx, void *arg, struct ftmw_peer *p);
  /* Whether m fits the caller's buffer (else its status says
   * FT_ERR_TRUNCATE, and m stays queued). */
  int (*fits)(ftmw_ctx *cx, void *arg, const struct ftmw_msg *m);
  /* From several sources, with nothing to take: the failure to report
   * now (*rc, its worker in c->rank, c->kind FTMW_DECIDE_RECV when the
   * replicas follow it, else 0), or FT_SUCCESS: wait on. A
   * ftmw_rep_choose_fn's contract: FTMW_REP_BEGIN before it reports
   * worker c->rank. */
  int (*failure)(ftmw_ctx *cx, void *arg, ftmw_rep_choice *c, int *rc);
} ftmw_rep_recv;

/* How a receive ended. */
enum {
  FTMW_RECV_TAKEN = 1,  /* m taken from its queue: the caller's */
  FTMW_RECV_TRUNCATED,  /* m does not fit: it stays queued */
  FTMW_RECV_FAILED,     /* rc: the failure (or end) of worker rank */
  FTMW_RECV_TERMINATED, /* SIGTERM: the job is being stopped */
  FTMW_RECV_TIMED_OUT   /* nothing by the deadline */
};
typedef struct ftmw_rep_received {
  int how;            /* FTMW_RECV_* */
  int rank;           /* the source taken, or whose failure is reported */
  int rc;             /* FTMW_RECV_FAILED: the error */
  struct ftmw_msg *m; /* TAKEN, TRUNCATED: the message */
  int kept;           /* TAKEN: the protocol keeps m; do not free it */
} ftmw_rep_received;

void ftmw_rep_recv_call(ftmw_ctx *cx, const ftmw_rep_recv *r,
                        ftmw_rep_received *got);

/* ft_restore of worker p as one decided call (st.lock held). Where this
 * master decides, once every live replica is done with p's old
 * incarnation, restore(cx, arg) restores it (st.lock held, released
 * while it restores) and returns its outcome code, which the replicas are
 * told with the new incarnation and the spare it came from. A replica
 * (*followed) follows the primary's: it waits until the new incarnation
 * is adopted (a spare's ACTIVATED, a spawned worker's HELLO), or its
 * spare is gone or the launch deadline passed (then the new incarnation
 * counts as failed here); when the primary could not restore p, what p
 * left queued is dropped here, as the primary dropped it. Returns the
 * outcome code; on FT_SUCCESS, *epoch is the new incarnation. */
int ftmw_rep_restore_call(ftmw_ctx *cx, struct ftmw_peer *p,
                          int (*restore)(ftmw_ctx *cx, void *arg), void *arg,
                          int *followed, uint32_t *epoch);

/* ft_is_primary with replicas: 1 in the master that decides this call
 * (the primary); 0 in a replica, which follows the primary's answer. The
 * primary tells the replicas at its next call into the library, after
 * the output ft_is_primary guards: if it dies before, the master that
 * takes over answers 1 at the same call and writes that output. */
int ftmw_rep_primary_call(ftmw_ctx *cx);

/* The wait of every call for a change (st.lock held, released
 * meanwhile; the wait for one frame's outcome, ftmw_op_wait_locked, runs
 * the loop without it): a
 * primary first answers its replicas (ftmw_rep_serve), then the loop
 * runs until anything changes that a caller may wait for, or for at most
 * ms (forever if ms < 0). Returns 0 on a change, -1 on timeout. */
int ftmw_wait_locked(ftmw_ctx *cx, int64_t ms);

#endif
