/* The replica protocol's own state (SPEC section 6). replica.c owns it;
 * only the replica modules (replica.c, replica_calls.c, replica_frames.c:
 * the frames that change it, replica_link.c, replica_outcomes.c,
 * replica_takeover.c) and the unit test (tests/test_replica.c) include
 * this header, which also declares the steps of a send that they share.
 * Everything here is under st.lock. A context's state is cx->rep
 * (ftmw_impl.h), which ftmw_rep_init allocates. */
#ifndef FTMW_REPLICA_STATE_H
#define FTMW_REPLICA_STATE_H

#include <stdint.h>

#include "config.h" /* FTMW_MAX_MASTERS */
#include "ctx.h"
#include "msg.h"
#include "queue.h"

/* A nondeterministic call's outcome as the primary decided it (DECIDE):
 * replicas make their call give the same (see wire.h for the fields). */
typedef struct ftmw_decision {
  ftmw_qnode node;
  int kind; /* FTMW_DECIDE_* */
  int rank;
  uint64_t value;
  uint64_t number; /* decisions are numbered from 1 in every master */
} ftmw_decision;

/* A completed exchange as this master saw it: whether it succeeded and,
 * for a receive, its data (what a VERDICT and its KEPT tell). */
typedef struct ftmw_rep_outcome {
  int ok;
  ftmw_msg *msg;
} ftmw_rep_outcome;

/* A master's exchanges with one worker. */
typedef struct ftmw_rep_worker {
  uint64_t calls; /* exchanges with this worker so far (every master) */
  /* Every master: the outcomes of its last `kept` exchanges, numbers
   * calls - kept + 1 .. calls, in a ring from `first`. They are the ones
   * another live replica has not reported DONE yet: it may still ask
   * about them (SUSPECT), of this master if it becomes the primary. */
  ftmw_rep_outcome *ring;
  uint32_t cap, first, kept;
  uint64_t acked_seq; /* replica: the primary's DATA seq the worker ACKed */
  uint64_t numbered;  /* the last DATA seq this master numbered for it */
  uint64_t marked;    /* 1 + the incarnation whose MARK came: it takes this
                         master for primary, and its ACKEDs came before */
  /* Replica: the VERDICTs about exchanges it has not completed, by
   * exchange number (0: a free slot), and whether the primary's call
   * succeeded. A primary that took over answers each replica's SUSPECT,
   * and tells every replica, in no particular order of exchanges. */
  struct {
    uint64_t n;
    int ok;
  } verdicts[2 * FTMW_MAX_MASTERS];
  uint64_t done_by[FTMW_MAX_MASTERS];    /* each other replica's DONE */
  uint64_t suspect_by[FTMW_MAX_MASTERS]; /* a SUSPECT: a replica's, to the
                                            primary; the primary's, to a
                                            replica ahead of it */
  uint64_t answered_n; /* primary: the last exchange it gave a verdict on */
  /* Every master: its last exchange with this worker that took a message
   * or reported a failure, and whether the worker is in
   * ftmw_rep_state.owed (a replica may not have reported that exchange
   * DONE yet). */
  uint64_t owed_n;
  int owed_listed;
} ftmw_rep_worker;

#define FTMW_REP_HISTORY 64

