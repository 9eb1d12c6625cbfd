/* The transport (see transport.h). Everything here runs on the thread that
 * owns the loop (see lp below), except ftmw_transport_start/submit/stop,
 * the wait helpers and io_thread's hand-over. */
#include "ftmw_impl.h"
#include "localproc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define STAGE_SIZE (32 * 1024)
/* How long the I/O thread leaves the loop to the application after a call,
 * in case it calls again at once (see io_thread). */
#define LINGER_NS (1000 * 1000)
#define DIRECT_MIN 4096

typedef struct ftmw_conn {
  uv_tcp_t tcp;
  ftmw_qnode node; /* st.conns */
  ftmw_peer *peer; /* NULL until authenticated */
  ftmw_reader reader;
  int direct;  /* the last read buffer was a payload, read in place */
  int closing;
  int connecting; /* uv_tcp_connect pending: HELLO must be the first frame */
  int broken;     /* a read failed (EOF, reset): nothing more goes out */
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
  uint8_t stage[STAGE_SIZE];
} ftmw_conn;

/* A small frame (ACK, heartbeat, handshake) that could not be written at
 * once: it keeps its own copy until libuv is done with it. */
typedef struct {
  uv_write_t req;
  size_t len;
  uint8_t buf[FTMW_HDR_SIZE + FTMW_HELLO_SIZE];
} ctrl_write;
_Static_assert(FTMW_WELCOME_SIZE <= FTMW_HELLO_SIZE,
               "the largest control frame is a HELLO");

#define st ftmw_st

static void conn_close(ftmw_conn *c);

/* --- who runs the loop -------------------------------------------------- */

/* The loop has one owner at a time, the holder of lp.owner. A call that
 * waits (ftmw_wait_locked, ftmw_op_wait_locked) runs the loop itself: it
 * writes its own frames and reads the answers on its own thread, so a
 * round trip costs the socket wake-ups alone, as raw TCP does. The I/O
 * thread runs the loop only while no call waits: it sleeps in poll() on
 * the loop's backend fd, without owning the loop, takes the loop for one
 * non-blocking pass when something is ready, parks while a call is
 * inside, and lingers LINGER_NS after the last call left before it takes
 * the loop back. Every callback below therefore runs on one thread at a
 * time, the caller's or the I/O thread's. */
static struct {
  uv_mutex_t owner;
  uv_cond_t io_wake; /* the parked I/O thread (with st.lock) */
  uv_timer_t wait_timer; /* a timed wait's limit */
  int wait_expired;
  int kick;   /* the owner started a watcher this pass (see io_thread) */
  int new_fd; /* ...on a new connection (see loop_leave) */
  int writes; /* uv_write requests not yet called back */
  uint64_t last_tick; /* ftmw_now_ms() of the last heartbeat tick */
  uint64_t stalled_ms; /* the stalls' total (atomic: read by any thread) */
  /* Under st.lock: */
  int inside;        /* calls waiting in the loop */
  int io_state;      /* IO_* */
  int pass_now;      /* the I/O thread must make a pass at once */
  uint64_t wakes;    /* changes a waiter may be waiting for */
  uint64_t left_at;  /* when the last call left */
} lp;

/* Something a waiting call may wait for has changed (st.lock held). The
 * waiting call runs the loop itself, so there is nobody to wake: it sees
 * the change when the callback returns (loop_wait_locked). */
static void wake_locked(void) { lp.wakes++; }

/* The owner started a watcher (new_fd: on a new connection), which
 * libuv takes into its epoll set only at the loop's next pass: whoever
 * owns the loop next must make that pass before sleeping on the set. */
static void watchers_changed(int new_fd) {
  lp.kick = 1;
  lp.new_fd |= new_fd;
}

static void wait_timer_cb(uv_timer_t *t) {
  (void)t;
  lp.wait_expired = 1;
}

/* A write to a dead peer must fail with EPIPE on an application thread
 * too, without a SIGPIPE reaching the application. FTMW's own writes say
 * MSG_NOSIGNAL (try_send); libuv's, of what a socket did not take at once
 * (lp.writes), cannot, so SIGPIPE is blocked on a calling thread while it
 * owns the loop with such writes queued, and one that they raised is taken
 * back before it is unblocked. The I/O thread has every signal blocked. */
static __thread struct {
  int on;
  sigset_t old;
} pipe_guard;

static void guard_sigpipe(void) {
  if (pipe_guard.on)
    return;
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &pipe_guard.old);
  pipe_guard.on = 1;
}

static void unguard_sigpipe(void) {
  if (!pipe_guard.on || sigismember(&pipe_guard.old, SIGPIPE))
    return; /* not guarded, or blocked already before (the I/O thread) */
  sigset_t pending, pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
    struct timespec now = {0, 0};
    sigtimedwait(&pipe_only, NULL, &now);
  }
  pthread_sigmask(SIG_SETMASK, &pipe_guard.old, NULL);
  pipe_guard.on = 0;
}

/* Takes the loop in a calling thread. */
static void loop_enter(void) {
  uv_mutex_lock(&lp.owner);
  if (lp.writes > 0)
    guard_sigpipe();
}

static int loop_leave(void) {
  /* What the I/O thread must not leave for later: reading a connection
   * just opened, and writing what the sockets did not take yet. */
  int kick = lp.new_fd || lp.writes > 0;
  lp.kick = lp.new_fd = 0;
  unguard_sigpipe();
  uv_mutex_unlock(&lp.owner);
  return kick;
}

static void run_submitted(void);

enum { IO_RUNNING, IO_PARKED, IO_LINGERING };

/* The last waiting call is out of the loop (st.lock held): the I/O thread
 * takes it back. A parked thread is woken; one lingering after the last
 * call, or polling, is hurried only when the call left work for the
 * loop's next pass (kick, see loop_leave). */
static void io_resume_locked(int kick) {
  if (kick)
    lp.pass_now = 1;
  if (lp.io_state == IO_PARKED || (lp.io_state == IO_LINGERING && kick))
    uv_cond_signal(&lp.io_wake);
  else if (lp.io_state == IO_RUNNING && kick)
    uv_async_send(&st.async);
}

/* Whether something changed since *seen (lp.wakes), for ftmw_wait_locked. */
static int woken(const void *seen) {
  return lp.wakes != *(const uint64_t *)seen;
}

/* Whether op is settled, for ftmw_op_wait_locked. */
static int settled(const void *arg) {
  const ftmw_op *op = arg;
  return op->done && (!op->want_ack || op->acked || op->failed);
}

/* Waits until done(arg), checked under st.lock, or for at most ms (ms < 0:
 * no limit), running the loop in the calling thread meanwhile; st.lock is
 * held on entry and on return, released in between. Returns -1 when the
 * time ran out first. Only while the transport runs (between
 * ftmw_transport_start and ftmw_transport_stop): every wait of the library
 * is. */
static int loop_wait_locked(int (*done)(const void *), const void *arg,
                            int64_t ms) {
  lp.inside++;
  uv_mutex_unlock(&st.lock);
  loop_enter();
  /* A process whose loop has not run for a while (stopped, starved) reads
   * before it writes: it may have been declared failed meanwhile, and a
   * FENCE then ends it before anything it was about to send goes out. */
  if (ftmw_now_ms() - lp.last_tick > 2 * (uint64_t)st.cfg.heartbeat_ms)
    uv_run(&st.loop, UV_RUN_NOWAIT);
  run_submitted();
  lp.wait_expired = 0;
  if (ms >= 0) {
    uv_update_time(&st.loop); /* the timer counts from the loop's clock */
    uv_timer_start(&lp.wait_timer, wait_timer_cb, (uint64_t)ms, 0);
  }
  uv_mutex_lock(&st.lock);
  while (!done(arg) && !lp.wait_expired) {
    uv_mutex_unlock(&st.lock);
    uv_run(&st.loop, UV_RUN_ONCE);
    uv_mutex_lock(&st.lock);
  }
  int rc = done(arg) ? 0 : -1;
  uv_mutex_unlock(&st.lock);
  if (ms >= 0)
    uv_timer_stop(&lp.wait_timer);
  int kick = loop_leave();
  uv_mutex_lock(&st.lock);
  lp.left_at = uv_hrtime();
  if (--lp.inside == 0)
    io_resume_locked(kick);
  return rc;
}

int ftmw_wait_locked(int64_t ms) {
  /* A primary answers its replicas while it waits; answering waits for
   * writes, and a wake-up meant for the caller may have come meanwhile. */
  if (ftmw_rep_serve() > 0)
    return 0;
  uint64_t seen = lp.wakes;
  return loop_wait_locked(woken, &seen, ms);
}

int ftmw_op_wait_locked(ftmw_op *op) {
  loop_wait_locked(settled, op, -1);
  return op->failed ? FT_ERR_PEER_FAILED : FT_SUCCESS;
}

/* --- writing ------------------------------------------------------------ */

