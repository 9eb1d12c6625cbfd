/* The master's per-worker log of ms_* calls (SPEC section 5, thesis 4.4):
 * pure data structure, no I/O. ms.c records calls here and replays the
 * plan this module computes.
 *
 * A log is an ordered list of nodes. Consecutive calls to the worker with
 * the same tag form one node, a work cycle. A later call with tag T starts
 * a new instance that replaces the older node of tag T in place (its calls
 * and data copies are freed). A call with FT_ANY_TAG is a node of its own
 * and is never replaced, and so is each broadcast (FTMW_TAG_BCAST), which
 * moreover neither closes nor ends the current cycle. A node is closed once a call with another tag
 * follows it; a closed multi-call node whose calls all succeeded is a
 * complete cycle.
 *
 * Replay plan: first every broadcast, in log order (they are set-up data
 * the worker may need before any cycle, and only its ft_bcast takes
 * them); then, in log order, every single-call node (so every FT_ANY_TAG
 * receive); no call of a complete cycle; every call of any other node (an
 * incomplete cycle: its calls up to and including the ones that failed,
 * which are its last, since the program restores right after a failure).
 *
 * Application thread only. */
#ifndef FTMW_MSLOG_H
#define FTMW_MSLOG_H

#include "ftmw.h"
#include "queue.h"

#include <stddef.h>

/* The tag of ft_bcast's messages, above every application tag (no
 * FT_ANY_TAG receive matches it: match.h). In the log each broadcast is a
 * node of its own, like an FT_ANY_TAG receive: never replaced, always
 * replayed. */
#define FTMW_TAG_BCAST (FT_TAG_UB + 1)

enum ftmw_mslog_kind {
  FTMW_MSLOG_SEND = 1,
  FTMW_MSLOG_RECV,
  FTMW_MSLOG_IRECV,
  FTMW_MSLOG_WAIT /* replay only: complete the irecv posted by the replay */
};

enum ftmw_mslog_state {
  FTMW_MSLOG_OK = 0,  /* the call succeeded */
  FTMW_MSLOG_FAILED,  /* the call reported the worker's failure */
  FTMW_MSLOG_PENDING, /* an ms_irecv whose completion has not been tried */
};

typedef struct ftmw_mslog_call {
  ftmw_qnode node; /* ftmw_mslog_node.calls */
  int kind;        /* FTMW_MSLOG_* */
  int state;       /* FTMW_MSLOG_OK... */
  /* An ms_irecv whose completion (ft_wait/ft_waitany) the program already
   * tried: replay must complete it, not just post it again. */
  int completion_tried;
  int tag; /* as the program gave it (FT_ANY_TAG possible for receives) */
  int count;
  FT_Datatype type;
  struct ftmw_mslog_node *fresh; /* until added: the node it may need */
  void *buf; /* receives: the application's buffer; sends: data below */
  size_t bytes;
  unsigned char data[]; /* sends: a copy of the data */
} ftmw_mslog_call;

typedef struct ftmw_mslog_node {
  ftmw_qnode node; /* ftmw_mslog.nodes */
  int tag;         /* the cycle's tag, or FT_ANY_TAG */
  int closed;      /* a call with another tag followed */
  int ncalls;
  ftmw_qnode calls; /* ftmw_mslog_call.node, call order */
} ftmw_mslog_node;

typedef struct ftmw_mslog {
  ftmw_qnode nodes; /* ftmw_mslog_node.node, log order */
  ftmw_mslog_node *cur; /* the node the last call went to */
  ftmw_mslog_call *posted; /* the ms_irecv now posted, if one is */
  int ncalls;            /* calls held, across nodes */
  size_t bytes;       /* memory held: structures and data copies */
} ftmw_mslog;

void ftmw_mslog_init(ftmw_mslog *log);

/* Frees every node, call and copy. The log stays usable (empty). */
void ftmw_mslog_clear(ftmw_mslog *log);

/* A new call record of kind with tag, not yet in any log. For a send it
 * holds a copy of bytes from buf; for a receive, buf itself. It starts as
 * FTMW_MSLOG_PENDING for an irecv, FTMW_MSLOG_OK otherwise. NULL when out of
 * memory. Made (with the node it may need) before the operation, so that a
 * call that went out is never left unlogged for want of memory. */
ftmw_mslog_call *ftmw_mslog_call_new(int kind, int tag, void *buf, int count,
                                 FT_Datatype type, size_t bytes);

/* Frees a record that was not added (the operation was a misuse). */
void ftmw_mslog_call_free(ftmw_mslog_call *c);

/* Adds c to its node: the current node if it has c's tag, else a new
 * instance of the tag's node (replacing the old one in place) or a new
 * node at the end. */
void ftmw_mslog_add(ftmw_mslog *log, ftmw_mslog_call *c);

/* A farm's answer: an FT_ANY_SOURCE ms_recv brought this worker's
 * message with tag, which is not the tag of the node the last call to it
 * went to (its current task's). If that node holds only sends, all of
 * which succeeded, the task is answered: the node is emptied (its copies
 * freed, nothing replayed) and 1 is returned; the receive is not logged.
 * Else 0: the receive is logged as any other (ftmw_mslog_add). So a farm
 * with one task in flight per worker, its messages sent with one tag and
 * its results taken from any worker with another, keeps per worker its
 * set-up and its unanswered task, which ms_restore gives back to the new
 * worker (no bookkeeping in the program). */
int ftmw_mslog_answered(ftmw_mslog *log, int tag);

/* The posted ms_irecv (log->posted), if any, has completed (ok) or
 * failed at ft_wait/ft_waitany: records the outcome. */
void ftmw_mslog_posted_done(ftmw_mslog *log, int ok);

/* 1 if node n is replayed by ms_restore, 0 if it is skipped. */
int ftmw_mslog_node_replayed(const ftmw_mslog_node *n);

/* Fills plan[0..] with the calls to replay, in order; returns how many.
 * plan must have room for log->ncalls entries. */
int ftmw_mslog_plan(const ftmw_mslog *log, ftmw_mslog_call **plan);

/* Performs one replayed operation (a kind above, on call c; c is NULL for
 * FTMW_MSLOG_WAIT) against the new worker; returns an FT_Error. */
typedef int (*ftmw_mslog_op)(void *ctx, int kind, ftmw_mslog_call *c);

/* Replays the plan through op. An ms_irecv is posted again, and completed
 * (FTMW_MSLOG_WAIT) before the next receive from the worker, as the
 * program waited for it before making that receive; the last one is
 * completed at the end when the program's wait had completed it, and
 * when that wait reported the failure and wait_last is set (ms_restore);
 * else it stays posted (log->posted, pending again) for the program's own
 * wait (ms_irestore). The
 * log's states change only when the whole replay succeeded, so a replay
 * cut short by another death is planned again exactly the same. Returns
 * FT_SUCCESS or the first failing operation's error (FT_ERR_NOMEM if the
 * plan cannot be allocated); *n is set to the number of calls planned. */
int ftmw_mslog_replay(ftmw_mslog *log, ftmw_mslog_op op, void *ctx,
                      int wait_last, int *n);

#endif
