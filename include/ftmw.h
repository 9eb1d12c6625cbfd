/*
 * FTMW: fault-tolerant master-worker message passing over MPI.
 *
 * MPI launches the processes; data travels over FTMW's own TCP connections,
 * one libuv I/O thread per process, so that the death of a process is seen at
 * once and reported as a return value at the next call that names it.
 *
 * Calling conventions (the thesis API):
 *  - communication calls return the number of elements transferred, and 0
 *    when the peer has failed or on any other error; ft_error() tells which;
 *  - every call is made from the application thread that called ft_init
 *    (one thread, like MPI_THREAD_FUNNELED); the library's own I/O thread
 *    never calls back into user code;
 *  - every master (primary and replicas) sees itself as rank 0, workers are
 *    ranks 1..W; workers talk only to rank 0.
 */
#ifndef FTMW_H
#define FTMW_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(FTMW_STATIC_DEFINE)
#define FTMW_EXPORT
#elif defined(__GNUC__)
#define FTMW_EXPORT __attribute__((visibility("default")))
#else
#define FTMW_EXPORT
#endif

#define FTMW_VERSION_MAJOR 0
#define FTMW_VERSION_MINOR 2

#define FT_ANY_SOURCE (-1)
#define FT_ANY_TAG    (-1)
/* The largest tag an application may use (MPI_TAG_UB): tags are
 * 0..FT_TAG_UB. The one above it is the library's own (ft_bcast). */
#define FT_TAG_UB     0x7ffffffe
/* ft_get_count's answer for a message that is not a whole number of
 * elements of the type asked (MPI_UNDEFINED). */
#define FT_UNDEFINED  (-32766)

/* Element types. Data travels as raw bytes: every process of a job must
 * share one data representation (one architecture), as with MPI on a
 * homogeneous cluster. */
typedef enum {
  FT_CHAR = 1,
  FT_BYTE,
  FT_SHORT,
  FT_INT,
  FT_UNSIGNED,
  FT_LONG,
  FT_UNSIGNED_LONG,
  FT_LONG_LONG,
  FT_FLOAT,
  FT_DOUBLE
} FT_Datatype;

/* The error list, defined once: name and message. Expanded into the enum
 * below, into ft_strerror() and into the name table (ft_errname). */
#define FT_ERRNO_MAP(XX)                                                       \
  XX(SUCCESS, "success")                                                       \
  XX(ERR_PEER_FAILED, "the peer process has failed")                           \
  XX(ERR_NO_MASTER, "every master process has failed")                         \
  XX(ERR_PEER_FINALIZED, "the peer has called ft_finalize")                    \
  XX(ERR_NOT_INITIALIZED, "ft_init has not been called, or ft_finalize was")   \
  XX(ERR_ALREADY_INITIALIZED, "ft_init was already called")                    \
  XX(ERR_RANK, "invalid rank")                                                 \
  XX(ERR_COUNT, "negative count")                                              \
  XX(ERR_BUFFER, "NULL buffer with a positive count")                          \
  XX(ERR_TYPE, "unknown datatype")                                             \
  XX(ERR_TAG, "invalid tag (must be >= 0, or FT_ANY_TAG where allowed)")       \
  XX(ERR_TRUNCATE, "receive buffer too small for the message")                 \
  XX(ERR_TOO_BIG, "message larger than the configured size limit")             \
  XX(ERR_ROLE, "this call is not allowed in this process's role")              \
  XX(ERR_NOT_FAILED, "the rank has not failed")                                \
  XX(ERR_NO_HOST, "no host or spare is left to restore on")                    \
  XX(ERR_NOT_POSTED, "no receive is posted for that rank")                     \
  XX(ERR_ALREADY_POSTED, "a receive is already posted for that rank")          \
  XX(ERR_NONE_POSTED, "no receive is posted")                                  \
  XX(ERR_NULL_ARG, "a required pointer argument is NULL")                      \
  XX(ERR_NOMEM, "out of memory")                                               \
  XX(ERR_ENV, "invalid environment setting")                                   \
  XX(ERR_MPI, "the MPI library failed")                                        \
  XX(ERR_NETWORK, "network set-up failed")                                     \
  XX(ERR_INTERNAL, "internal error")                                           \
  XX(ERR_OPTION, "an option is out of range")                                  \
  XX(ERR_TERMINATED, "the job is being stopped (SIGTERM): write what you "     \
                     "have and call ft_finalize")