typedef struct ftmw_rep_state {
  ftmw_rep_worker *workers; /* [0..W] (ftmw_rep_init) */
  ftmw_qnode decisions;     /* replica: ftmw_decision.node, oldest first */
  uint64_t dec_taken;       /* decisions this master's calls made or followed */
  uint64_t dec_acted;       /* the last of them not an ft_is_primary's */
  uint64_t dec_rcvd;        /* replica: the last decision number received */
  int seen_primary;         /* st.primary when this master last looked */
  /* Replica: the last decisions received, by number % FTMW_REP_HISTORY:
   * sent to a master that takes over, which may lack the last ones. */
  ftmw_decision history[FTMW_REP_HISTORY];
  /* A master that took over: which replicas have sent it what they hold
   * (SYNC), so that it decides nothing before. */
  int took_over;
  int synced[FTMW_MAX_MASTERS];
  /* Primary: the decisions each replica said it holds (DECIDED, SYNC). */
  uint64_t dec_held[FTMW_MAX_MASTERS];
  /* A master that took over: the last decision it got from a replica's
   * history that it lacked, and to each replica, the last such decision
   * when it resent its own history to it (fill_gaps: again when it has
   * learned a later one since, as more replicas' histories come). */
  uint64_t learned;
  uint64_t filled[FTMW_MAX_MASTERS];
  /* A master that took over and dropped its predecessor's path
   * (ftmw_rep_abandon): the replicas told to drop it too that have not
   * answered yet (their DECIDED until then tell of that path). */
  int abandoning[FTMW_MAX_MASTERS];
  /* The workers whose exchange owed_n a live replica may not have
   * completed yet (its DONE): the primary does nothing another process
   * sees before each has, so that no live process acts on a path the
   * next primary cannot follow (ftmw_rep_before_seen). n_owed of them, in
   * no order. */
  int *owed;
  int n_owed;
  int primary_call_pending; /* an ft_is_primary answered 1, not yet told */
  int serving;              /* in replicated_serve (which it may re-enter) */
} ftmw_rep_state;

/* The exchanges with worker rank. */
ftmw_rep_worker *ftmw_rep_of(ftmw_ctx *cx, int rank);

/* Whether master k is another master than this one, and live (the
 * masters that replicate with this one: replica_state.c). */
int ftmw_rep_alive(ftmw_ctx *cx, int k);

/* Drops the path of a primary that died after decision n: the decisions
 * after n queued or kept for a takeover, and the verdicts on exchanges
 * this master has not completed (replica_state.c). Returns how many
 * queued decisions it dropped. */
uint64_t ftmw_rep_drop_after(ftmw_ctx *cx, uint64_t n);

/* Exchange n's outcome with w's worker as this master keeps it, or NULL
 * (not completed yet, or dropped). */
const ftmw_rep_outcome *ftmw_rep_outcome_of(const ftmw_rep_worker *w,
                                            uint64_t n);

/* The primary's verdict held on exchange n with w's worker: 1 ok, 0 failed,
 * -1 none (replica_frames.c keeps them). */
int ftmw_rep_verdict_of(const ftmw_rep_worker *w, uint64_t n);

/* Records the outcome of exchange w->calls (just counted), dropping those
 * every possible asker is done with (replica_outcomes.c). The primary
 * holds its replicas within one exchange of itself (ftmw_rep_begin), so
 * it keeps at most one; a replica keeps as many as it runs ahead of the
 * slowest other replica. Returns 1 when it keeps m (freed when dropped). */
int ftmw_rep_keep_outcome(ftmw_ctx *cx, ftmw_rep_worker *w, int ok,
                          ftmw_msg *m);

struct ftmw_peer;
struct ftmw_hdr;

/* The protocol's frames (DECIDE, DECIDED, KEPT, ACKED, MARK, DONE,
 * SUSPECT, VERDICT), which ftmw_rep_init routes to it from the transport:
 * the loop's owner, st.lock not held. Returns non-zero when p was put
 * down for a protocol error. */
int ftmw_rep_on_frame(ftmw_ctx *cx, struct ftmw_peer *p,
                      const struct ftmw_hdr *h, void *payload);

/* --- the exchange sequence (replica.h's calls run it) ---
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

/* --- the steps of a send (replica_calls.c's ftmw_rep_send_call and
 * ftmw_rep_worker_send run them; replica.h) --- */

/* The same for a send. A master that took over during the call and got
 * no verdict follows the old primary's outcome where that one went on
 * past the exchange (a decision of its is queued here, or a worker ACKed
 * a DATA of its that this master has not numbered yet): the primary
 * tells every failure at once, before
 * going on, so it went on after a success (found by tools/ftmw-sim, seed
 * 2297: the new primary reported the failure, then found the old
 * primary's next decision, and left the job as "not deterministic";
 * seed 17749: the old primary's next send went to another worker, whose
 * ACKED was here: the new primary, on the other branch, sent that worker
 * another task under the same number, dropped as a duplicate, and got
 * back the answer to the old primary's). */
