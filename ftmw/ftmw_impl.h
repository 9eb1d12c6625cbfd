/* Internal umbrella header: the process's state record and the types the
 * layers share. docs/architecture.md maps the modules, who owns which
 * state, and a message's path from ft_send (send.c) through the transport
 * (transport.c), the link (link.c) and the loop (loop.c) to ft_recv
 * (recv.c).
 *
 * Locking: one mutex, st.lock, guards everything both threads touch (peer
 * states, inboxes, the submission queue), but the atomics that
 * docs/architecture.md lists (an op's outcome among them). The libuv
 * loop and the connections belong to whichever thread runs the loop
 * (loop.c: one at a time); a call waits by running it, so nothing needs
 * waking. Nothing calls user code. */
#ifndef FTMW_IMPL_H
#define FTMW_IMPL_H

#include "ftmw.h"

#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "ctx.h"
#include "fault.h"
#include "hosts.h"
#include "job.h"
#include "link.h"
#include "loop.h" /* ftmw_now_ms */
#include "msg.h"
#include "queue.h"
#include "seqset.h"
#include "trace.h"
#include "wire.h"

#define FTMW_HIDDEN __attribute__((visibility("hidden")))

typedef struct ftmw_peer ftmw_peer; /* peer.h */

struct ftmw_state {
  int initialized;
  int mpi_owned; /* ft_init called MPI_Init, so ft_finalize finalizes */

  ftmw_peer *workers; /* [1..W] in masters */
  ftmw_peer *masters; /* [0..M]: the masters, as seen from here */
  ftmw_peer *spares;  /* [0..S-1] in the primary (static mode) */
  int primary;        /* index of the master this process considers primary */

  /* Shared, under lock: */
  uv_mutex_t lock;
  ftmw_qnode submit;   /* ftmw_op.node */
  ftmw_qnode arrivals; /* ftmw_msg.by_arrival, all sources */
  int failure_seen;    /* some process of the job failed, or leaves
                          without MPI_Finalize (term.h) */
  int finalizing;      /* ft_finalize has begun (FIN sent or going out) */
  int bye_sent;        /* master: finalize has sent BYE */
  int activated;       /* spare: ACTIVATE received (or BYE) */
  ftmw_seqset rx;      /* worker: the master DATA seqs queued */
  uint64_t tx_seq;     /* worker: the last DATA seq it sent */

  /* The transport (the loop's owner, see transport.c): */
  uint64_t orphan_since;
  int aborting; /* the job is being ended (abort.h); atomic */
  char listen_ip[48];
  int listen_port;
};

/* The context: this process's records, handed down explicitly to every
 * function that reads or changes them (the ftmw_ctx *cx of their
 * signatures). A process has one, ftmw_default_ctx; only the entry points
 * name it: the API calls, and the few functions of the farm layer's and
 * the MPI layer's doors (timed.h, owned.h, identity.h). The callbacks
 * libuv and the library's threads run get it from what they were
 * registered with (docs/architecture.md, "The context"). */
struct ftmw_ctx {
  struct ftmw_state st;
  struct ftmw_job job;        /* job.h */
  struct ftmw_rep_state *rep; /* the replica protocol's (replica_state.h):
                                 from ftmw_rep_init to ftmw_rep_free */
  const struct ftmw_rep_link *rep_link; /* what it sends through (NULL:
                                           the transport; replica.h) */