/* Writes what the socket takes at once, as uv_try_write does but with
 * MSG_NOSIGNAL. Returns the bytes written, or 0: none now, or an error
 * that queue_write's uv_write reports in turn. */
static size_t try_send(ftmw_conn *c, const uv_buf_t *bufs, unsigned n) {
  uv_os_fd_t fd;
  if (c->connecting || c->tcp.write_queue_size > 0 ||
      uv_fileno((const uv_handle_t *)&c->tcp, &fd) != 0)
    return 0; /* after what is queued, in order */
  /* On Unix, uv_buf_t is laid out as struct iovec. */
  struct msghdr m = {.msg_iov = (struct iovec *)bufs, .msg_iovlen = n};
  ssize_t r;
  do
    r = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
  while (r < 0 && errno == EINTR);
  return r > 0 ? (size_t)r : 0;
}

/* uv_write, counted in lp.writes until called back (write_done). */
static int queue_write(ftmw_conn *c, uv_write_t *req, const uv_buf_t *bufs,
                       unsigned n, uv_write_cb cb) {
  watchers_changed(0);
  guard_sigpipe();
  int rc = uv_write(req, (uv_stream_t *)&c->tcp, bufs, n, cb);
  if (rc == 0)
    lp.writes++;
  return rc;
}

static void write_done(void) { lp.writes--; }

static void ctrl_write_cb(uv_write_t *req, int status) {
  (void)status;
  write_done();
  free(req->data);
}

/* Writes a small frame now if the socket takes it, else queues a copy. */
static void write_small(ftmw_conn *c, const uint8_t *buf, size_t len) {
  if (c->closing)
    return;
  uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
  size_t n = try_send(c, &b, 1);
  c->last_tx_ms = ftmw_now_ms();
  if (n == len)
    return;
  ctrl_write *w = malloc(sizeof(*w));
  if (w == NULL) {
    /* A lost control frame would desynchronise the stream: give up on it. */
    if (c->peer)
      ftmw_log("out of memory writing to %s; closing it", c->addr);
    conn_close(c);
    return;
  }
  w->len = len - n;
  memcpy(w->buf, buf + n, w->len);
  w->req.data = w;
  b = uv_buf_init((char *)w->buf, (unsigned)w->len);
  if (queue_write(c, &w->req, &b, 1, ctrl_write_cb) != 0)
    free(w);
}

static void send_ctrl(ftmw_conn *c, int type, uint32_t dst, int tag,
                      uint64_t seq, unsigned flags, const uint8_t *payload,
                      size_t len) {
  uint8_t buf[FTMW_HDR_SIZE + FTMW_HELLO_SIZE];
  ftmw_hdr h = {.type = (uint8_t)type,
                .flags = (uint16_t)flags,
                .src = ftmw_self_pid(),
                .dst = dst,
                .tag = tag,
                .epoch = st.epoch,
                .seq = seq,
                .len = len};
  ftmw_wire_encode(buf, &h);
  if (len)
    memcpy(buf + FTMW_HDR_SIZE, payload, len);
  write_small(c, buf, FTMW_HDR_SIZE + len);
}

static void op_finish(ftmw_op *op, int failed) {
  uv_mutex_lock(&st.lock);
  op->done = 1;
  if (failed)
    op->failed = 1;
  wake_locked();
  uv_mutex_unlock(&st.lock);
}

/* A failed write unlinks op from peer->unacked (a no-op when already
 * unlinked) before handing it back: the caller's frame then goes away, and
 * the list must not point into it. */
static void op_write_cb(uv_write_t *req, int status) {
  ftmw_op *op = req->data;
  write_done();
  if (status < 0)
    ftmw_q_remove(&op->node);
  op_finish(op, status < 0);
}

static void do_frame(ftmw_op *op) {
  ftmw_peer *p = op->peer;
  ftmw_conn *c = p->conn;
  uv_mutex_lock(&st.lock);
  int ok = c != NULL && !c->closing && p->epoch == op->epoch &&
           (p->state == FTMW_PEER_ALIVE || p->state == FTMW_PEER_LAUNCHING);
  uv_mutex_unlock(&st.lock);
  if (!ok) {
    op_finish(op, 1);
    return;
  }
  /* After op_finish the caller may return and free op: read it first. */
  int want_ack = op->want_ack;
  if (want_ack)
    ftmw_q_insert_tail(&p->unacked, &op->node);
  c->last_tx_ms = ftmw_now_ms();
  size_t skip = try_send(c, op->bufs, op->nbufs);
  unsigned i = 0;
  while (i < op->nbufs && skip >= op->bufs[i].len)
    skip -= op->bufs[i++].len;
  if (i == op->nbufs) {
    op_finish(op, 0);
  } else {
    op->bufs[i].base += skip;
    op->bufs[i].len -= skip;
    op->req.data = op;
    if (queue_write(c, &op->req, op->bufs + i, op->nbufs - i, op_write_cb) !=
        0) {
      ftmw_q_remove(&op->node);
      op_finish(op, 1);
    }
  }
  if (want_ack)
    ftmw_fault_hit(FTMW_FAULT_SEND_WRITTEN);
}

/* --- failures ----------------------------------------------------------- */

static const char *peer_name(const ftmw_peer *p, char *buf, size_t len) {
  if (p->kind == FTMW_ROLE_WORKER)
    snprintf(buf, len, "worker %d", p->id);
  else if (p->kind == FTMW_ROLE_MASTER)
    snprintf(buf, len, "master %d", p->id);
  else
    snprintf(buf, len, "spare %d", p->id);
  return buf;
}

int ftmw_peer_failed_locked(ftmw_peer *p, int report, const char *why) {
  int live = p->state == FTMW_PEER_ALIVE || p->state == FTMW_PEER_LAUNCHING;
  if (live) {
    /* Traced before the state changes: an application call may report
     * the failure as soon as the lock is released, and the trace must
     * show the detection first. */
    char name[32];
    ftmw_trace("failure_detected",
               "\"peer\":\"%s\",\"peer_epoch\":%u,\"reason\":\"%s\"",
               peer_name(p, name, sizeof(name)), p->epoch, why);
    p->failed_at = uv_hrtime();
    st.failure_seen = 1;
  }
  p->state = FTMW_PEER_FAILED;
  if (report)
    p->unreported = 1;
  wake_locked();
  return live;
}

static int all_masters_gone(void) {
  for (int k = 0; k <= st.M; k++)
    if (st.masters[k].state == FTMW_PEER_ALIVE ||
        st.masters[k].state == FTMW_PEER_LAUNCHING)
      return 0;
  return 1;
}

int ftmw_first_live_master_locked(void) {
  for (int k = 0; k <= st.M; k++)
    if ((st.role == FTMW_ROLE_MASTER && k == st.id) ||
        st.masters[k].state == FTMW_PEER_ALIVE)
      return k;
  return -1;
}

/* Frees the DATA held from worker p (see hold_data): p is gone. */
static void drop_held(ftmw_peer *p) {
  while (!ftmw_q_empty(&p->held)) {
    ftmw_msg *m = FTMW_CONTAINER_OF(ftmw_q_head(&p->held), ftmw_msg, by_peer);
    ftmw_q_remove(&m->by_peer);
    ftmw_msg_free(m);
  }
}

static void release_held(void);

/* Primary: worker p's incarnation epoch has failed here; every live
 * replica declares it failed too (DOWN), so that a worker cut off from
 * the primary alone, alive, is fenced everywhere instead of going on with
 * the replicas (see hold_data). Written before any decision that reports
 * the failure, so a replica has it first. */
static void tell_down(const ftmw_peer *p, uint32_t epoch) {
  for (int k = 0; k <= st.M; k++) {
    ftmw_peer *m = &st.masters[k];
    if (k != st.id && m->conn != NULL && m->state == FTMW_PEER_ALIVE)
      send_ctrl(m->conn, FTMW_FRAME_DOWN, m->pid_wire, p->id, epoch, 0, NULL,
                0);
  }
}

/* Declares p failed (or finished, when done), fences it and wakes every
 * call waiting on it. When p was the primary, the next live master
 * becomes it (failover, SPEC section 6); a master that finds itself
 * primary takes over at its next wait (ftmw_rep_serve).
 *
 * Fencing: p's connection is closed, so nothing p sends later reaches
 * the application, and a master first writes FENCE on it when it still
 * works: a process declared failed while alive (stopped, starved, cut off
 * for longer than FT_TIMEOUT_MS) then exits as soon as it reads it,
 * instead of acting on a view of the job that nobody shares any more. */
