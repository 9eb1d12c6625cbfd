/* The link layer: FTMW's TCP connections. It listens and connects,
 * authenticates a connection by its HELLO (the job's secret), reads and
 * writes frames, matches ACKs to the frames that wait for them, sends
 * heartbeats and detects failures: a connection closed or reset, a
 * protocol error, or a peer silent past the timeout (a silent peer on
 * this host is first looked up in its kernel, localproc.h, and spared
 * while it waits for a CPU). It knows nothing of roles, replicas or
 * spares: what a connection's frames mean is its owner's, told through
 * the upcalls of ftmw_link_ops. Everything runs on the thread that owns
 * the loop, but ftmw_link_init; it takes no lock. The outcomes a caller
 * waits for (ftmw_out's done/acked/failed) are atomics, signalled with
 * ftmw_loop_wake_owner. */
#ifndef FTMW_LINK_H
#define FTMW_LINK_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "localproc.h"
#include "loop.h" /* ftmw_loop */
#include "queue.h"
#include "wire.h"

typedef struct ftmw_conn ftmw_conn;

/* The pieces a frame goes out in: its header, then up to
 * FTMW_OUT_BUFS - 1 pieces of data, written one after the other. */
#define FTMW_OUT_BUFS 4

/* A frame going out on a connection: the header, and the data the
 * caller keeps alive until done (and, with want_ack, until acked or
 * failed). */
typedef struct ftmw_out {
  ftmw_qnode node; /* the connection's frames awaiting their ACK */
  int want_ack;
  uint64_t seq;
  uint8_t hdr[FTMW_HDR_SIZE];
  uint8_t ack[FTMW_HDR_SIZE]; /* an ACK to the peer, written ahead of it */
  uv_buf_t bufs[FTMW_OUT_BUFS];
  unsigned nbufs;
  uv_write_t req;
  /* The outcome, set by the link on the loop's owner and read by any
   * thread: atomics, each set once. A failed write sets failed before
   * done, and the link touches the frame no more once it is settled (done,
   * and with want_ack acked or failed too): the caller may free it from
   * then on. */
  _Atomic int done;   /* written (or given up) */
  _Atomic int acked;  /* the peer acknowledged */
  _Atomic int failed; /* the connection failed first */
} ftmw_out;

/* Why a bound connection's peer is down, for on_down. */
enum ftmw_link_down {
  FTMW_DOWN_CLOSED = 1, /* the peer closed or reset the connection */
  FTMW_DOWN_SILENT,     /* nothing heard past the timeout */
  FTMW_DOWN_REFUSED,    /* a protocol error, or no memory to go on */
  FTMW_DOWN_UNREACHED   /* connecting to it failed */
};

/* The upcalls; on_hello, on_frame and on_down are required, the others
 * may be NULL. */
typedef struct ftmw_link_ops {
  /* A HELLO with the job's secret came on unbound connection c: binds c
   * (ftmw_link_bind) and returns 0; refuses it with *reject set and
   * returns -1 (the link closes c); or returns 1 when it closed c
   * itself. */
  int (*on_hello)(void *ctx, ftmw_conn *c, const ftmw_hello *m,
                  const char **reject);
  /* A frame on connection c bound to peer (neither HELLO nor heartbeat).
   * payload (NULL when h->len is 0) is the data of an ftmw_msg
   * (msg.h), the callee's to keep or free. Returns non-zero when c was
   * closed meanwhile. */
  int (*on_frame)(void *ctx, ftmw_conn *c, void *peer, const ftmw_hdr *h,
                  void *payload);
  /* The peer bound to c is down (why, one of ftmw_link_down, and a text
   * for logs): the callee closes c (ftmw_link_close), which it may do at
   * once or after a last frame. */
  void (*on_down)(void *ctx, ftmw_conn *c, void *peer, int why,
                  const char *text);
  /* The peer bound to c has been silent for over half the timeout
   * (quiet, silent_ms), or speaks again after that (!quiet). */
  void (*on_quiet)(void *ctx, ftmw_conn *c, void *peer, int quiet,
                   uint64_t silent_ms);
  /* The loop did not run for gap ms before now: every deadline has moved
   * on by it. long_stall: long enough for peers to have declared this
   * process failed. */
  void (*on_stalled)(void *ctx, uint64_t gap, uint64_t now, int long_stall);
  /* At the start of each heartbeat tick, before the stall check: the
   * owner's fault points that hold the loop's thread up (fault.h). */
  void (*on_tick_start)(void *ctx);
  /* At the end of each heartbeat tick. */
  void (*on_tick)(void *ctx, uint64_t now);
  /* The peer's name in traces ("worker 3"). */
  const char *(*name)(void *ctx, const void *peer, char *buf, size_t len);
} ftmw_link_ops;

/* A silent peer on this host that waits for a CPU is spared, but for at
 * most this many timeouts of silence. */