  /* What one module keeps for itself (the one named), or two: */
  ftmw_loop loop; /* loop.c: the loop and who runs it */
  ftmw_link link; /* transport.c: the connections (the loop's owner);
                     join.c tells it who this process is */
  /* transport.c: the frames a module above handles, by type
   * (ftmw_transport_route) */
  int (*routes[FTMW_FRAME_TYPE_MAX])(struct ftmw_ctx *cx, ftmw_peer *p,
                                     const ftmw_hdr *h, void *payload);
  struct ftmw_app_peer *app; /* calls.c: [0..app_n - 1], the API's state
                                of each worker (application thread) */
  int app_n;
  ftmw_qnode to_masters;  /* isend.c: a worker's requests, which all go to
                             the primary, whichever master that is
                             (application thread; set up by ft_init) */
  int64_t clock_offset;   /* timed.c: the decided clock minus this
                             master's own, in microseconds (app. thread) */
  unsigned long failures; /* peer.c: peers FAILED or FENCED, ever (atomic:
                             written under st.lock, read without it) */
  int abort_code;         /* abort.c: the status, once st.aborting */
  uint64_t abort_until;   /* abort.c: the loop's owner */
  unsigned long trace_data_count; /* calls.c: data messages (app. thread) */
  unsigned spawn_names; /* death.c: notice names given (atomic: spawns run
                           on more than one thread) */
  int *placed_host;     /* spawn.c: the hostfile entry each worker was last
                           placed on [1..W], or -1 (application thread; freed
                           by ft_finalize) */
  struct {              /* term.c: a worker's end at its master's end (the
                           loop's owner) */
    int primary_fin;    /* its primary's FIN came: the job ends */
    int stopping;       /* ...saying the job is being stopped (SIGTERM) */
    int fin_sent;       /* it told the masters it leaves */
  } worker_end;
};

extern FTMW_HIDDEN ftmw_ctx ftmw_default_ctx;

#include "error.h" /* ftmw_fail, ftmw_ok, ... */

/* send.c and recv.c: the data-path calls behind ft_* and ms_*.
 * call names the API call for traces ("ft_send", "ms_send", ...).
 * ftmw_send's sync: wait for the acknowledgement (ft_ssend); else a
 * message up to FT_EAGER_LIMIT bytes is eager (send.c). */
FTMW_HIDDEN int ftmw_send(ftmw_ctx *cx, const char *call, const void *buf,
                          int count, FT_Datatype type, int dest, int tag,
                          int sync);
/* A send that does not wait (ft_isend's, ft_bcast's): flags and req as
 * ftmw_isend's (isend.h); with master replicas it waits as ft_ssend does,
 * and its request is settled when it returns. */
FTMW_HIDDEN int ftmw_send_nowait(ftmw_ctx *cx, const char *call,
                                 const void *buf, int count, FT_Datatype type,
                                 int dest, int tag, unsigned flags,
                                 FT_Request *req);
FTMW_HIDDEN int ftmw_recv(ftmw_ctx *cx, const char *call, void *buf, int count,
                          FT_Datatype type, int source, int tag,
                          FT_Status *status);
/* logged: an ms_irecv (or its replay), which must be the only receive
 * posted for source. */
FTMW_HIDDEN int ftmw_irecv(ftmw_ctx *cx, const char *call, int logged,
                           void *buf, int count, FT_Datatype type, int source,
                           int tag);
FTMW_HIDDEN int ftmw_wait(ftmw_ctx *cx, const char *call, int rank);
/* ft_restore and ft_request_wait, in cx (api.c, isend.c). */
FTMW_HIDDEN int ftmw_restore(ftmw_ctx *cx, int rank);
FTMW_HIDDEN int ftmw_request_wait(ftmw_ctx *cx, FT_Request *req,
                                  FT_Status *status);
/* ms.c: ms_send (and ms_bcast's send to each worker, whose tag,
 * FTMW_TAG_BCAST, no application call may use). */
FTMW_HIDDEN int ftmw_ms_send(ftmw_ctx *cx, const char *call, const void *buf,
                             int count, FT_Datatype type, int dest, int tag);
/* The same in two steps, around a send made otherwise (ms_bcast's
 * ft_isend): the record (NULL, the error set, on a misuse), then the
 * send's outcome, which adds it to dest's log (or frees it). */
struct ftmw_mslog_call;
FTMW_HIDDEN struct ftmw_mslog_call *
ftmw_ms_record_send(ftmw_ctx *cx, const void *buf, int count, FT_Datatype type,
                    int dest, int tag);
FTMW_HIDDEN void ftmw_ms_record_outcome(ftmw_ctx *cx, struct ftmw_mslog_call *c,
                                        int dest, int error);

#endif