static void peer_down(ftmw_peer *p, int done, const char *why) {
  ftmw_conn *c = p->conn;
  char name[32];
  peer_name(p, name, sizeof(name));
  uv_mutex_lock(&st.lock);
  int was = p->state;
  uint32_t epoch = p->epoch; /* a restore may bump it once we unlock */
  if (was == FTMW_PEER_ALIVE || was == FTMW_PEER_LAUNCHING) {
    if (done)
      p->state = FTMW_PEER_DONE;
    else
      ftmw_peer_failed_locked(p, 1, why);
    int next = !done && p->kind == FTMW_ROLE_MASTER && p->id == st.primary
                   ? ftmw_first_live_master_locked()
                   : -1;
    if (next >= 0) {
      __atomic_store_n(&st.primary, next, __ATOMIC_RELAXED); /* peer_of */
      ftmw_trace("primary_changed", "\"from\":%d,\"primary\":%d", p->id,
                 st.primary);
    }
  }
  int primary = st.role == FTMW_ROLE_MASTER && st.M > 0 && st.primary == st.id;
  int now_primary = primary && p->kind == FTMW_ROLE_MASTER;
  while (!ftmw_q_empty(&p->unacked)) {
    ftmw_op *op = FTMW_CONTAINER_OF(ftmw_q_head(&p->unacked), ftmw_op, node);
    ftmw_q_remove(&op->node);
    op->failed = 1;
  }
  int orphan = st.role == FTMW_ROLE_WORKER || st.role == FTMW_ROLE_SPARE
                   ? all_masters_gone()
                   : 0;
  wake_locked();
  uv_mutex_unlock(&st.lock);
  int live = was == FTMW_PEER_ALIVE || was == FTMW_PEER_LAUNCHING;
  drop_held(p);
  if (c) {
    if (!done && live && !c->broken && !c->connecting && !c->closing &&
        st.role == FTMW_ROLE_MASTER)
      send_ctrl(c, FTMW_FRAME_FENCE, p->pid_wire, 0, 0, 0, NULL, 0);
    c->peer = NULL;
    p->conn = NULL;
    conn_close(c);
  }
  if (now_primary)
    release_held();
  if (done || !live)
    return;
  if (primary && p->kind == FTMW_ROLE_WORKER)
    tell_down(p, epoch);
  if (st.role == FTMW_ROLE_MASTER && st.id == st.primary && p->at.pid > 0)
    ftmw_log("%s (pid %d on %s) failed: %s", name, (int)p->at.pid,
             p->at.host[0] ? p->at.host : "?", why);
  else if (st.role == FTMW_ROLE_MASTER && st.id == st.primary)
    ftmw_log("%s failed: %s", name, why); /* a master we connected to */
  if (orphan && st.orphan_since == 0) {
    st.orphan_since = ftmw_now_ms();
    ftmw_trace("orphaned", NULL);
  }
}

/* --- reading ------------------------------------------------------------ */

static void *payload_alloc(void *ctx, const ftmw_hdr *h) {
  ftmw_conn *c = ctx;
  if (c->peer == NULL && h->type != FTMW_FRAME_HELLO) {
    c->reject = "expected HELLO";
    return NULL;
  }
  ftmw_msg *m = ftmw_msg_new(h->len);
  if (m == NULL) {
    c->reject = "out of memory";
    return NULL;
  }
  return m->data;
}

static void payload_release(void *ctx, void *payload) {
  (void)ctx;
  ftmw_msg_free(FTMW_CONTAINER_OF(payload, ftmw_msg, data));
}

/* Where this process runs, read at ftmw_transport_start (st.host set). */
static ftmw_place my_place;

const ftmw_place *ftmw_transport_self(void) { return &my_place; }

void ftmw_peer_place_locked(ftmw_peer *p, const ftmw_place *at) {
  p->at = *at;
}

/* Accepts p's HELLO on c, telling it where this process runs. */
static void send_welcome(ftmw_conn *c, const ftmw_peer *p) {
  uint8_t payload[FTMW_WELCOME_SIZE];
  ftmw_wire_encode_welcome(payload, &my_place);
  send_ctrl(c, FTMW_FRAME_WELCOME, p->pid_wire, 0, 0, 0, payload,
            sizeof(payload));
}

/* A replica (or a master that took over) adopts connection c as worker
 * w's incarnation e, which the process announced itself: a spare's
 * ACTIVATED, or a spawned worker's HELLO. The primary's ft_restore made
 * it, after every replica had finished its exchanges with the old
 * incarnation; what that one left queued is dropped, as the primary
 * dropped it. welcome: answer a HELLO (before w is seen alive). */
static void adopt(ftmw_conn *c, ftmw_peer *w, uint32_t e, int from_spare,
                  const ftmw_place *at, int welcome) {
  if (w->conn != NULL)
    peer_down(w, 0, "replaced by the primary's ft_restore");
  c->peer = w;
  w->conn = c;
  if (welcome)
    send_welcome(c, w);
  uv_mutex_lock(&st.lock);
  int dropped = ftmw_match_drop(w);
  w->epoch = e;
  w->state = FTMW_PEER_ALIVE;
  w->fin = 0;
  w->from_spare = from_spare;
  ftmw_peer_place_locked(w, at);
  wake_locked();
  uv_mutex_unlock(&st.lock);
  ftmw_trace("adopted", "\"peer\":%d,\"peer_epoch\":%u,\"spare\":%d,"
             "\"dropped\":%d", w->id, e, from_spare - 1, dropped);
}

static int on_hello(ftmw_conn *c, const uint8_t *payload) {
  ftmw_hello m;
  if (ftmw_wire_decode_hello(payload, FTMW_HELLO_SIZE, &m) != FTMW_WIRE_OK) {
    c->reject = "malformed HELLO";
    return -1;
  }
  /* Constant time, so that the secret cannot be guessed byte by byte. */
  unsigned diff = 0;
  for (int i = 0; i < FTMW_SECRET_SIZE; i++)
    diff |= (unsigned)(m.secret[i] ^ st.secret[i]);
  if (diff != 0) {
    c->reject = "wrong job secret";
    return -1;
  }
  ftmw_peer *p = NULL;
  if (m.role == FTMW_ROLE_WORKER && m.id >= 1 && (int)m.id <= st.W)
    p = &st.workers[m.id];
  else if (m.role == FTMW_ROLE_SPARE && (int)m.id < st.S)
    p = &st.spares[m.id];
  else if (m.role == FTMW_ROLE_MASTER && (int)m.id > st.id && (int)m.id <= st.M &&
           st.role == FTMW_ROLE_MASTER)
    p = &st.masters[m.id]; /* a replica after this master in the order */
  if (p == NULL) {
    c->reject = "unknown process identity";
    return -1;
  }
  uv_mutex_lock(&st.lock);
  int ok = p->state == FTMW_PEER_LAUNCHING && p->epoch == m.epoch && p->conn == NULL;
  /* A master with replicas meets a worker the primary spawned by
   * ft_restore: a later incarnation than it knows. */
  int later = st.M > 0 && m.role == FTMW_ROLE_WORKER && m.epoch > p->epoch &&
              st.mode == FTMW_MODE_SPAWN;
  uv_mutex_unlock(&st.lock);
  if (!ok && later) {
    c->reader.max_payload = st.cfg.max_message;
    adopt(c, p, m.epoch, 0, &m.at, 1);
    return 0;
  }
  if (!ok) {
    c->reject = "stale or duplicate incarnation";
    return -1;
  }
  c->peer = p;
  p->conn = c;
  c->reader.max_payload = st.cfg.max_message;
  /* WELCOME is written before the application can see p alive: a master
   * killed just after ft_init has still welcomed everyone. */
  send_welcome(c, p);
  uv_mutex_lock(&st.lock);
  ok = p->state == FTMW_PEER_LAUNCHING; /* not given up on meanwhile */
  if (ok) {
    p->state = FTMW_PEER_ALIVE;
    ftmw_peer_place_locked(p, &m.at);
    wake_locked();
  }
  uv_mutex_unlock(&st.lock);
  if (!ok) {
    peer_down(p, 0, "joined too late");
    return 1;
  }
  char name[32];
  ftmw_trace("connect", "\"peer\":\"%s\",\"peer_epoch\":%u,\"peer_pid\":%d",
             peer_name(p, name, sizeof(name)), p->epoch, (int)p->at.pid);
  return 0;
}

static void on_activate(ftmw_conn *c, const ftmw_hdr *h) {
  /* Armed for the worker it becomes before the application can run on. */
  ftmw_fault_arm(st.cfg.fault, 0, h->tag, (uint32_t)h->seq);
  uv_mutex_lock(&st.lock);
  st.role = FTMW_ROLE_WORKER;
  st.id = h->tag;
  st.epoch = (uint32_t)h->seq;
  st.activated = 1;
  wake_locked();
  uv_mutex_unlock(&st.lock);
  /* Every other master learns it too, before anything this worker sends
   * it: replicas adopt the connection as the new incarnation. */
  for (int k = 0; k <= st.M; k++) {
    ftmw_peer *m = &st.masters[k];
    if (m == c->peer || (m->conn != NULL && m->state == FTMW_PEER_ALIVE))
      send_ctrl(m == c->peer ? c : m->conn, FTMW_FRAME_ACTIVATED, m->pid_wire,
                h->tag, h->seq, 0, NULL, 0);
  }
  ftmw_trace("activated", NULL);
}