int ftmw_rep_send_verdict(ftmw_ctx *cx, struct ftmw_peer *p);

/* Replica's ft_send to worker p, DATA number seq: sends nothing, waits
 * until the worker has acknowledged the primary's DATA. Returns
 * FT_SUCCESS, the error of p's failure (FT_ERR_PEER_FINALIZED once it
 * finished or its FIN came), or FTMW_REP_SEND_SELF when this
 * master became primary before the worker acknowledged: it must send the
 * DATA itself (a worker that had it drops the duplicate). */
#define FTMW_REP_SEND_SELF (-1) /* not an FT_ERR_* code */
int ftmw_rep_send(ftmw_ctx *cx, struct ftmw_peer *p, uint64_t seq);

/* Primary, before anything another process sees: a DATA to a worker
 * (send), an ft_is_primary answered 1 (the output it guards), a restore
 * (a spare activated, a worker spawned). Waits until every live replica
 * holds every decision it has made (DECIDED, SYNC) and has completed
 * every exchange that took a message or reported a failure (DONE). What
 * a primary lost on its way to the replicas, a decision, a worker's
 * message or a failure's verdict, is then something no live process
 * acted on: the master that takes over decides that call afresh, or
 * drops the path (ftmw_rep_abandon). (ftmw-sim seed 203173: a partition
 * dropped the old primary's decision that a worker had not failed, and
 * let through the task it sent next; the new primary decided the
 * failure, sent that worker another task under the same number, dropped
 * as a duplicate, and got the first task's answer. Seed 4212840: the
 * same with a message taken.) Any other master: returns at once. */
void ftmw_rep_before_seen(ftmw_ctx *cx);

/* Whether this master took over from a primary that died (or was cut
 * off): it may be behind what that one did (ftmw_rep_send_verdict). */
int ftmw_rep_took_over(ftmw_ctx *cx);

/* What a master that took over can tell of the old primary's path
 * (replica_takeover.c). Whether every live worker's MARK is in (and with
 * it the ACKEDs it sent before); whether the old primary went past the
 * exchange this master is in: a decision of it is queued here, or a
 * worker ACKed a DATA of it this master has not numbered yet (asked once
 * marked: it tells a failure before going on, so it went past with a
 * success). */
int ftmw_rep_marked(ftmw_ctx *cx);
int ftmw_rep_went_past(ftmw_ctx *cx);

/* For a receive from worker p alone, with no message here: whether the
 * old primary went past it having received one (it went past, and told
 * no failure of that exchange: it tells one before going on). */
int ftmw_rep_took_past(ftmw_ctx *cx, const struct ftmw_peer *p);

/* This master took over, and the old primary received a message of
 * worker p in this call: it decided so (message seq), or, for a receive
 * from p alone (seq 0), went past it (ftmw_rep_took_past). p failed, and
 * no live master holds that message (a partition held p's COPY on its
 * way here while its DATA reached the old primary, which took it, went
 * on and died: ftmw-sim seed 4005262). Nobody can give it now. The old
 * primary's path from here on is dropped, and the call reports p's
 * failure, decided afresh, if nothing shows that a live process saw that
 * path: the decisions queued here (every live replica's too: synced)
 * tell of no output (ft_is_primary) and no restore, and no worker took
 * a DATA of it past this master's own (asked once marked: every live
 * worker's ACKEDs are in). An output or a restore the old primary made
 * and had not told yet is not seen (docs/replicas.md, Limits). Else this
 * master cannot follow: it leaves the job (70). Called once every live
 * replica stands where this master does (ftmw_rep_caught_up); the live
 * replicas are told to drop the path too (ABANDON), and the caller waits
 * for their answers (ftmw_rep_abandoning) before it goes on. */
void ftmw_rep_abandon(ftmw_ctx *cx, const struct ftmw_peer *p, uint64_t seq);

/* Whether every live replica has completed every exchange this master
 * has: it then stands where this master does (none can be past a message
 * that no live master holds). */