typedef enum {
#define FT_ERRNO_GEN(name, msg) FT_##name,
  FT_ERRNO_MAP(FT_ERRNO_GEN)
#undef FT_ERRNO_GEN
  FT_ERRNO_COUNT
} FT_Error;

/* What a receive or a probe tells of its message, as MPI_Status does:
 * status.source and status.tag are MPI_SOURCE and MPI_TAG, status.error
 * MPI_ERROR, and ft_get_count(&status, type) is MPI_Get_count. */
typedef struct {
  int source;   /* rank the message came from (or the failed rank) */
  int tag;      /* tag of the message */
  int count;    /* elements received (a probe: the message's bytes, up to
                   INT_MAX) */
  int error;    /* FT_Error of the call */
  size_t bytes; /* the message's size in bytes, received or not (a probe,
                   FT_ERR_TRUNCATE); 0 when the call reported an error */
} FT_Status;

/* Starts MPI (unless the application already did; FTMW asks for
 * MPI_THREAD_MULTIPLE, which lets it abandon a spawn that never completes,
 * docs/known-problems.md), then launches or joins the job. Fills *rank (0
 * in every master) and *workers (W). Returns 1 in a process created at
 * start-up, 0 in a worker started by ft_restore (or a spare activated by
 * it), and -1 on failure, after printing the reason (for example an
 * invalid environment variable, named) on stderr. When the job could not
 * be started (-1 after a check of the environment, MPI or the network),
 * *rank is -1, and any later call that needs the job ends the process
 * (status 1), saying so, rather than run on without one.
 * Blocks until every worker of the job has connected (master) or until this
 * process has joined (worker). A static-mode spare does not return until
 * ft_restore activates it; if the job ends first it exits with status 0. */
FTMW_EXPORT int ft_init(int *argc, char ***argv, int *rank, int *workers);

/* Orderly shutdown: waits until every live process of the job has called
 * ft_finalize (processes that fail meanwhile are skipped, never waited for),
 * then closes every connection and finalizes MPI when it is safe to.
 * Returns 1, or 0 when called before ft_init. */
FTMW_EXPORT int ft_finalize(void);

/* Send to dest (a worker from a master, 0 from a worker), as MPI_Send:
 * buf may be reused when it returns. A message of up to FT_EAGER_LIMIT
 * bytes (default 65536) is eager: the call returns count once the data is
 * handed to FTMW's transport (copied), without waiting for dest, as MPI's
 * eager protocol does. If dest fails afterwards, the message may be lost,
 * and the failure is reported at the next call that names dest, or at the
 * FT_ANY_SOURCE receive or wait-any that would otherwise wait for it; a
 * master then restores dest and sends again what it needs (ms_restore
 * replays it). A longer message, and every send with master replicas
 * (FT_NUM_MASTERS > 0), waits as ft_ssend does. Returns 0 when dest has
 * already failed (FT_ERR_PEER_FAILED, FT_ERR_NO_MASTER) or on misuse. */
FTMW_EXPORT int ft_send(const void *buf, int count, FT_Datatype type, int dest,
                        int tag);

/* Synchronous send (MPI_Ssend's place): returns count once dest's library
 * has acknowledged the data, so the data is safe even if this process
 * dies right after; returns 0 when dest failed first
 * (FT_ERR_PEER_FAILED, FT_ERR_NO_MASTER) or on misuse. */
FTMW_EXPORT int ft_ssend(const void *buf, int count, FT_Datatype type,
                         int dest, int tag);

/* A non-blocking send's handle (ft_isend); FT_REQUEST_NULL once
 * completed. */
typedef struct ft_request *FT_Request;
#define FT_REQUEST_NULL ((FT_Request)0)

