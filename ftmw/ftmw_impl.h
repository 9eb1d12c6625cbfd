/* Internal umbrella header: the process's state record and the types the
 * layers share. docs/architecture.md maps the modules, who owns which
 * state, and a message's path from ft_send (api.c) through the transport
 * (transport.c), the link (link.c) and the loop (loop.c) to ft_recv
 * (recv.c).
 *
 * Locking: one mutex, st.lock, guards everything both threads touch (peer
 * states, inboxes, op outcomes, the submission queue). The libuv loop and
 * the connections belong to whichever thread runs the loop (loop.c: one
 * at a time); a call waits by running it, so nothing needs waking. Nothing
 * calls user code. */
#ifndef FTMW_IMPL_H
#define FTMW_IMPL_H

#include "ftmw.h"

#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "fault.h"
#include "hosts.h"
#include "link.h"
#include "loop.h" /* ftmw_now_ms */
#include "msg.h"
#include "mslog.h"
#include "queue.h"
#include "trace.h"
#include "wire.h"

#define FTMW_HIDDEN __attribute__((visibility("hidden")))

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

enum ftmw_mode { FTMW_MODE_SPAWN = 1, FTMW_MODE_STATIC };


struct ftmw_peer;

enum ftmw_op_kind {
  FTMW_OP_FRAME = 1, /* write a frame to op->peer */
  FTMW_OP_CONNECT,   /* connect to master op->peer at op->addr */
  FTMW_OP_ACTIVATE,  /* hand spare op->peer to worker op->target */
  FTMW_OP_STOP       /* close everything and end the loop */
};

/* Work handed from the application thread to the loop. It lives on
 * the caller's stack: the caller waits until out.done, and for DATA until
 * out.acked or out.failed, before returning. */
typedef struct ftmw_op {
  ftmw_qnode node; /* st.submit */
  int kind;
  struct ftmw_peer *peer;
  struct ftmw_peer *target; /* ACTIVATE: the worker slot */
  uint32_t epoch;           /* the peer incarnation this op is meant for */
  struct sockaddr_storage addr;
  ftmw_out out; /* FRAME: the frame; every op: its outcome */
} ftmw_op;

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
  uint64_t rx_seq;     /* master: the last DATA/COPY seq queued from this */
  uint32_t rx_epoch;   /* ...worker incarnation (duplicates are dropped) */
  uint32_t app_epoch;  /* master: the incarnation its ft_restore last gave */
  int from_spare;      /* static mode: the spare index + 1 this incarnation
                          was activated from, or 0 */
  ftmw_qnode inbox; /* ftmw_msg.by_peer, arrival order */
  ftmw_place at; /* where the process runs (its HELLO, WELCOME or set-up) */
  uint64_t failed_at; /* uv_hrtime() when declared failed */
  /* Application thread only: */
  uint64_t next_seq;
  struct {
    int active;
    void *buf;
    int count;
    FT_Datatype type;
    int tag;
  } post;
  ftmw_mslog log; /* masters: the ms_* calls to this worker */
  /* The loop's owner only: */
  ftmw_conn *conn; /* bound to this peer (link.h), or NULL */
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

struct ftmw_state {
  int initialized;
  int mode;
  int role; /* FTMW_ROLE_* of this process */
  int id;   /* this process's worker rank / master index / spare index */
  uint32_t epoch;
  int restored; /* started by ft_restore */
  int W, M, S;
  ftmw_config cfg;
  ftmw_hosts hosts;
  uint8_t secret[FTMW_SECRET_SIZE];
  char host[FTMW_HOST_MAX];
  int mpi_owned; /* ft_init called MPI_Init, so ft_finalize finalizes */

  ftmw_peer *workers; /* [1..W] in masters */
  ftmw_peer *masters; /* [0..M]: the masters, as seen from here */
  ftmw_peer *spares;  /* [0..S-1] in the primary (static mode) */
  int primary;        /* index of the master this process considers primary */

  /* Shared, under lock: */
  uv_mutex_t lock;
  ftmw_qnode submit;   /* ftmw_op.node */
  ftmw_qnode arrivals; /* ftmw_msg.by_arrival, all sources */
  int failure_seen;    /* some process of the job failed */
  int finalizing;      /* ft_finalize has begun (FIN sent or going out) */
  int bye_sent;        /* master: finalize has sent BYE */
  int activated;       /* spare: ACTIVATE received (or BYE) */
  uint64_t rx_seq;        /* worker: the last master DATA seq queued */
  uint64_t tx_seq;        /* worker: the last DATA seq it sent */

  /* The transport (the loop's owner, see transport.c): */
  uint64_t orphan_since;
  char listen_ip[48];
  int listen_port;
};

extern FTMW_HIDDEN struct ftmw_state ftmw_st;

/* error.c: the per-thread result of the last call. */
FTMW_HIDDEN int ftmw_fail(int code);
FTMW_HIDDEN void ftmw_ok(void);

/* api.c (send) and recv.c: the data-path calls behind ft_* and ms_*.
 * call names the API call for traces ("ft_send", "ms_send", ...). */
FTMW_HIDDEN int ftmw_send(const char *call, const void *buf, int count,
                          FT_Datatype type, int dest, int tag);
FTMW_HIDDEN int ftmw_recv(const char *call, void *buf, int count,
                          FT_Datatype type, int source, int tag,
                          FT_Status *status);
FTMW_HIDDEN int ftmw_irecv(const char *call, void *buf, int count,
                           FT_Datatype type, int source, int tag);
FTMW_HIDDEN int ftmw_wait(const char *call, int rank);

/* Identity on the wire of this process and of a peer. */
FTMW_HIDDEN uint32_t ftmw_self_pid(void);
FTMW_HIDDEN const char *ftmw_role_name(int role);

#include "launch.h"
#include "match.h"
#include "peer.h"
#include "replica.h"
#include "transport.h"

#endif
