/* libftmw-mpi, the MPI layer: an unmodified master-worker MPI program
 * runs over FTMW, and a worker's death never reaches it.
 *
 * The layer defines the MPI_* calls a master-worker program makes (the
 * MPI profiling interface: FTMW's own MPI use goes through PMPI_*). Rank
 * 0 of MPI_COMM_WORLD is the master (every master replica sees itself as
 * 0), ranks 1..W the workers; spares and replicas are not in it.
 *
 * Modules:
 *   stop.c        the layer's state; how it reports an error and stops
 *                 the job (layer_stop); a master's output with replicas
 *   init.c        MPI_Init, MPI_Finalize and the calls about the job
 *                 (rank, size, time, error handlers)
 *   data.c        a datatype's bytes: what a send writes, what a receive
 *                 reads (packed when not contiguous), and MPI_Status
 *   log.c         the master's log of what it sent each worker, and what
 *                 it already received from each: replayed to a restored
 *                 worker, whose repeats are dropped
 *   match.c       MPI's matching over FTMW's messages: posted receives,
 *                 the unexpected queue, progress, and recovery
 *   p2p.c         point-to-point calls and requests
 *   coll.c        collectives, through the master
 *   unsupported.c (generated) every other MPI_* call stops the job
 *
 * Application thread only, as FTMW's calls (MPI_THREAD_FUNNELED). */
#ifndef FTMW_MPI_LAYER_H
#define FTMW_MPI_LAYER_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "ftmw.h"
#include "msg.h"
#include "queue.h"

#define LAYER_API __attribute__((visibility("default")))

/* Tags: the application's are 0..LAYER_TAG_UB (MPI_TAG_UB); the layer's
 * collectives use LAYER_TAG_COLL and MPI_Finalize LAYER_TAG_FIN, which
 * no receive of the application (MPI_ANY_TAG included) matches. */
#define LAYER_TAG_UB 0x7fefffff
#define LAYER_TAG_COLL 0x7ff00000
#define LAYER_TAG_FIN 0x7ff00001 /* a worker's MPI_Finalize */

/* Exit statuses of a job the layer stops (docs/mpi-layer.md). */
#define LAYER_EXIT_MISUSE 2      /* an MPI error under MPI_ERRORS_ARE_FATAL */
#define LAYER_EXIT_UNSUPPORTED 3 /* a call the layer does not provide */
#define LAYER_EXIT_LOST 4        /* a worker that cannot be restored */
#define LAYER_EXIT_TERMINATED 143 /* SIGTERM (a time limit): the program
                                     cannot be told, the job ends */

struct layer_state {
  int up;         /* MPI_Init done */
  int done;       /* MPI_Finalize done */
  int rank;       /* 0 in a master, 1..W in a worker */
  int W;          /* workers */
  int errors_return; /* MPI_ERRORS_RETURN set on MPI_COMM_WORLD */
  int replicas;   /* FT_NUM_MASTERS > 0 */
};
extern struct layer_state layer;

static inline int layer_master(void) { return layer.rank == 0; }

/* --- stop.c --------------------------------------------------------------- */

/* Ends the whole job with status (ft_abort), after one line on stderr:
 * "ftmw-mpi: CALL: what". */