#define FTMW_LINK_SPARED_MAX 10

typedef struct ftmw_link_cfg {
  uint64_t heartbeat_ms, timeout_ms;
  size_t max_message; /* the largest payload a bound connection takes */
  uint8_t secret[FTMW_SECRET_SIZE];
} ftmw_link_cfg;

/* One per process (a test may make two). Fields are the link's own. */
typedef struct ftmw_link {
  ftmw_loop *lp; /* its loop, and who runs it (loop.h) */
  const ftmw_link_ops *ops;
  void *ctx;
  ftmw_link_cfg cfg;
  ftmw_hello self; /* what this process says in its HELLO */
  uint32_t self_pid;
  ftmw_qnode conns; /* every open ftmw_conn */
  uv_tcp_t listener;
  int listening;
  uv_timer_t tick;
  uint64_t last_tick;
  uv_timer_t ack_timer; /* the deadline of the lazy ACKs */
  int acks_due;         /* connections with an ACK due */
  struct { /* the tick thread's own times at the last tick (see tick_cb) */
    uint64_t cpu, runq, at;
    uv_thread_t by;
  } sched_seen;
  uint64_t stalled_ms; /* atomic: read by any thread */
} ftmw_link;

/* A connection. Fields are the link's own (link.c: connections, reads,
 * writes; link_watch.c: heartbeats, silence, stalls). */
#define FTMW_LINK_STAGE_SIZE (32 * 1024)

struct ftmw_conn {
  uv_tcp_t tcp;
  ftmw_link *link;
  ftmw_qnode node;    /* link->conns */
  void *peer;         /* NULL until bound (authenticated) */
  uint32_t pid;       /* the bound peer's id in frame headers */
  const ftmw_place *at; /* where it runs (the binder's record) */
  ftmw_qnode unacked; /* ftmw_out.node, oldest first */
  ftmw_reader reader;
  int direct;  /* the last read buffer was a payload, read in place */
  int closing;
  int connecting; /* uv_tcp_connect pending: writes queue behind the HELLO */
  int broken;     /* a read failed (EOF, reset): nothing more goes out */
  int quiet;      /* silent past half the timeout (told on_quiet) */
  /* What the peer sent that wants an ACK: up to ack_due is received, up
   * to ack_sent acknowledged (the rest lazily, see ftmw_link_ack). */
  uint64_t ack_due, ack_sent;
  unsigned ack_frames; /* frames and bytes acknowledged by the next ACK */
  size_t ack_bytes;
  const char *reject; /* why an unauthenticated frame was refused */
  uint64_t opened_ms, last_rx_ms, last_tx_ms;
  /* The peer's kernel, asked while it is silent past the timeout (see
   * spared; reset by heard): the last look at it, when it was first
   * found asleep, and whether its starvation was traced. */
  ftmw_proc_sample look;
  uint64_t asleep_ms;
  int starved;
  char addr[64];
  uv_connect_t connect_req;
  uint8_t stage[FTMW_LINK_STAGE_SIZE];
};

/* link.c's, for link_watch.c only: the peer bound to c is down
 * (FTMW_DOWN_*, why in text), or an unbound c is closed; */
void ftmw_link_down(ftmw_conn *c, int why, const char *text);
/* c's peer spoke, or this process stalled and its looks are stale: its
 * kernel is asked afresh when it is silent again; */
void ftmw_link_heard(ftmw_conn *c);
/* writes the ACK c owes its peer, if any. */
void ftmw_link_send_ack(ftmw_conn *c);

/* o is written, or given up (failed): sets its outcome, failed before
 * done, and wakes a waiting call (the loop's owner, no lock). Without
 * want_ack, o is settled: the caller may free it from then on. Also for
 * a frame its owner settles itself (transport.c's ops). */
void ftmw_link_finish(ftmw_loop *lp, ftmw_out *o, int failed);

/* Sets l up on loop and starts its heartbeat tick. */
void ftmw_link_init(ftmw_link *l, ftmw_loop *lp, const ftmw_link_cfg *cfg,
                    const ftmw_link_ops *ops, void *ctx);

/* Who this process is (set before connecting; again when a spare
 * becomes a worker): its HELLO's role, id, epoch and place, and pid, the
 * source in its frame headers. */
void ftmw_link_set_self(ftmw_link *l, const ftmw_hello *self, uint32_t pid);

/* Listens on ip, port chosen by the kernel (*port). Returns 0 or a libuv
 * error code. */
int ftmw_link_listen(ftmw_link *l, const char *ip, int *port);

/* Connects to addr, bound to peer already (see ftmw_link_bind); HELLO
 * goes first, ahead of anything written on it later. Returns 0, or a
 * libuv error code with nothing left open. A refused connection comes
 * later as on_down(FTMW_DOWN_UNREACHED); one still not made after the
 * timeout, as FTMW_DOWN_SILENT (the peer is judged from the start). */