/* Whether data number seq is new, recording it (st.lock held): from
 * worker w in a master, or from the masters in a worker (w NULL). Failover
 * makes duplicates: a new primary sends again what the worker may have
 * had, a worker what a dead primary never acknowledged. */
static int fresh_locked(ftmw_peer *w, uint64_t seq) {
  uint64_t *last = &st.rx_seq;
  if (w != NULL) {
    if (w->rx_epoch != w->epoch) { /* a new incarnation counts from 1 */
      w->rx_epoch = w->epoch;
      w->rx_seq = 0;
    }
    last = &w->rx_seq;
  }
  if (seq <= *last)
    return 0;
  *last = seq;
  return 1;
}

/* Queues m from p, unless it is a duplicate (then frees it). A worker's
 * messages from every master share masters[0]'s inbox: the primary may
 * change between two receives. */
static void queue_msg(ftmw_peer *p, ftmw_msg *m) {
  int from_master = p->kind == FTMW_ROLE_MASTER;
  uv_mutex_lock(&st.lock);
  int fresh = fresh_locked(from_master ? NULL : p, m->seq);
  if (fresh) {
    ftmw_match_push(&st.arrivals, from_master ? &st.masters[0] : p, m);
    wake_locked();
  }
  uv_mutex_unlock(&st.lock);
  if (!fresh) {
    ftmw_trace("duplicate_dropped", "\"peer\":%d,\"seq\":%llu", m->source,
               (unsigned long long)m->seq);
    ftmw_msg_free(m);
  }
}

/* DATA from worker p reaches a master with replicas that is not the
 * primary: the worker considers it primary, having lost the primary. If
 * the primary has died, this master takes over soon (it sees the death
 * too) and then takes the data (release_held); if the primary is alive
 * and cut the worker off, the worker's incarnation is declared failed
 * here too and its data dies with it. Taken now, it would complete a
 * replica's call that the primary's same call does not complete. So it
 * is held, unacknowledged. Returns 1 when m is held. */
static int hold_data(ftmw_peer *p, ftmw_msg *m) {
  if (st.role != FTMW_ROLE_MASTER || st.M == 0 || p->kind != FTMW_ROLE_WORKER)
    return 0;
  uv_mutex_lock(&st.lock);
  int hold = st.primary != st.id;
  uv_mutex_unlock(&st.lock);
  if (!hold)
    return 0;
  ftmw_q_insert_tail(&p->held, &m->by_peer);
  ftmw_trace("held", "\"peer\":%d,\"seq\":%llu", p->id,
             (unsigned long long)m->seq);
  return 1;
}

/* This master has just become primary: the DATA it held is taken and
 * acknowledged, as if it came now. */
static void release_held(void) {
  for (int r = 1; r <= st.W; r++) {
    ftmw_peer *p = &st.workers[r];
    while (!ftmw_q_empty(&p->held)) {
      ftmw_msg *m = FTMW_CONTAINER_OF(ftmw_q_head(&p->held), ftmw_msg, by_peer);
      ftmw_q_remove(&m->by_peer);
      uint64_t seq = m->seq;
      queue_msg(p, m);
      if (p->conn != NULL)
        send_ctrl(p->conn, FTMW_FRAME_ACK, p->pid_wire, 0, seq, 0, NULL, 0);
    }
  }
}

static void on_data(ftmw_conn *c, const ftmw_hdr *h, void *payload) {
  ftmw_peer *p = c->peer;
  ftmw_msg *m = payload ? FTMW_CONTAINER_OF(payload, ftmw_msg, data)
                        : ftmw_msg_new(0);
  if (m == NULL) {
    peer_down(p, 0, "out of memory for an inbound message");
    return;
  }
  m->source = p->kind == FTMW_ROLE_WORKER ? p->id : 0;
  m->tag = h->tag;
  m->seq = h->seq;
  m->len = (size_t)h->len;
  if (h->type == FTMW_FRAME_DATA && hold_data(p, m))
    return;
  /* The application is woken before the ACK is written: on loopback the
   * write runs the receiver's stack inline, and putting it first cost about
   * 25 us of an 80 us round trip. So a receiver that dies in the window may
   * have consumed data whose ft_send then fails; under crash-stop that is
   * harmless (what the dead process did dies with it), and the sender
   * simply sends again. */
  queue_msg(p, m);
  if (h->type == FTMW_FRAME_COPY)
    return; /* a replica's copy: the worker does not wait for it */
  ftmw_fault_hit(FTMW_FAULT_RECV_ACK);
  send_ctrl(c, FTMW_FRAME_ACK, p->pid_wire, 0, h->seq, 0, NULL, 0);
  /* A worker tells every other live master, in priority order, that it has
   * the primary's data, so that their ft_send of the same call completes
   * (SPEC section 6). */
  if (st.role == FTMW_ROLE_WORKER && p->kind == FTMW_ROLE_MASTER)
    for (int k = 0; k <= st.M; k++) {
      ftmw_peer *r = &st.masters[k];
      if (r == p || r->conn == NULL || r->state != FTMW_PEER_ALIVE)
        continue;
      ftmw_fault_hit(FTMW_FAULT_RECV_ACKED); /* once before each replica */
      send_ctrl(r->conn, FTMW_FRAME_ACKED, r->pid_wire, h->tag, h->seq, 0,
                NULL, 0);
    }
}

/* KEPT, primary to replica: the data a worker sent the primary before
 * dying, queued as if the worker's COPY had come. */
static int on_kept(ftmw_conn *c, const ftmw_hdr *h, void *payload) {
  ftmw_peer *p = c->peer;
  const uint8_t *b = payload;
  uint32_t rank = payload ? ftmw_get32(b) : 0;
  size_t len = (size_t)h->len - 4;
  ftmw_msg *m = NULL;
  if (p->kind == FTMW_ROLE_MASTER && st.role == FTMW_ROLE_MASTER &&
      rank >= 1 && (int)rank <= st.W)
    m = ftmw_msg_new(len);
  if (m == NULL) {
    if (payload)
      payload_release(c, payload);
    peer_down(p, 0, "protocol error: bad KEPT");
    return 1;
  }
  m->source = (int)rank;
  m->tag = h->tag;
  m->seq = h->seq;
  m->len = len;
  memcpy(m->data, b + 4, len);
  payload_release(c, payload);
  ftmw_trace("kept", "\"worker\":%u,\"seq\":%llu", rank,
             (unsigned long long)h->seq);
  queue_msg(&st.workers[rank], m);
  return 0;
}

/* DECIDE, primary to replica: queued for the call that must follow it. */
static int on_decide(ftmw_conn *c, const ftmw_hdr *h, void *payload) {
  ftmw_peer *p = c->peer;
  const uint8_t *b = payload;
  ftmw_decision d = {.kind = h->tag, .number = h->seq};
  d.rank = (int)ftmw_get32(b);
  d.value = ftmw_get64(b + 8);
  payload_release(c, payload);
  int rc = -1;
  if (p->kind == FTMW_ROLE_MASTER && st.role == FTMW_ROLE_MASTER &&
      d.rank >= (d.kind == FTMW_DECIDE_TESTANY || d.kind == FTMW_DECIDE_PRIMARY
                     ? 0
                     : 1) &&
      d.rank <= st.W) {
    uv_mutex_lock(&st.lock);
    rc = ftmw_rep_decision_arrived(&d);
    wake_locked();
    uv_mutex_unlock(&st.lock);
  }
  if (rc < 0) {
    peer_down(p, 0, "protocol error: DECIDE out of order or unexpected");
    return 1;
  }
  ftmw_trace("decision", "\"from\":%d,\"number\":%llu,\"kind\":%d,"
             "\"worker\":%d,\"value\":%llu,\"duplicate\":%d", p->id,
             (unsigned long long)d.number, d.kind, d.rank,
             (unsigned long long)d.value, rc);
  return 0;
}

/* ACTIVATED from spare c->peer to a replica: the primary's ft_restore made
 * it worker tag, incarnation seq, and its frames now say so. */
static int on_adopt(ftmw_conn *c, const ftmw_hdr *h) {
  ftmw_peer *sp = c->peer;
  int r = h->tag;
  uint32_t e = (uint32_t)h->seq;
  if (st.role != FTMW_ROLE_MASTER || r < 1 || r > st.W ||
      h->src != (uint32_t)r || h->epoch != e || h->dst != ftmw_self_pid() ||
      e <= st.workers[r].epoch) {
    peer_down(sp, 0, "protocol error: unexpected ACTIVATED");
    return 1;
  }
  uv_mutex_lock(&st.lock);
  sp->state = FTMW_PEER_DONE;
  uv_mutex_unlock(&st.lock);
  sp->conn = NULL;
  adopt(c, &st.workers[r], e, sp->id + 1, &sp->at, 0);
  return 0;
}