int ftmw_rep_caught_up(ftmw_ctx *cx);

/* Whether a live replica told to drop the old primary's path
 * (ftmw_rep_abandon) has not answered yet. */
int ftmw_rep_abandoning(ftmw_ctx *cx);

/* Worker p's message m as a KEPT frame's payload (p's rank, the
 * incarnation that sent it, then the data), in a message of its own
 * bearing m's tag and number; NULL out of memory (replica_link.c). */
ftmw_msg *ftmw_rep_kept_of(const struct ftmw_peer *p, const ftmw_msg *m);

/* Sends KEPT k to master to, or (to < 0) to every live replica. */
void ftmw_rep_send_kept(ftmw_ctx *cx, int to, const ftmw_msg *k,
                        unsigned flags);

/* Sends decision d to master k (DECIDE). */
void ftmw_rep_send_decision(ftmw_ctx *cx, int k, const ftmw_decision *d);

/* What a master does when it sees the primary changed, once per change
 * (replica_takeover.c; called by ftmw_rep_catch_up). */
void ftmw_rep_primary_changed(ftmw_ctx *cx);

/* A master that took over sends its history to each replica whose SYNC
 * says it lacks decisions this master learned, and again to one whose
 * last resend did not hold the last it learned (replica_takeover.c).
 * Returns to how many it sent. */
int ftmw_rep_fill_gaps(ftmw_ctx *cx);

/* A master that became the primary since it last looked takes over now
 * (what it holds goes to the others, and it counts as having taken over);
 * one that stays a replica reports to the new primary; again if the
 * primary changed while it did. Before anything it does as the primary:
 * every wait ends with it (ftmw_wait_locked), and a send begins with it
 * (ftmw-sim seed 3986683: a replica waiting for a worker's ACKED found itself
 * primary on waking, sent the DATA itself without having taken over, and when
 * the worker was found failed reported a send that the old primary had
 * completed and gone past). */
void ftmw_rep_catch_up(ftmw_ctx *cx);

/* A master numbered its send to worker p seq (every master alike). */
void ftmw_rep_number(ftmw_ctx *cx, struct ftmw_peer *p, uint64_t seq);

/* Whether worker p said it acknowledged a primary's DATA number seq
 * (ACKED, which only a master other than the sender gets). A master that
 * took over after that must not send the DATA again: its ft_send of that
 * number completes through ftmw_rep_send as a replica's does, whatever
 * p did since (finished, failed), as the old primary's did. */
int ftmw_rep_acked(ftmw_ctx *cx, struct ftmw_peer *p, uint64_t seq);

/* Waits through the protocol's link (ftmw_rep_link.wait_locked). */
int ftmw_rep_link_wait(ftmw_ctx *cx, int64_t ms);

/* Sends a frame without ACK to master k, through the protocol's link
 * (ftmw_rep_use_link), and waits until it is written or k has failed. */
void ftmw_rep_send_master(ftmw_ctx *cx, int k, int type, int tag,
                          unsigned flags, uint64_t seq, const void *data,
                          size_t len);

/* Worker, before its DATA (tag, seq) to the master it takes for the
 * primary: sends the same data to every other live master (COPY), which
 * holds it unconfirmed, and waits until written: no master can then have
 * the message alone. Once master acker has acknowledged the DATA,
 * ftmw_rep_confirm tells the others (CONFIRM). */
void ftmw_rep_copy(ftmw_ctx *cx, int primary, int tag, uint64_t seq,
                   const void *buf, size_t len);
void ftmw_rep_confirm(ftmw_ctx *cx, int acker, uint64_t seq);

/* --- the steps of ft_restore's (ftmw_rep_restore_call) --- */

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

/* Replica: DECIDE d arrived (st.lock held). Returns 0 (queued), 1 (a
 * decision it has: a new primary's resend), or -1 if its number does not
 * follow the last one (protocol error) or memory ran out. */
int ftmw_rep_queue_decision_locked(ftmw_ctx *cx, const ftmw_decision *d);

#endif
