/* The job's peers as this process sees them: their names, their failure,
 * and which master is primary. Callers hold st.lock where the name says
 * _locked. */
#ifndef FTMW_PEER_H
#define FTMW_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "link.h"  /* ftmw_conn */
#include "queue.h"
#include "seqset.h"
#include "wire.h"  /* ftmw_place */

/* A peer's lifecycle (peer.h: ftmw_peer_set_locked makes every change). */
enum ftmw_peer_state {
  FTMW_PEER_NONE = 0,  /* slot not in use */
  FTMW_PEER_JOINING,   /* started (or expected), not yet connected */
  FTMW_PEER_ALIVE,
  FTMW_PEER_SUSPECTED, /* alive, but silent for over half the timeout */
  FTMW_PEER_FAILED,    /* crashed, unreachable, or never joined */
  FTMW_PEER_FENCED,    /* declared failed while connected: told FENCE */
  FTMW_PEER_FINISHED   /* ended its part (ft_finalize; a spare activated) */
};

typedef struct ftmw_peer {
  int kind; /* FTMW_ROLE_* of the remote process */
  int id;   /* worker rank, master index, or spare index */
  uint32_t pid_wire;
  /* Under st.lock: */
  int state;
  uint32_t epoch;
  int fin;          /* the peer called ft_finalize */
  int bye;          /* master told us to shut down */
  int bye_clean;    /* ...and that MPI_Finalize is safe */
  int unreported;   /* failed and not yet reported by any call */
  int welcomed;     /* a master we connected to accepted us (even if it
                       died right after) */
  ftmw_seqset rx;      /* master: the DATA/COPY/KEPT seqs queued from this */
  uint32_t rx_epoch;   /* ...worker incarnation (duplicates are dropped), */
  ftmw_qnode unconfirmed; /* ...and its COPYs not confirmed yet (inbox.h):
                             ftmw_msg.by_peer, oldest first */
  int from_spare;      /* static mode: the spare index + 1 this incarnation
                          was activated from, or 0 */
  ftmw_qnode inbox; /* ftmw_msg.by_peer, arrival order */
  ftmw_place at; /* where the process runs (its HELLO, WELCOME or set-up) */
  uint64_t failed_at; /* uv_hrtime() when declared failed */
  /* A worker restored without waiting for it (restore.c): */
  uint64_t join_by;    /* ftmw_now_ms() by which it must join, else it
                          failed (the transport's tick); 0: no deadline */
  uint64_t restore_t0; /* uv_hrtime() when its restore started */
  int unjoined;        /* restores in a row whose process never joined */
  char notice[48];     /* spawn mode: the death notice of its process's
                          spawn (death.h), "" if none */
  ftmw_qnode pending;  /* ftmw_op.node: frames for this incarnation while
                          it joins, written once it has (transport.c) */
  /* The loop's owner only: */
  ftmw_conn *conn; /* bound to this peer (link.h), or NULL */
  int abort_heard;  /* it sent ABORT: it ends the job too (abort.c) */
  ftmw_qnode held;    /* master with replicas: ftmw_msg.by_peer, DATA this
                         worker sent while this master was not primary */
} ftmw_peer;

/* The classes of peer states that callers ask about (st.lock held). */
static inline int ftmw_peer_state_live(int s) { /* may still speak */
  return s == FTMW_PEER_JOINING || s == FTMW_PEER_ALIVE ||
         s == FTMW_PEER_SUSPECTED;
}
static inline int ftmw_peer_is_live(const ftmw_peer *p) {
  return ftmw_peer_state_live(p->state);
}
static inline int ftmw_peer_is_up(const ftmw_peer *p) { /* joined, live */
  return p->state == FTMW_PEER_ALIVE || p->state == FTMW_PEER_SUSPECTED;
}
static inline int ftmw_peer_is_failed(const ftmw_peer *p) {
  return p->state == FTMW_PEER_FAILED || p->state == FTMW_PEER_FENCED;
}

/* Restored without waiting for it (restore.c) and not joined or failed
 * yet: what is sent to it waits (st.lock held). */
static inline int ftmw_peer_restoring(const ftmw_peer *p) {
  return p->join_by != 0;
}

/* "worker 3", "master 1", "spare 0". Returns buf. */
const char *ftmw_peer_name(const ftmw_peer *p, char *buf, size_t len);

/* Moves p to state to (FTMW_PEER_*), for why (a text for the trace, or
 * NULL): the one place a peer's state changes, traced once
 * ("peer_state"). A change the lifecycle forbids is refused, traced
 * "peer_state_refused" (a bug: the job tests fail on it), and returns -1;
 * the same state again is no change. st.lock held. */
int ftmw_peer_set_locked(ftmw_ctx *cx, ftmw_peer *p, int to, const char *why);
/* p's next incarnation, epoch, begins in state to: JOINING (restored,
 * or restored by the primary, and not heard from yet) or ALIVE (a
 * replica adopts the connection of one that announced itself). The one
 * place an incarnation changes, and the only way a failed or finished
 * slot lives again: epoch must be later than p's, so that a dead
 * incarnation never comes back to life. Traced "peer_state"; refused
 * ("peer_state_refused", -1) otherwise. st.lock held. */
int ftmw_peer_begin_locked(ftmw_ctx *cx, ftmw_peer *p, uint32_t epoch, int to,
                           const char *why);

/* The one way a peer becomes FAILED (st.lock held), whether its
 * connection broke or went silent (ftmw_peer_down, down.h, which also
 * closes and fences it) or it never connected (launch, restore). A live
 * or launching peer's failure is traced with why and timed; report says
 * that the application must hear of it (a call that names p reports it).
 * Returns 1 if p was live or launching. */
int ftmw_peer_failed_locked(ftmw_ctx *cx, ftmw_peer *p, int report,
                            const char *why);
/* The same, FENCED: declared failed while connected, and told so
 * (down.h); reported. */
int ftmw_peer_fenced_locked(ftmw_ctx *cx, ftmw_peer *p, const char *why);

/* This process is a master with replicas that is not the primary, now
 * (st.lock held). */
int ftmw_is_replica(ftmw_ctx *cx);

/* Whether no master is live or launching (a worker's or spare's view). */
int ftmw_all_masters_gone_locked(ftmw_ctx *cx);

/* The first live master in priority order (this process, if it is a
 * master and none before it lives), or -1: the primary. */
int ftmw_first_live_master_locked(ftmw_ctx *cx);

/* Where p's process runs, as its HELLO, its WELCOME or (for a master) the
 * set-up record says: the failure detector asks that host's kernel about
 * a silent peer on this host (localproc.h). */
void ftmw_peer_place_locked(ftmw_peer *p, const ftmw_place *at);

#endif