/* Replica protocol frames (SPEC section 6); st.lock not held. */
static int on_replica_frame(ftmw_peer *p, const ftmw_hdr *h) {
  int ok = 1;
  uv_mutex_lock(&st.lock);
  switch (h->type) {
  case FTMW_FRAME_ACKED: /* from a worker, to a replica */
    if (st.role != FTMW_ROLE_MASTER || p->kind != FTMW_ROLE_WORKER)
      ok = 0;
    else if (h->seq > p->acked_seq)
      p->acked_seq = h->seq;
    break;
  case FTMW_FRAME_DONE: /* from a replica, to the primary */
  case FTMW_FRAME_SUSPECT:
    if (p->kind != FTMW_ROLE_MASTER || st.role != FTMW_ROLE_MASTER ||
        h->tag > st.W)
      ok = 0;
    else if (h->type == FTMW_FRAME_DONE)
      st.workers[h->tag].done_by[p->id] = h->seq;
    else
      st.workers[h->tag].suspect_by[p->id] = h->seq;
    break;
  case FTMW_FRAME_VERDICT: /* from the primary, to a replica */
    if (p->kind != FTMW_ROLE_MASTER || st.role != FTMW_ROLE_MASTER ||
        h->tag > st.W)
      ok = 0;
    else {
      st.workers[h->tag].verdict_n = h->seq;
      st.workers[h->tag].verdict_ok = (h->flags & FTMW_FLAG_OK) != 0;
    }
    break;
  }
  wake_locked();
  uv_mutex_unlock(&st.lock);
  if (!ok)
    peer_down(p, 0, "protocol error: unexpected replica frame");
  else if (ftmw_trace_enabled())
    ftmw_trace(h->type == FTMW_FRAME_ACKED     ? "acked"
               : h->type == FTMW_FRAME_DONE    ? "done"
               : h->type == FTMW_FRAME_SUSPECT ? "suspect"
                                               : "verdict",
               "\"from\":%d,\"worker\":%d,\"call\":%llu,\"ok\":%d", p->id,
               h->tag, (unsigned long long)h->seq,
               (h->flags & FTMW_FLAG_OK) != 0);
  return !ok;
}

/* FENCE from master m: it declared this process failed (see peer_down),
 * and the job has gone on without it, a worker restored elsewhere, a
 * master replaced by the next in line. The process leaves at once, as if
 * it had crashed (no exit handler: a master does not write the job's
 * exit status), whatever its application thread is doing. */
static void fenced(const ftmw_peer *m) {
  ftmw_log("%s %d (pid %d): declared failed by master %d; exiting",
           ftmw_role_name(st.role), st.id, (int)getpid(), m->id);
  ftmw_trace("fenced", "\"by\":%d", m->id);
  _exit(3);
}

/* Returns non-zero when the connection was closed. */
static int on_frame(void *ctx, const ftmw_hdr *h, void *payload) {
  ftmw_conn *c = ctx;
  ftmw_peer *p = c->peer;
  if (p == NULL) { /* unauthenticated: only a HELLO is acceptable */
    int rc = h->type == FTMW_FRAME_HELLO ? on_hello(c, payload) : -1;
    if (payload)
      payload_release(c, payload);
    if (rc > 0)
      return 1; /* accepted too late: peer_down closed it */
    if (rc != 0) {
      if (c->reject == NULL)
        c->reject = "expected HELLO";
      ftmw_log("dropped connection from %s: %s", c->addr, c->reject);
      ftmw_trace("connection_rejected", "\"from\":\"%s\",\"reason\":\"%s\"",
                 c->addr, c->reject);
      conn_close(c);
      return 1;
    }
    return 0;
  }
  if (h->type == FTMW_FRAME_ACTIVATED && p->kind == FTMW_ROLE_SPARE)
    return on_adopt(c, h); /* checked there: it bears the new identity */
  /* A heartbeat carries nothing (the wire allows it no payload) and only
   * shows the connection alive, which any byte read already did: it is
   * not fenced. A connection whose identity changes, a spare activated,
   * has heartbeats of the old identity in flight both ways: the spare's,
   * and those of masters that had not yet read its ACTIVATED. */
  if (h->type == FTMW_FRAME_HEARTBEAT)
    return 0;
  /* Fencing: every frame must come from the bound incarnation, to us. */
  if (h->src != p->pid_wire || h->epoch != p->epoch || h->dst != ftmw_self_pid()) {
    if (payload)
      payload_release(c, payload);
    peer_down(p, 0, "protocol error: frame from a wrong identity or epoch");
    return 1;
  }
  switch (h->type) {
  case FTMW_FRAME_COPY: /* only a worker to a replica */
    if (st.role != FTMW_ROLE_MASTER || p->kind != FTMW_ROLE_WORKER) {
      if (payload)
        payload_release(c, payload);
      peer_down(p, 0, "protocol error: unexpected COPY");
      return 1;
    }
    /* fall through */
  case FTMW_FRAME_DATA:
    on_data(c, h, payload);
    return c->closing;
  case FTMW_FRAME_DECIDE:
    return on_decide(c, h, payload);
  case FTMW_FRAME_ACKED:
  case FTMW_FRAME_DONE:
  case FTMW_FRAME_SUSPECT:
  case FTMW_FRAME_VERDICT:
    return on_replica_frame(p, h);
  case FTMW_FRAME_KEPT:
    return on_kept(c, h, payload);
  case FTMW_FRAME_ACK: {
    ftmw_op *op = ftmw_q_empty(&p->unacked)
                      ? NULL
                      : FTMW_CONTAINER_OF(ftmw_q_head(&p->unacked), ftmw_op, node);
    if (op == NULL || op->seq != h->seq) {
      peer_down(p, 0, "protocol error: unexpected ACK");
      return 1;
    }
    ftmw_q_remove(&op->node);
    uv_mutex_lock(&st.lock);
    op->acked = 1;
    wake_locked();
    uv_mutex_unlock(&st.lock);
    return 0;
  }
  case FTMW_FRAME_WELCOME:
  case FTMW_FRAME_ACTIVATED: {
    ftmw_place at;
    if (h->type == FTMW_FRAME_WELCOME) {
      /* Only a master answers a HELLO, once: it says where it runs. */
      int rc = p->kind == FTMW_ROLE_MASTER && !p->welcomed
                   ? ftmw_wire_decode_welcome(payload, h->len, &at)
                   : FTMW_WIRE_ETYPE;
      payload_release(c, payload);
      if (rc != FTMW_WIRE_OK) {
        peer_down(p, 0, "protocol error: unexpected or malformed WELCOME");
        return 1;
      }
    }
    uv_mutex_lock(&st.lock);
    if (h->type == FTMW_FRAME_WELCOME)
      ftmw_peer_place_locked(p, &at);
    p->welcomed = 1;
    if (p->state == FTMW_PEER_LAUNCHING)
      p->state = FTMW_PEER_ALIVE;
    wake_locked();
    uv_mutex_unlock(&st.lock);
    return 0;
  }
  case FTMW_FRAME_FIN:
  case FTMW_FRAME_BYE:
    uv_mutex_lock(&st.lock);
    if (h->type == FTMW_FRAME_FIN)
      p->fin = 1;
    else {
      p->bye = 1;
      p->bye_clean = (h->flags & FTMW_FLAG_CLEAN) != 0;
    }
    wake_locked();
    uv_mutex_unlock(&st.lock);
    return 0;
  case FTMW_FRAME_DOWN: {
    if (p->kind != FTMW_ROLE_MASTER || st.role != FTMW_ROLE_MASTER ||
        h->tag > st.W) {
      peer_down(p, 0, "protocol error: unexpected DOWN");
      return 1;
    }
    ftmw_peer *w = &st.workers[h->tag];
    uv_mutex_lock(&st.lock);
    int live = w->epoch == (uint32_t)h->seq &&
               (w->state == FTMW_PEER_ALIVE || w->state == FTMW_PEER_LAUNCHING);
    uv_mutex_unlock(&st.lock);
    if (live)
      peer_down(w, 0, "declared failed by the primary");
    return 0;
  }
  case FTMW_FRAME_FENCE:
    if (p->kind != FTMW_ROLE_MASTER) {
      peer_down(p, 0, "protocol error: FENCE from a non-master");
      return 1;
    }
    fenced(p);
    return 1; /* not reached */
  case FTMW_FRAME_ACTIVATE:
    if (st.role != FTMW_ROLE_SPARE || h->tag < 1 || h->tag > st.W) {
      peer_down(p, 0, "protocol error: unexpected ACTIVATE");
      return 1;
    }
    on_activate(c, h);
    return 0;
  default:
    peer_down(p, 0, "protocol error: unexpected frame");
    return 1;
  }
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  ftmw_conn *c = h->data;
  size_t len;
  uint8_t *direct = ftmw_reader_direct(&c->reader, DIRECT_MIN, &len);
  c->direct = direct != NULL;
  buf->base = (char *)(direct ? direct : c->stage);
  buf->len = direct ? len : sizeof(c->stage);
}