/* Non-blocking send: the same message as ft_send, but the call does not
 * wait for the acknowledgement, so that a master can keep every worker
 * busy (several tasks in flight each). The data is copied: buf may be
 * reused at once. Returns count once the send is started, or 0 on misuse
 * or when dest has already failed (FT_ERR_PEER_FAILED), and then no
 * request is made. With req, the send's outcome is known at the call that
 * completes it (ft_request_wait, _test, _waitall, _waitany): count once
 * dest's library acknowledged the data, or 0 with FT_ERR_PEER_FAILED (or
 * FT_ERR_NO_MASTER) when dest failed first, and the data may then never
 * have arrived. req may be NULL: the library completes the send itself,
 * and dest's failure is reported, as always, at the next call that names
 * it. Messages from one process to another arrive in the order of their
 * calls, ft_send and ft_isend alike. The frame may be held back for
 * less than 1 ms so that the frames sent meanwhile to the same process
 * go out in the same system call (docs/api.md: written at the next call
 * that waits, or by the I/O thread); a process that dies meanwhile never
 * sent it.
 * With master replicas (FT_NUM_MASTERS > 0), ft_isend waits for the
 * acknowledgement as ft_send does (the replicas' agreement takes each
 * send in turn); its request is complete when it returns. ft_isend is
 * not logged: ms_restore replays only the ms_* calls. */
FTMW_EXPORT int ft_isend(const void *buf, int count, FT_Datatype type,
                         int dest, int tag, FT_Request *req);

/* Completes *req: waits until its send is acknowledged or its destination
 * failed, frees it and sets *req to FT_REQUEST_NULL. Returns the count
 * sent, or 0 with the error (status->source: the destination). A null
 * request completes at once: 0, FT_SUCCESS, status->source
 * FT_ANY_SOURCE. status may be NULL. */
FTMW_EXPORT int ft_request_wait(FT_Request *req, FT_Status *status);

/* Completes *req if its send is settled (*done set to 1, the rest as
 * ft_request_wait); else *done is 0 and *req is left as it is. */
FTMW_EXPORT int ft_request_test(FT_Request *req, int *done,
                                FT_Status *status);

/* Completes the n requests of reqs. Returns 1 when every send succeeded,
 * else 0 with ft_error() the first failure's error; statuses[i] (if
 * statuses is not NULL) says how each went. */
FTMW_EXPORT int ft_request_waitall(int n, FT_Request *reqs,
                                   FT_Status *statuses);

/* Completes one settled request of reqs, waiting for one if none is:
 * *index is its place in reqs, and the return value and status are
 * ft_request_wait's. When every request of reqs is null, *index is -1 and
 * 0 is returned with FT_SUCCESS. */
FTMW_EXPORT int ft_request_waitany(int n, FT_Request *reqs, int *index,
                                   FT_Status *status);

/* Blocking receive. source may be FT_ANY_SOURCE in a master; tag may be
 * FT_ANY_TAG. Messages from one sender arrive in the order they were sent.
 * Returns the number of elements received (0 for an empty message, with
 * ft_error() == FT_SUCCESS), or 0 with an error: FT_ERR_PEER_FAILED when the
 * named source has failed and nothing from it is queued; with FT_ANY_SOURCE,
 * when nothing matching is queued and a worker has failed since it was last
 * reported, status->source names that worker. status may be NULL. */
FTMW_EXPORT int ft_recv(void *buf, int count, FT_Datatype type, int source,
                        int tag, FT_Status *status);
FTMW_EXPORT int ft_rcv(void *buf, int count, FT_Datatype type, int source,
                       int tag, FT_Status *status);

/* Waits until a message from source (FT_ANY_SOURCE in a master) with tag
 * (or FT_ANY_TAG) can be received, and receives nothing: *status tells
 * its source, tag and size (ft_get_count), and the next ft_recv naming
 * that source and tag takes that very message (messages from one sender
 * stay in order). Returns 1, or 0 with the error ft_recv would report, at
 * the same moments: FT_ERR_PEER_FAILED when the source has failed and
 * nothing matching from it is queued (with FT_ANY_SOURCE: nothing
 * matching is queued and a worker failed since it was last reported,
 * status->source names it), so a probe never waits for ever on a dead
 * process. With master replicas, what the primary's probe found (or
 * reported) is what every master's same call returns. status may be
 * NULL. */
FTMW_EXPORT int ft_probe(int source, int tag, FT_Status *status);

/* ft_probe that does not wait: *flag is 1 when a matching message is
 * queued (*status as ft_probe's), 0 when none is yet. Returns 1, or 0 with
 * ft_probe's errors (*flag 0). Each call also lets the library's I/O run
 * once, so a loop of ft_iprobe sees messages arrive. */