void layer_stop(int status, const char *call, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
/* An erroneous call (MPI error class code): under MPI_ERRORS_RETURN,
 * returns code after one line on stderr; else stops the job. */
int layer_error(int code, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* At each MPI call of a master with replicas: what the program printed
 * since the last one is printed by the primary only. */
void layer_output(void);
/* A master with replicas (MPI_Init): its standard output goes to a file
 * that layer_output passes on, and at exit what is left. */
void layer_output_capture(void);
/* MPI_Finalize: every master asks who is primary, the last word before
 * the end, and the output so far is passed on. */
void layer_output_final(void);
/* Called by every generated stub: stops the job, naming the call. */
void ftmw_mpi_unsupported(const char *call) __attribute__((noreturn));
/* MPI_SUCCESS when the layer is up and comm is MPI_COMM_WORLD; stops the
 * job for another communicator (self_ok: MPI_COMM_SELF is answered by the
 * caller), or returns layer_error's code. */
int layer_check(const char *call, MPI_Comm comm, int self_ok);

/* --- data.c --------------------------------------------------------------- */

/* The bytes of count elements of type at buf: base, len; own is a packed
 * copy to free (ldata_free), when the type is not contiguous. */
typedef struct ldata {
  const void *base;
  size_t len;
  void *own;
} ldata;
/* MPI_SUCCESS, or an MPI error code (the layer_error said). */
int ldata_out(const char *call, const void *buf, int count, MPI_Datatype type,
              ldata *d);
void ldata_free(ldata *d);
/* Bytes a receive of count elements of type can take (MPI_ERR_* < 0 is
 * never returned: a bad type stops as layer_error). */
int ldata_room(const char *call, int count, MPI_Datatype type, size_t *room);
/* Writes len bytes into count elements of type at buf: MPI_SUCCESS, or
 * MPI_ERR_TRUNCATE (nothing written) when they do not fit. */
int ldata_in(const void *bytes, size_t len, void *buf, int count,
             MPI_Datatype type);
/* Fills *s (MPI_STATUS_IGNORE: nothing) as a receive of len bytes. */
void ldata_status(MPI_Status *s, int source, int tag, size_t len, int err);
/* 1 if type's elements lie one after another (buf holds count * size
 * bytes, no gaps): reductions need it. */
int ldata_contiguous(MPI_Datatype type);

/* --- log.c (master) ------------------------------------------------------- */

/* A logged message: shared by the logs it is in and the sends that write
 * it (reference counted). */
typedef struct lblob {
  int refs;
  int tag;
  size_t len;
  uint8_t data[];
} lblob;
lblob *lblob_new(const char *call, int tag, const void *data, size_t len);
void lblob_unref(void *blob); /* an ftmw_release_fn */
/* Writes b to dest without waiting (FTMW's eager send of the blob
 * itself, which keeps a reference until it is settled): 1, or 0 with
 * ft_error() set. */
int lblob_write(const char *call, int dest, lblob *b);

int llog_init(int W);
void llog_free(void);
/* Appends b to worker w's log (takes a reference). */
void llog_append(int w, lblob *b);
/* A message from worker w with tag was taken from FTMW: 1 if the program
 * is to see it, 0 if it is a restored incarnation's repeat of one already
 * seen. */
int llog_fresh(int w, int tag);
/* Worker w failed and its queued messages were taken: restores it and
 * sends it its log again, as often as it fails meanwhile. Stops the job
 * when it cannot be restored. */
void llog_restore(int w);

/* --- match.c -------------------------------------------------------------- */

typedef struct lreq lreq;
enum { LREQ_RECV = 1, LREQ_TAKE, LREQ_SEND };
struct lreq {
  ftmw_qnode node; /* in the posted list while posted */
  int kind;
  int done;
  int freed; /* MPI_Request_free'd before completion: freed when done */
  int index; /* in the request table (p2p.c), -1 if none */
  /* asked */
  void *buf;
  int count;
  MPI_Datatype type;
  int source, tag;
  /* got */
  int got_source, got_tag, err;
  size_t got_len;
  ftmw_msg *held; /* LREQ_TAKE: the message itself */
};

/* A request, in the table whose slot the program's MPI_Request names. */
lreq *lreq_new(int kind);
/* A request of the layer's own, not in the table (on the stack). */
void lreq_init(lreq *r, int kind);
void lreq_free(lreq *r);
MPI_Request lreq_handle(const lreq *r);
/* The request h names, or NULL (MPI_REQUEST_NULL, or not one of ours). */
lreq *lreq_of(MPI_Request h);

/* Posts r (kind, buf, count, type, source, tag set): matched now against
 * the unexpected queue, else when its message comes. */
void lmatch_post(lreq *r);
/* Removes r from the posted list if it is there. */
void lmatch_unpost(lreq *r);
/* Makes progress: takes messages from FTMW (block: at least one, or a
 * recovery) and matches them. Returns 1 if something happened. */
int lmatch_progress(int block);
/* The first unexpected message matching source and tag, or NULL. */
const ftmw_msg *lmatch_find(int source, int tag);
/* Blocking: the next message from source with the layer's tag (a
 * collective's), handed over. */
ftmw_msg *lmatch_take(int source, int tag);
/* Sends len bytes of data to dest (a master: logged first, for a
 * restored worker). sync: waits for dest's library to have it. A
 * master's send to a failed worker restores it. */
void lmatch_send(const char *call, int dest, int tag, const void *data,
                 size_t len, int sync);
/* A master's lmatch_send of a blob already made (logged, shared). */
void lmatch_send_blob(const char *call, int dest, lblob *b, int sync);
/* Recovery: takes the failed worker's queued messages, restores it. */
void lmatch_recover(int w);
void lmatch_free(void);

#endif