/* c's peer spoke, or this process stalled and its looks are stale: its
 * kernel is asked afresh when it is silent again. */
static void heard(ftmw_conn *c) {
  c->look.at_ms = 0;
  c->asleep_ms = 0;
  c->starved = 0;
}

/* nread bytes (or a libuv error) came on c, in c->stage or, if c->direct,
 * straight into the payload being read. */
static void got_bytes(ftmw_conn *c, ssize_t nread) {
  if (c->closing)
    return;
  if (nread < 0) {
    c->broken = 1;
    ftmw_peer *p = c->peer;
    if (p == NULL) {
      conn_close(c);
      return;
    }
    /* A peer that said goodbye may close; any other close is a crash,
     * even after a worker's FIN: until BYE it must stay connected, and a
     * death then still makes MPI_Finalize unsafe for the rest. That is
     * the primary's to judge: a replica does not see the BYE the primary
     * sends a worker or a spare (only once every replica has sent its
     * FIN), only the process leaving after it. */
    uv_mutex_lock(&st.lock);
    int replica = ftmw_rep_is_replica();
    int done = (p->kind == FTMW_ROLE_WORKER && p->fin &&
                (st.bye_sent || replica)) ||
               (p->kind == FTMW_ROLE_SPARE &&
                (st.bye_sent || (replica && st.finalizing))) ||
               /* a master after its BYE; a replica after its FIN, unless
                * we are the primary and have not said BYE yet */
               (p->kind == FTMW_ROLE_MASTER &&
                (p->bye || (p->fin && p->id != st.primary &&
                            (st.bye_sent || st.role != FTMW_ROLE_MASTER ||
                             st.id != st.primary))));
    uv_mutex_unlock(&st.lock);
    char why[96];
    snprintf(why, sizeof(why), "connection lost (%s)",
             nread == UV_EOF ? "closed" : uv_strerror((int)nread));
    peer_down(p, done, why);
    return;
  }
  if (nread == 0)
    return;
  c->last_rx_ms = ftmw_now_ms();
  heard(c);
  int rc = c->direct ? ftmw_reader_direct_done(&c->reader, (size_t)nread)
                     : ftmw_reader_feed(&c->reader, c->stage, (size_t)nread);
  if (rc == 0 || c->closing)
    return;
  char why[96];
  snprintf(why, sizeof(why), "protocol error: %s",
           rc < 0 ? ftmw_wire_strerror(rc) : c->reject ? c->reject : "refused");
  if (c->peer)
    peer_down(c->peer, 0, why);
  else {
    ftmw_log("dropped connection from %s: %s", c->addr, why);
    ftmw_trace("connection_rejected", "\"from\":\"%s\",\"reason\":\"%s\"",
               c->addr, why);
    conn_close(c);
  }
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  (void)buf;
  got_bytes(s->data, nread);
}

/* Reads what waits on c now, outside the loop's order of events. */
static void drain(ftmw_conn *c) {
  uv_os_fd_t fd;
  while (!c->closing && uv_fileno((const uv_handle_t *)&c->tcp, &fd) == 0) {
    ssize_t n;
    do
      n = recv(fd, c->stage, sizeof(c->stage), MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return;
    c->direct = 0;
    got_bytes(c, n > 0 ? n : n == 0 ? UV_EOF : uv_translate_sys_error(errno));
    if (n <= 0)
      return;
  }
}

/* --- connections -------------------------------------------------------- */

static void conn_close_cb(uv_handle_t *h) {
  ftmw_conn *c = h->data;
  ftmw_reader_reset(&c->reader);
  free(c);
}

static void conn_close(ftmw_conn *c) {
  if (c->closing)
    return;
  c->closing = 1;
  ftmw_q_remove(&c->node);
  if (c->peer) {
    c->peer->conn = NULL;
    c->peer = NULL;
  }
  uv_close((uv_handle_t *)&c->tcp, conn_close_cb);
}

static ftmw_conn *conn_new(ftmw_peer *p) {
  ftmw_conn *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return NULL;
  if (uv_tcp_init(&st.loop, &c->tcp) != 0) {
    free(c);
    return NULL;
  }
  c->tcp.data = c;
  c->peer = p;
  if (p)
    p->conn = c;
  c->opened_ms = c->last_rx_ms = c->last_tx_ms = ftmw_now_ms();
  ftmw_reader_init(&c->reader, p ? st.cfg.max_message : FTMW_HELLO_SIZE,
                   payload_alloc, on_frame, payload_release, c);
  ftmw_q_insert_tail(&st.conns, &c->node);
  return c;
}

static void conn_ready(ftmw_conn *c) {
  uv_tcp_nodelay(&c->tcp, 1);
  uv_tcp_keepalive(&c->tcp, 1, 60);
  struct sockaddr_storage ss;
  int len = sizeof(ss);
  if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0) {
    char ip[48] = "?";
    const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
    uv_ip4_name(in, ip, sizeof(ip));
    snprintf(c->addr, sizeof(c->addr), "%s:%d", ip, ntohs(in->sin_port));
  }
  watchers_changed(1);
  uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb);
}

static void on_connection(uv_stream_t *server, int status) {
  if (status < 0) {
    ftmw_log("accept failed: %s", uv_strerror(status));
    return;
  }
  ftmw_conn *c = conn_new(NULL);
  if (c == NULL) {
    ftmw_log("accept: out of memory");
    return;
  }
  if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
    conn_close(c);
    return;
  }
  conn_ready(c);
}

static void on_connect(uv_connect_t *req, int status) {
  ftmw_conn *c = req->data;
  if (c->closing)
    return;
  ftmw_peer *p = c->peer;
  c->connecting = 0;
  if (status < 0) {
    char why[96];
    snprintf(why, sizeof(why), "cannot connect: %s", uv_strerror(status));
    if (p)
      peer_down(p, 0, why);
    else
      conn_close(c);
    return;
  }
  conn_ready(c);
  ftmw_hello m = {.role = (uint32_t)st.role,
                  .id = (uint32_t)st.id,
                  .epoch = st.epoch,
                  .at = my_place};
  memcpy(m.secret, st.secret, sizeof(m.secret));
  uint8_t payload[FTMW_HELLO_SIZE];
  ftmw_wire_encode_hello(payload, &m);
  send_ctrl(c, FTMW_FRAME_HELLO, p->pid_wire, 0, 0, 0, payload, sizeof(payload));
}

static void do_connect(ftmw_op *op) {
  ftmw_conn *c = conn_new(op->peer);
  int rc = c ? 0 : UV_ENOMEM;
  if (c) {
    c->connect_req.data = c;
    c->connecting = 1;
    watchers_changed(1);
    rc = uv_tcp_connect(&c->connect_req, &c->tcp,
                        (const struct sockaddr *)&op->addr, on_connect);
  }
  if (rc != 0) {
    char why[96];
    snprintf(why, sizeof(why), "cannot connect: %s", uv_strerror(rc));
    if (c)
      peer_down(op->peer, 0, why);
    else {
      uv_mutex_lock(&st.lock);
      ftmw_peer_failed_locked(op->peer, 1, why);
      uv_mutex_unlock(&st.lock);
    }
  }
  op_finish(op, rc != 0);
}

/* Sends ACTIVATE to a spare and rebinds its connection to the worker slot
 * it becomes; the slot turns ALIVE when ACTIVATED comes back. */
static void do_activate(ftmw_op *op) {
  ftmw_peer *sp = op->peer, *w = op->target;
  ftmw_conn *c = sp->conn;
  if (c == NULL || c->closing) {
    uv_mutex_lock(&st.lock);
    ftmw_peer_failed_locked(w, 0, "its spare is gone");
    uv_mutex_unlock(&st.lock);
    op_finish(op, 1);
    return;
  }
  send_ctrl(c, FTMW_FRAME_ACTIVATE, sp->pid_wire, w->id, w->epoch, 0, NULL, 0);
  uv_mutex_lock(&st.lock);
  sp->state = FTMW_PEER_DONE;
  ftmw_peer_place_locked(w, &sp->at);
  uv_mutex_unlock(&st.lock);
  sp->conn = NULL;
  c->peer = w;
  w->conn = c;
  op_finish(op, 0);
}

static void stop_all(void) {
  for (int r = 1; r <= st.W && st.role == FTMW_ROLE_MASTER; r++)
    drop_held(&st.workers[r]);
  while (!ftmw_q_empty(&st.conns)) {
    ftmw_conn *c = FTMW_CONTAINER_OF(ftmw_q_head(&st.conns), ftmw_conn, node);
    conn_close(c);
  }
  if (st.listening)
    uv_close((uv_handle_t *)&st.listener, NULL);
  uv_close((uv_handle_t *)&st.tick, NULL);
  uv_close((uv_handle_t *)&lp.wait_timer, NULL);
  uv_close((uv_handle_t *)&st.async, NULL);
}