FTMW_EXPORT int ft_iprobe(int source, int tag, int *flag, FT_Status *status);

/* The number of elements of type in the message status describes (after
 * a receive or a probe): FT_UNDEFINED when its size is not a whole number
 * of them (or the count does not fit an int), -1 with FT_ERR_NULL_ARG or
 * FT_ERR_TYPE on a misuse. */
FTMW_EXPORT int ft_get_count(const FT_Status *status, FT_Datatype type);

/* ft_send to dest, then ft_recv from source (MPI_Sendrecv): a worker
 * returning a result and taking the next task, or a master answering one
 * worker. FTMW buffers at the receiver, so the send never waits for the
 * other side's receive. Returns the elements received, or 0 with the
 * error of whichever half failed first (when the send fails nothing is
 * received; status->source then names dest). status may be NULL. */
FTMW_EXPORT int ft_sendrecv(const void *sendbuf, int sendcount,
                            FT_Datatype sendtype, int dest, int sendtag,
                            void *recvbuf, int recvcount,
                            FT_Datatype recvtype, int source, int recvtag,
                            FT_Status *status);

/* MPI_Bcast from the master (root must be 0): every process calls it with
 * the same arguments. In a master it sends buf to every worker, and
 * returns count when each has acknowledged it; 0 with
 * FT_ERR_PEER_FAILED when any worker had failed (and was not restored) or
 * failed meanwhile (every live one still has it; ft_test says which
 * failed: each failure is reported by this call), FT_ERR_PEER_FINALIZED
 * when one had called ft_finalize. In a worker it receives the master's
 * next broadcast (never a message of ft_send: broadcasts have a tag of
 * their own) and returns the elements received, or 0 with ft_recv's
 * errors. With replicas every master makes the same call; only the
 * primary sends. */
FTMW_EXPORT int ft_bcast(void *buf, int count, FT_Datatype type, int root);

/* ft_bcast, logged: every broadcast is kept in each worker's ms_* log for
 * the whole job, and ms_restore replays all of them, in order and before
 * the rest of the log, to a restored worker, so that it gets the problem
 * again. In a worker it is
 * ft_bcast (workers need not know whether their master logs). */
FTMW_EXPORT int ms_bcast(void *buf, int count, FT_Datatype type, int root);

/* Seconds since an arbitrary moment of this job, with microsecond
 * resolution (MPI_Wtime). In masters with replicas it is the primary's
 * clock, followed by every replica's same call (so that a program that
 * decides on time decides alike), and it goes on from there in a master
 * that takes over. Elsewhere, this process's monotonic clock. */
FTMW_EXPORT double ft_wtime(void);

/* Ends the whole job (MPI_Abort): this process tells every process it is
 * connected to, each of them (a master: after telling its own) exits with
 * status code & 0xff, and so does this one once they have closed their
 * connections, or after FTMW_ABORT_WAIT_MS (2 s) if some cannot be
 * reached. ftmwrun then exits with that status. While the job ends, no
 * call, in any of its processes, that reports or acts on a failure
 * returns. Does not return. Before ft_init (or after ft_finalize), this
 * process alone exits. */
FTMW_EXPORT void ft_abort(int code)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* Master only. Posts a receive from one worker, completed later by ft_wait
 * or ft_waitany; the buffer must stay valid until then. Several receives
 * may be posted for one worker (to keep several tasks in flight to it):
 * they complete in the order they were posted, each taking the oldest
 * message from that worker that matches its tag once the ones before it
 * have completed. An ms_irecv must be the only receive posted for its
 * worker (FT_ERR_ALREADY_POSTED otherwise). Returns 1 when posted, 0 on
 * error (FT_ERR_PEER_FAILED if the worker has already failed and nothing
 * from it is queued: every receive posted for it is then cancelled). */
FTMW_EXPORT int ft_irecv(void *buf, int count, FT_Datatype type, int source,
                         int tag);

/* Completes the oldest receive posted for rank. Returns the elements
 * received, or 0 with FT_ERR_PEER_FAILED when the worker failed first:
 * every receive posted for it is then cancelled. */
FTMW_EXPORT int ft_wait(int rank);

/* Completes the oldest posted receive of some worker. Returns the rank it
 * completed (and sets *rank to it), or -1 with *rank set to a failed
 * worker whose posted receives can never complete (they are all
 * cancelled), or -1 with *rank 0 on misuse (nothing posted). */