int ftmw_link_connect(ftmw_link *l, const struct sockaddr *addr, void *peer,
                      uint32_t pid, const ftmw_place *at, ftmw_conn **out);

/* Binds c to peer, whose id in frame headers is pid and whose process
 * runs at *at (read when it is silent; the caller keeps it alive): its
 * frames go to on_frame, up to cfg.max_message long. Also rebinds. */
void ftmw_link_bind(ftmw_conn *c, void *peer, uint32_t pid,
                    const ftmw_place *at);

/* Closes c (no-op when closing already): its frames awaiting an ACK
 * fail, and nothing more comes from it. */
void ftmw_link_close(ftmw_conn *c);

/* Whether c may carry frames (not closing), and whether the peer may
 * still read one (nor broken nor still connecting either). */
int ftmw_link_open(const ftmw_conn *c);
int ftmw_link_readable_by_peer(const ftmw_conn *c);

/* Milliseconds since anything was heard from c's peer (0 while data waits
 * to be read). The loop's owner only. */
uint64_t ftmw_link_silent_ms(ftmw_conn *c);

/* The largest payload of a control frame (ftmw_link_send): a HELLO. */
#define FTMW_LINK_CTRL_MAX FTMW_HELLO_SIZE

/* Writes a control frame (no ACK; a copy is kept if the socket does not
 * take it at once) to c's peer; its payload is at most
 * FTMW_LINK_CTRL_MAX bytes (a longer one is a bug: c's peer is then
 * reported down, FTMW_DOWN_REFUSED). */
void ftmw_link_send(ftmw_conn *c, int type, int tag, uint64_t seq,
                    unsigned flags, const void *payload, size_t len);

/* The most frames ftmw_link_write takes in one system call. */
#define FTMW_LINK_BATCH_MAX 64

/* Writes outs[0..n-1] (headers encoded, bufs set) on c, in that order and
 * in one system call as far as the socket takes them; each is done once
 * written, or failed when c fails first. One with want_ack waits on c for
 * the ACK of its seq (ftmw_link_acked), which must be the seq in its
 * header. */
void ftmw_link_write(ftmw_conn *c, ftmw_out *const *outs, unsigned n);

/* The ACK of seq came on c: it acknowledges every frame awaiting one up
 * to seq (ACKs are cumulative), and at least the oldest. Returns 0, or -1
 * when it acknowledges none, or one never written (a protocol error). */
int ftmw_link_acked(ftmw_conn *c, uint64_t seq);

/* When an ACK goes (ftmw_link_ack). */
enum ftmw_ack_when {
  FTMW_ACK_NOW,  /* now, ahead of anything the owner writes next (a
                    worker's ACKED to the replicas) */
  FTMW_ACK_SOON, /* the sender may wait for it (ft_isend's request): with
                    the next frame written to the peer, in the same write,
                    or within about a millisecond */
  FTMW_ACK_LATER /* nobody waits for it (an eager send): with the next
                    frame to the peer, or once FTMW_LINK_ACK_FRAMES frames
                    or FTMW_LINK_ACK_BYTES bytes wait for it, or at the
                    next heartbeat tick, whichever comes first */
};
#define FTMW_LINK_ACK_FRAMES 64
#define FTMW_LINK_ACK_BYTES ((size_t)1 << 20)

/* When a DATA frame's ACK goes, from its flags (wire.h). */
static inline int ftmw_link_ack_when(unsigned flags) {
  return (flags & FTMW_FLAG_EAGER)  ? FTMW_ACK_LATER
         : (flags & FTMW_FLAG_LAZY) ? FTMW_ACK_SOON
                                    : FTMW_ACK_NOW;
}

/* Frame seq, of len payload bytes, came on c and wants its ACK, which
 * acknowledges every frame before it too; when: one of ftmw_ack_when. */
void ftmw_link_ack(ftmw_conn *c, uint64_t seq, size_t len, int when);

/* Reads what waits on c now, ahead of the loop's order of events. */
void ftmw_link_drain(ftmw_conn *c);

/* c's socket descriptor, or -1. */
int ftmw_link_fd(const ftmw_conn *c);

/* Closes every connection, the listener and the tick. */
void ftmw_link_stop(ftmw_link *l);

/* t moved on by a stall of gap ms, but not past now: a deadline counted
 * from t does not count the time nobody watched (see on_stalled). */
static inline uint64_t ftmw_link_later(uint64_t t, uint64_t gap,
                                       uint64_t now) {
  return t + gap < now ? t + gap : now;
}

/* Milliseconds the loop has not run, over all its stalls (traced
 * `stalled`): time in which nobody was watched. Any thread. */
uint64_t ftmw_link_stalled_ms(const ftmw_link *l);

#endif