/* Carries out the ops submitted so far, in order: run by a waiting call
 * when it takes the loop, and by the I/O thread at each pass (a STOP). */
static void run_submitted(void) {
  ftmw_qnode work;
  uv_mutex_lock(&st.lock);
  ftmw_q_move(&st.submit, &work);
  uv_mutex_unlock(&st.lock);
  while (!ftmw_q_empty(&work)) {
    ftmw_op *op = FTMW_CONTAINER_OF(ftmw_q_head(&work), ftmw_op, node);
    ftmw_q_remove(&op->node);
    switch (op->kind) {
    case FTMW_OP_FRAME: do_frame(op); break;
    case FTMW_OP_CONNECT: do_connect(op); break;
    case FTMW_OP_ACTIVATE: do_activate(op); break;
    case FTMW_OP_STOP:
      op_finish(op, 0);
      stop_all();
      return;
    }
  }
}

static void async_cb(uv_async_t *a) {
  (void)a;
  run_submitted();
}

/* Whether bytes wait unread on c: its peer has spoken, whatever the
 * clock says (the timers run before the reads in a pass of the loop). */
static int unread(ftmw_conn *c) {
  uv_os_fd_t fd;
  int n = 0;
  return uv_fileno((const uv_handle_t *)&c->tcp, &fd) == 0 &&
         ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

/* This process did not run its loop for a while: the loop's owner was
 * not scheduled (an overloaded machine), or the process was stopped.
 * Nobody here was listening meanwhile, so that time does not count as
 * any peer's silence: every deadline moves on by the gap. Peers may have
 * declared this process failed meanwhile; those that did have closed
 * their connections (masters after a FENCE), which the reads that follow
 * find. */
static uint64_t later(uint64_t t, uint64_t gap, uint64_t now) {
  return t + gap < now ? t + gap : now;
}

/* What the loop's thread did during a stall: ran (cpu), waited for a CPU
 * (runq: starved) or slept (the rest: blocked, or the process stopped),
 * from the statistics the same thread read at the previous tick. */
static struct {
  uint64_t cpu, runq;
  uint64_t at;   /* lp.last_tick of the reading */
  uv_thread_t by;
} sched_seen;

static void stalled(uint64_t gap, uint64_t now, int known, uint64_t cpu_ms,
                    uint64_t runq_ms) {
  for (ftmw_qnode *n = ftmw_q_head(&st.conns); n != &st.conns; n = n->next) {
    ftmw_conn *c = FTMW_CONTAINER_OF(n, ftmw_conn, node);
    c->last_rx_ms = later(c->last_rx_ms, gap, now);
    c->opened_ms = later(c->opened_ms, gap, now);
    heard(c);
  }
  /* Long enough to have been declared failed: what the masters said comes
   * first, before anything else read in this pass (a worker's close may
   * come before the FENCE that explains it), so that a fenced process
   * acts on nothing after its stall but the FENCE. */
  if (gap + 2 * (uint64_t)st.cfg.heartbeat_ms >= (uint64_t)st.cfg.timeout_ms)
    for (int k = 0; k <= st.M; k++)
      if (st.masters[k].conn != NULL)
        drain(st.masters[k].conn);
  if (st.orphan_since)
    st.orphan_since = later(st.orphan_since, gap, now);
  __atomic_add_fetch(&lp.stalled_ms, gap, __ATOMIC_RELAXED);
  if (known)
    ftmw_trace("stalled", "\"ms\":%llu,\"cpu_ms\":%llu,\"runq_ms\":%llu",
               (unsigned long long)gap, (unsigned long long)cpu_ms,
               (unsigned long long)runq_ms);
  else
    ftmw_trace("stalled", "\"ms\":%llu", (unsigned long long)gap);
}

uint64_t ftmw_transport_stalled_ms(void) {
  return __atomic_load_n(&lp.stalled_ms, __ATOMIC_RELAXED);
}

/* Milliseconds from t to now; 0 for a t after now (a read during this
 * tick, stalled's drain, stamps a later time than the tick's now). */
static uint64_t since(uint64_t t, uint64_t now) { return now > t ? now - t : 0; }

/* A peer silent past the timeout is asked about, if it runs on this host:
 * its kernel knows whether it is gone, stopped, asleep, running, or
 * runnable but waiting for a CPU (an overloaded machine), and only the
 * last is a live process that could not speak. A peer on a CPU yet
 * silent has a hung loop, and one asleep is hung if it is still asleep,
 * and silent, ASLEEP_MIN_MS later (a tick later at least): one found asleep
 * just after a long starvation has run its loop and gone back to sleep,
 * its heartbeat on the way (seen in a job's trace: declared failed 25 ms
 * after it resumed). Nobody is spared past SPARED_MAX timeouts of
 * silence. */
#define ASLEEP_MIN_MS 250
#define SPARED_MAX 10
/* A connection without a HELLO is a process not yet known: a join, which
 * comes when a machine is busiest (spawns), or a stranger. It is dropped
 * after this many timeouts (a joiner that dies closes it at once). */
#define HELLO_WAIT_TIMEOUTS 10

/* Whether the silent peer on c is spared for now; *verdict says what this
 * host's kernel said of it (FTMW_PROC_UNKNOWN for a peer elsewhere). */
static int spared(ftmw_conn *c, uint64_t silent, uint64_t to, uint64_t now,
                  int *verdict) {
  ftmw_peer *p = c->peer;
  *verdict = FTMW_PROC_UNKNOWN;
  if (!ftmw_proc_is_local(&p->at, &my_place))
    return 0;
  *verdict = ftmw_proc_look("/proc", (int)p->at.pid, p->at.start, now, &c->look);
  /* Asleep since the first such look, unless found waiting for a CPU
   * since: a look that catches a thread runnable for a moment (BUSY) does
   * not start the count again. */
  if (*verdict == FTMW_PROC_STARVED)
    c->asleep_ms = 0;
  if (silent > SPARED_MAX * to)
    return 0;
  switch (*verdict) {
  case FTMW_PROC_ASLEEP:
    if (c->asleep_ms == 0)
      c->asleep_ms = now;
    return since(c->asleep_ms, now) < ASLEEP_MIN_MS;
  case FTMW_PROC_BUSY: /* runnable: the next look tells */
    return 1;
  case FTMW_PROC_STARVED:
    if (!c->starved) {
      c->starved = 1;
      char name[48];
      ftmw_trace("peer_starved", "\"peer\":\"%s\",\"pid\":%d,\"ms\":%llu",
                 peer_name(p, name, sizeof(name)), (int)p->at.pid,
                 (unsigned long long)silent);
    }
    return 1;
  default: /* gone, stopped, running yet silent, or not to be read */
    return 0;
  }
}

/* The tick.sleep and tick.spin faults: the loop's thread asleep, or on a
 * CPU (spin), without running the loop, until a master has cut this
 * process off (declared it failed, and closed its connection), for at
 * most max_ms. */
static void hang_until_cut(uint64_t max_ms, int spin) {
  uint64_t end = ftmw_now_ms() + max_ms;
  while (ftmw_now_ms() < end) {
    struct pollfd fds[FTMW_MAX_MASTERS];
    int n = 0;
    uv_os_fd_t fd;
    for (int k = 0; k <= st.M; k++)
      if (st.masters[k].conn != NULL &&
          uv_fileno((const uv_handle_t *)&st.masters[k].conn->tcp, &fd) == 0)
        fds[n++] = (struct pollfd){.fd = fd, .events = POLLRDHUP};
    if (poll(fds, (nfds_t)n, spin ? 0 : 100) > 0)
      for (int i = 0; i < n; i++)
        if (fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR))
          return;
  }
}