FTMW_EXPORT int ft_waitany(int *rank);

/* Master only. Restarts failed worker rank: on a host that has not failed
 * before (spawn mode; with no hostfile the local host is reused), or on an
 * idle spare (static mode). In spawn mode without master replicas it
 * returns at once, the new worker pending: what is sent to it waits until
 * it connects, and a spawn that fails is reported like a death, at the
 * next call that names it. Otherwise it blocks until the new worker has
 * connected. Returns 1 on success, 0 when no host or spare is left
 * (FT_ERR_NO_HOST) or on misuse. Undelivered messages of the failed
 * incarnation are discarded, also when no new worker can be started (at
 * every master replica alike). */
FTMW_EXPORT int ft_restore(int rank);

/* Message logging (master only). The same as ft_send, ft_recv and
 * ft_irecv, and the call is also recorded in the log the master keeps for
 * the worker, so that ms_restore can bring a restarted worker to where the
 * dead one was. The tag names the work cycle: consecutive calls to a
 * worker with the same tag form one cycle; a later call with that tag
 * starts a new instance, which replaces the old one. A receive with
 * FT_ANY_TAG is logged on its own and always replayed. Sends need a real
 * tag. Sends are logged with a copy of their data, receives with the
 * buffer given (which must stay valid while its cycle is the newest).
 * docs/logging.md has the rules and an example. */
FTMW_EXPORT int ms_send(const void *buf, int count, FT_Datatype type, int dest,
                        int tag);
FTMW_EXPORT int ms_recv(void *buf, int count, FT_Datatype type, int source,
                        int tag, FT_Status *status);
FTMW_EXPORT int ms_rcv(void *buf, int count, FT_Datatype type, int source,
                       int tag, FT_Status *status);
FTMW_EXPORT int ms_irecv(void *buf, int count, FT_Datatype type, int source,
                         int tag);

/* Master only. Restarts failed worker rank (as ft_restore) and replays its
 * log: every single-call cycle and FT_ANY_TAG receive, no call of a
 * completed cycle, and the unfinished cycle up to the call that failed
 * (receiving into the recorded buffers). If the new worker dies during
 * the replay, restarts it again. Returns 1 when the worker is where the
 * dead one was, 0 when no host or spare is left (FT_ERR_NO_HOST) or on a
 * misuse. */
FTMW_EXPORT int ms_restore(int rank);

/* Master only. ms_restore without waiting for the last ms_irecv of the
 * replay: an ms_irecv whose completion the program had tried (its
 * ft_wait/ft_waitany reported the failure) is posted again and left
 * posted, and the program's next ft_wait/ft_waitany completes it (with
 * the new worker's message, or its failure). With ft_restore's restores
 * that do not block (spawn mode without replicas), it returns at once.
 * A replayed ms_recv, an ms_irecv that another receive followed in the
 * cycle, or one whose ft_wait/ft_waitany had completed it (a worker that
 * died after its answer, before a call with another tag closed the
 * cycle) is still waited for, as in ms_restore: the program never gets an
 * answer twice. Same return values. */
FTMW_EXPORT int ms_irestore(int rank);

/* Master only. Bytes the ms_* log holds for worker rank (records and data
 * copies), 0 on a misuse. */
FTMW_EXPORT size_t ms_log_size(int rank);

/* 1 if rank is known to have failed and was not restored, else 0. */
FTMW_EXPORT int ft_test(int rank);

/* The lowest failed, unrestored rank, or 0 if there is none. */
FTMW_EXPORT int ft_testany(void);

/* 1 in the process that currently acts as the primary master. */
FTMW_EXPORT int ft_is_primary(void);

/* The FT_Error of this thread's last FTMW call. */
FTMW_EXPORT int ft_error(void);

/* Static strings; "unknown error" / "FT_UNKNOWN" for codes out of range. */
FTMW_EXPORT const char *ft_strerror(int code);
FTMW_EXPORT const char *ft_errname(int code);

/* Size in bytes of one element of type, or 0 for an unknown type. */
FTMW_EXPORT size_t ft_type_size(FT_Datatype type);

#ifdef __cplusplus
}
#endif
#endif /* FTMW_H */
