/* What the API calls (api.c, send.c, isend.c, recv.c, ms.c) share: naming a peer,
 * checking arguments, reporting a peer's failure once, and status.
 * Application thread only; _locked: st.lock held. */
#ifndef FTMW_CALLS_H
#define FTMW_CALLS_H

#include "ftmw_impl.h"
#include "mslog.h"

/* What a master's calls keep of each worker: the application's view,
 * which the rest of the library never reads. */
typedef struct ftmw_post { /* a receive ft_irecv posted */
  void *buf;
  int count;
  FT_Datatype type;
  int tag;
  int logged; /* posted by ms_irecv (or its replay): the log's log->posted */
} ftmw_post;

/* A worker's posted receives, oldest first: a ring of n from v[head]. */
typedef struct ftmw_posts {
  ftmw_post *v;
  int cap, head, n;
} ftmw_posts;

typedef struct ftmw_app_peer {
  uint64_t next_seq; /* the last DATA number its sends used */
  ftmw_qnode isends; /* its ft_isend requests not yet completed (isend.c) */
  ftmw_posts posts;
  ftmw_mslog log;     /* the ms_* calls to it */
  uint32_t app_epoch; /* the incarnation ft_restore last gave */
  /* The call that last told the program of its failure, until the
   * program heeds it (ft_error, ft_restore, ms_restore, ft_test,
   * ft_testany: see ftmw_check_heeded); NULL when there is none to heed. */
  const char *told_by;
  int told_how; /* 0 a send's or probe's report, else FTMW_TOLD_* */
  int told_primary; /* this master was the primary when it was told */
  unsigned long told_report; /* its number (ftmw_note_report) */
} ftmw_app_peer;

/* Sets up (ft_init, once W is known) and frees (ft_finalize) the state of
 * workers 0..W. ftmw_app_init returns 0, or -1 out of memory. */
int ftmw_app_init(ftmw_ctx *cx, int W);
void ftmw_app_free(ftmw_ctx *cx);

/* What the calls keep of worker p. */
ftmw_app_peer *ftmw_app_of(ftmw_ctx *cx, const ftmw_peer *p);

/* This process is a master. */
int ftmw_is_master(ftmw_ctx *cx);

/* The peer a call names: a worker rank from a master, rank 0 (the primary
 * master) from a worker. NULL, with the error set, for a bad rank. */
ftmw_peer *ftmw_peer_of(ftmw_ctx *cx, int rank);

/* What a receive (or probe) from source names: *p NULL for FT_ANY_SOURCE
 * in a master (any worker), else the one peer (a worker's FT_ANY_SOURCE
 * is its master). Returns FT_SUCCESS, or FT_ERR_RANK (set) for a bad
 * rank. */
int ftmw_source_peer(ftmw_ctx *cx, int source, ftmw_peer **p);

/* FT_ERRORS=checked (the default): a master whose program was told of
 * worker p's failure by a receive (a result it waited for will not come)
 * and has not heeded it since (read a failure with ft_error, or called
 * ft_restore, ms_restore, ft_test or ft_testany for p) ignored it when it
 * ends (ft_finalize: ftmw_check_all_heeded), or when it sends to p (call)
 * after an FT_ANY_SOURCE receive told it (ftmw_check_heeded: a farm
 * handing the next task to whoever "answered"). A send's report alone
 * costs no result (a goodbye to a worker that died), and any other call
 * may name p again: the thesis' own programs send twice to a failed
 * worker and restore it at the second report. The job then stops, status
 * FTMW_EXIT_IGNORED, with a line naming both calls. Only the primary
 * judges, what it was told as the primary; nothing in a worker, or with
 * FT_ERRORS=return. */
enum { FTMW_TOLD_RECV = 1, FTMW_TOLD_ANY = 2 };
#define FTMW_EXIT_IGNORED 5
void ftmw_check_heeded(ftmw_ctx *cx, const ftmw_peer *p, const char *call);
void ftmw_check_all_heeded(ftmw_ctx *cx);

/* A receive (any: from FT_ANY_SOURCE) told the program of p's failure. */
void ftmw_told_by_recv(ftmw_ctx *cx, const ftmw_peer *p, int any);

/* Ends the whole job with status code (ft_abort's end, abort.h): every
 * process it reaches exits with it. Does not return. */
void ftmw_end_job(ftmw_ctx *cx, int code) __attribute__((noreturn));

/* The program heeded p's failure (see above). */
void ftmw_heeded(ftmw_ctx *cx, const ftmw_peer *p);

/* The worker a master-only call names, or NULL with the error set (not
 * initialized, not a master, bad rank). */
ftmw_peer *ftmw_master_peer(ftmw_ctx *cx, int rank);

/* Checks a buffer description; its size in bytes goes to *bytes. Returns
 * FT_SUCCESS or the FT_ERR_* code. */
int ftmw_check_buffer(ftmw_ctx *cx, const void *buf, int count,
                      FT_Datatype type, size_t *bytes);

/* What a send (ft_send, ft_isend, ms_send; call: its name) names: checks
 * its arguments and returns the peer (bytes: the data's size), or NULL
 * with the error set. Stops the job if the send ignores a failure
 * (ftmw_check_heeded). */
ftmw_peer *ftmw_send_target(ftmw_ctx *cx, const char *call, const void *buf,
                            int count, FT_Datatype type, int dest, int tag,
                            size_t *bytes);

/* Reports p's failure from the API call named call: clears p's pending
 * report and traces the call's name (failure_reported). Returns the
 * error. */
int ftmw_report_failure_locked(ftmw_ctx *cx, ftmw_peer *p, const char *call);

/* Never returns once the job is being ended (ft_abort): what every call
 * that reports or acts on a failure does first (st.lock held). */
void ftmw_hold_if_aborting_locked(ftmw_ctx *cx);

/* The error the call named call reports when p, which it names, cannot
 * take part any more (ftmw_peer_gone: failed, or finished), or
 * FT_SUCCESS. */
int ftmw_peer_gone_locked(ftmw_ctx *cx, ftmw_peer *p, const char *call);
int ftmw_peer_gone(const ftmw_peer *p);

/* A replica told by the primary that worker p failed waits until it sees
 * it too, or sees p replaced by the primary's next ft_restore. */
void ftmw_await_gone_locked(ftmw_ctx *cx, ftmw_peer *p);

/* A replica's call reports the failure (or end) of p that the primary's
 * same call reported. */
int ftmw_decided_gone_locked(ftmw_ctx *cx, ftmw_peer *p, const char *call);

/* With FT_TRACE_DATA=N, every Nth data message sent or received is
 * traced. */
void ftmw_trace_data(ftmw_ctx *cx, const char *event, int peer, int tag,
                     size_t bytes);

/* FT_SUCCESS if an application may give tag: 0..FT_TAG_UB, or FT_ANY_TAG
 * where any_ok; else FT_ERR_TAG. (The library's own calls may also use
 * FTMW_TAG_BCAST, which the internal paths accept.) */
static inline int ftmw_check_tag(int tag, int any_ok) {
  return (tag >= 0 && tag <= FT_TAG_UB) || (any_ok && tag == FT_ANY_TAG)
             ? FT_SUCCESS
             : FT_ERR_TAG;
}

/* Fills *status (if not NULL); status->bytes is 0. */
void ftmw_set_status(FT_Status *status, int source, int tag, int count,
                     int error);

#endif