/* Heartbeats, silence timeouts, handshake deadlines, orphan exit. */
static void tick_cb(uv_timer_t *t) {
  (void)t;
  uint64_t hb = (uint64_t)st.cfg.heartbeat_ms, to = (uint64_t)st.cfg.timeout_ms;
  if (ftmw_fault_fires(FTMW_FAULT_TICK_STARVE)) /* waits for a CPU */
    ftmw_fault_starve(4 * to);
  if (ftmw_fault_fires(FTMW_FAULT_TICK_SLEEP)) /* asleep, loop not run */
    hang_until_cut((SPARED_MAX + 2) * to, 0);
  if (ftmw_fault_fires(FTMW_FAULT_TICK_SPIN)) /* on a CPU, loop not run */
    hang_until_cut((SPARED_MAX + 2) * to, 1);
  uint64_t now = ftmw_now_ms();
  /* The tick repeats every hb ms while the loop runs; a later one means
   * that it did not run (two ticks' leeway for a busy pass). */
  uint64_t cpu = 0, runq = 0;
  uv_thread_t self = uv_thread_self();
  int known = ftmw_proc_thread_sched(&cpu, &runq);
  if (lp.last_tick != 0 && now - lp.last_tick > 2 * hb) {
    int same = known && sched_seen.at == lp.last_tick &&
               uv_thread_equal(&sched_seen.by, &self);
    stalled(now - lp.last_tick - hb, now, same,
            same ? (cpu - sched_seen.cpu) / 1000000 : 0,
            same ? (runq - sched_seen.runq) / 1000000 : 0);
  }
  lp.last_tick = now;
  sched_seen.cpu = cpu;
  sched_seen.runq = runq;
  sched_seen.at = known ? now : 0;
  sched_seen.by = self;
  ftmw_qnode *n = ftmw_q_head(&st.conns);
  while (n != &st.conns) {
    ftmw_conn *c = FTMW_CONTAINER_OF(n, ftmw_conn, node);
    n = n->next; /* c may be closed (and unlinked) below */
    if (c->peer == NULL) { /* no HELLO yet: a process not known, given long */
      if (since(c->opened_ms, now) > HELLO_WAIT_TIMEOUTS * to) {
        ftmw_log("dropped connection from %s: no HELLO within %d ms", c->addr,
                 HELLO_WAIT_TIMEOUTS * st.cfg.timeout_ms);
        conn_close(c);
      }
      continue;
    }
    uint64_t silent = since(c->last_rx_ms, now);
    int verdict;
    if (silent > to && unread(c)) {
      c->last_rx_ms = now;
      heard(c);
    } else if (silent > to && !spared(c, silent, to, now, &verdict)) {
      char why[80];
      snprintf(why, sizeof(why), "silent for %llu ms%s%s",
               (unsigned long long)silent,
               verdict == FTMW_PROC_UNKNOWN ? "" : ", process ",
               verdict == FTMW_PROC_UNKNOWN ? "" : ftmw_proc_verdict_name(verdict));
      peer_down(c->peer, 0, why);
      continue;
    }
    if (since(c->last_tx_ms, now) >= hb / 2 && !c->connecting)
      send_ctrl(c, FTMW_FRAME_HEARTBEAT, c->peer->pid_wire, 0, 0, 0, NULL, 0);
  }
  if (st.orphan_since && since(st.orphan_since, now) > to) {
    ftmw_log("%s %d: every master is gone; exiting", ftmw_role_name(st.role), st.id);
    ftmw_trace("orphan_exit", NULL);
    _exit(3);
  }
}

/* The I/O thread: the loop's owner while no call waits (see lp). */
static void io_thread(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), FTMW_IO_THREAD_NAME);
  int timeout = 0;
  for (;;) {
    uv_mutex_lock(&st.lock);
    int parked = 0;
    for (;;) {
      if (lp.inside > 0) {
        lp.io_state = IO_PARKED;
        parked = 1;
        uv_cond_wait(&lp.io_wake, &st.lock);
        continue;
      }
      /* The application often calls again at once (a master answering
       * its workers): lingering a little saves a hand-over each time. */
      uint64_t since = uv_hrtime() - lp.left_at;
      if (!parked || lp.pass_now || since >= LINGER_NS)
        break;
      lp.io_state = IO_LINGERING;
      uv_cond_timedwait(&lp.io_wake, &st.lock, LINGER_NS - since);
    }
    lp.io_state = IO_RUNNING;
    lp.pass_now = 0;
    uv_mutex_unlock(&st.lock);
    if (!parked && timeout != 0) {
      struct pollfd pfd = {.fd = uv_backend_fd(&st.loop), .events = POLLIN};
      poll(&pfd, 1, timeout);
    }
    /* A call that came in meanwhile runs the loop itself: this thread
     * parks, and makes a pass once the call is out. */
    timeout = 0;
    if (uv_mutex_trylock(&lp.owner) != 0)
      continue;
    uv_mutex_lock(&st.lock);
    int inside = lp.inside;
    uv_mutex_unlock(&st.lock);
    if (inside > 0) {
      uv_mutex_unlock(&lp.owner);
      continue;
    }
    run_submitted();
    int alive = uv_run(&st.loop, UV_RUN_NOWAIT);
    /* Watchers its callbacks started enter the epoll set at the next
     * pass, which must come before this thread sleeps on that set. */
    timeout = lp.kick ? 0 : uv_backend_timeout(&st.loop);
    lp.kick = lp.new_fd = 0;
    uv_mutex_unlock(&lp.owner);
    if (!alive)
      break;
  }
}

int ftmw_transport_start(int listen) {
  /* Traced from its first event on: the loop may trace from now on, on
   * either thread. */
  ftmw_trace_open(st.cfg.trace);
  ftmw_proc_self(&my_place, st.host);
  ftmw_q_init(&st.conns);
  if (uv_mutex_init(&lp.owner) != 0)
    return FT_ERR_INTERNAL;
  if (uv_cond_init(&lp.io_wake) != 0) {
    uv_mutex_destroy(&lp.owner);
    return FT_ERR_INTERNAL;
  }
  if (uv_loop_init(&st.loop) != 0) {
    uv_cond_destroy(&lp.io_wake);
    uv_mutex_destroy(&lp.owner);
    return FT_ERR_INTERNAL;
  }
  uv_async_init(&st.loop, &st.async, async_cb);
  uv_timer_init(&st.loop, &st.tick);
  uv_timer_start(&st.tick, tick_cb, (uint64_t)st.cfg.heartbeat_ms,
                 (uint64_t)st.cfg.heartbeat_ms);
  uv_timer_init(&st.loop, &lp.wait_timer);
  if (listen) {
    struct sockaddr_in addr;
    int rc = uv_ip4_addr(st.listen_ip, 0, &addr);
    if (rc == 0)
      rc = uv_tcp_init(&st.loop, &st.listener);
    if (rc == 0) {
      st.listening = 1;
      rc = uv_tcp_bind(&st.listener, (const struct sockaddr *)&addr, 0);
    }
    if (rc == 0)
      rc = uv_listen((uv_stream_t *)&st.listener, 1024, on_connection);
    if (rc == 0) {
      int len = sizeof(addr);
      rc = uv_tcp_getsockname(&st.listener, (struct sockaddr *)&addr, &len);
      st.listen_port = ntohs(addr.sin_port);
    }
    if (rc != 0) {
      ftmw_log("cannot listen on %s: %s", st.listen_ip, uv_strerror(rc));
      stop_all();
      uv_run(&st.loop, UV_RUN_DEFAULT);
      uv_loop_close(&st.loop);
      uv_cond_destroy(&lp.io_wake);
      uv_mutex_destroy(&lp.owner);
      return FT_ERR_NETWORK;
    }
  }
  /* The thread starts with every signal blocked: a write to a dead peer
   * then fails with EPIPE instead of killing the process with SIGPIPE, and
   * the application's signals keep going to the application's threads. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = uv_thread_create(&st.thread, io_thread, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc == 0 ? FT_SUCCESS : FT_ERR_INTERNAL;
}

void ftmw_transport_submit(ftmw_op *op, int lock_held) {
  if (!lock_held)
    uv_mutex_lock(&st.lock);
  op->done = op->acked = op->failed = 0;
  ftmw_q_insert_tail(&st.submit, &op->node);
  if (!lock_held)
    uv_mutex_unlock(&st.lock);
}

void ftmw_transport_stop(void) {
  ftmw_op op = {.kind = FTMW_OP_STOP};
  ftmw_transport_submit(&op, 0);
  uv_mutex_lock(&st.lock);
  io_resume_locked(1); /* the I/O thread carries it out, at once */
  uv_mutex_unlock(&st.lock);
  uv_thread_join(&st.thread);
  uv_loop_close(&st.loop);
  uv_cond_destroy(&lp.io_wake);
  uv_mutex_destroy(&lp.owner);
}

void ftmw_op_frame(ftmw_op *op, ftmw_peer *p, int type, int tag,
                   unsigned flags, const void *data, size_t len) {
  ftmw_hdr h = {.type = (uint8_t)type,
                .flags = (uint16_t)flags,
                .src = ftmw_self_pid(),
                .dst = p->pid_wire,
                .tag = tag,
                .epoch = st.epoch,
                .seq = op->seq,
                .len = len};
  ftmw_wire_encode(op->hdr, &h);
  op->kind = FTMW_OP_FRAME;
  op->peer = p;
  op->epoch = p->epoch;
  op->bufs[0] = uv_buf_init((char *)op->hdr, FTMW_HDR_SIZE);
  op->nbufs = 1;
  if (len) {
    op->bufs[1].base = (char *)data; /* uv_buf_init would cut len to 32 bits */
    op->bufs[1].len = len;
    op->nbufs = 2;
  }
}
