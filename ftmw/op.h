/* The work the application thread hands the loop (transport.h): its
 * kinds and its record, which the peers' table also holds while a
 * restored worker joins (peer.h: pending). */
#ifndef FTMW_OP_H
#define FTMW_OP_H

#include <stdint.h>
#include <sys/socket.h>

#include "link.h" /* ftmw_out */
#include "queue.h"

struct ftmw_peer;

enum ftmw_op_kind {
  FTMW_OP_FRAME = 1, /* write a frame to op->peer */
  FTMW_OP_CONNECT,   /* connect to master op->peer at op->addr */
  FTMW_OP_ACTIVATE,  /* hand spare op->peer to worker op->target */
  FTMW_OP_FENCE,     /* declare worker op->peer (incarnation op->epoch)
                        failed and fence it (timed.h) */
  FTMW_OP_STOP,      /* close everything and end the loop */
  FTMW_OP_ABORT      /* end the job with exit status op->code (abort.h) */
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
  const char *why;          /* FENCE: the reason, logged and traced */
  int code;                 /* ABORT: the exit status */
  struct sockaddr_storage addr;
  ftmw_out out; /* FRAME: the frame; every op: its outcome */
} ftmw_op;

#endif
