/* The link layer (see link.h): connections, reads and writes; the watch
 * over them (heartbeats, silence, stalls, and ftmw_link_init, which starts
 * it) is link_watch.c. Everything here runs on the thread that owns the
 * loop (loop.c). */
#include "link.h"

#include "fault.h"
#include "loop.h"
#include "msg.h"
#include "trace.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define DIRECT_MIN 4096

/* A small frame (ACK, heartbeat, handshake) that could not be written at
 * once: it keeps its own copy until libuv is done with it. */
typedef struct {
  uv_write_t req;
  size_t len;
  uint8_t buf[FTMW_HDR_SIZE + FTMW_LINK_CTRL_MAX];
} ctrl_write;
_Static_assert(FTMW_WELCOME_SIZE <= FTMW_LINK_CTRL_MAX,
               "a WELCOME is a control frame");

/* A lazy ACK (ftmw_link_ack) goes with the next frame written to the
 * peer, or after this long. */
#define ACK_DELAY_MS 1

/* --- writing ------------------------------------------------------------ */

/* Writes what the socket takes at once, as uv_try_write does but with
 * MSG_NOSIGNAL. Returns the bytes written, or 0: none now, or an error
 * that ftmw_loop_write's uv_write reports in turn. */
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

static void ctrl_write_cb(uv_write_t *req, int status) {
  (void)status;
  ftmw_loop_write_done(ftmw_loop_of(req->handle->loop));
  free(req->data);
}

/* The peer bound to c is down, or an unbound c is closed. */
void ftmw_link_down(ftmw_conn *c, int why, const char *text) {
  if (c->peer)
    c->link->ops->on_down(c->link->ctx, c, c->peer, why, text);
  else
    ftmw_link_close(c);
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
    ftmw_link_down(c, FTMW_DOWN_REFUSED, "out of memory writing to it");
    return;
  }
  w->len = len - n;
  memcpy(w->buf, buf + n, w->len);
  w->req.data = w;
  b = uv_buf_init((char *)w->buf, (unsigned)w->len);
  if (ftmw_loop_write(c->link->lp, &w->req, (uv_stream_t *)&c->tcp, &b, 1,
                      ctrl_write_cb) != 0)
    free(w);
}

/* The ACK due on c, if any, encoded into out: 1 when one was (it counts
 * as sent), else 0. */
static int take_ack(ftmw_conn *c, uint8_t out[FTMW_HDR_SIZE]) {
  if (c->ack_due <= c->ack_sent || c->closing)
    return 0;
  ftmw_hdr h = {.type = FTMW_FRAME_ACK,
                .src = c->link->self_pid,
                .dst = c->pid,
                .epoch = c->link->self.epoch,
                .seq = c->ack_due};
  ftmw_wire_encode(out, &h);
  c->ack_sent = c->ack_due;
  c->ack_frames = 0;
  c->ack_bytes = 0;
  if (--c->link->acks_due == 0)
    uv_timer_stop(&c->link->ack_timer);
  return 1;
}

void ftmw_link_send_ack(ftmw_conn *c) {
  uint8_t buf[FTMW_HDR_SIZE];
  if (take_ack(c, buf))
    write_small(c, buf, sizeof(buf));
}

/* The lazy ACKs' deadline: every one due goes now. */
static void ack_timer_cb(uv_timer_t *t) {
  ftmw_link *l = t->data;
  for (ftmw_qnode *n = ftmw_q_head(&l->conns); n != &l->conns && l->acks_due > 0;
       n = n->next)
    ftmw_link_send_ack(FTMW_CONTAINER_OF(n, ftmw_conn, node));
}

void ftmw_link_ack(ftmw_conn *c, uint64_t seq, size_t len, int when) {
  if (c->closing || seq <= c->ack_due)
    return;
  ftmw_link *l = c->link;
  if (c->ack_due <= c->ack_sent)
    l->acks_due++; /* take_ack counts it out */
  c->ack_due = seq;
  c->ack_frames++;
  c->ack_bytes += len;
  if (when == FTMW_ACK_LATER && (c->ack_frames >= FTMW_LINK_ACK_FRAMES ||
                                 c->ack_bytes >= FTMW_LINK_ACK_BYTES))
    when = FTMW_ACK_NOW; /* the sender's window must not fill (isend.c) */
  if (when == FTMW_ACK_NOW) {
    ftmw_link_send_ack(c); /* no deadline to keep: the blocking path arms no timer */
  } else if (when == FTMW_ACK_SOON &&
             !uv_is_active((uv_handle_t *)&l->ack_timer)) {
    uv_timer_start(&l->ack_timer, ack_timer_cb, ACK_DELAY_MS, 0);
    ftmw_loop_timer_started(l->lp);
  }
}

void ftmw_link_send(ftmw_conn *c, int type, int tag, uint64_t seq,
                    unsigned flags, const void *payload, size_t len) {
  uint8_t buf[FTMW_HDR_SIZE + FTMW_LINK_CTRL_MAX];
  if (type != FTMW_FRAME_ACK && type != FTMW_FRAME_HELLO)
    ftmw_link_send_ack(c); /* ahead of it, as it was received first */
  if (len > FTMW_LINK_CTRL_MAX) { /* a bug in the caller: refused whole */
    ftmw_log("internal error: a %zu-byte control frame (type %d)", len, type);
    ftmw_link_down(c, FTMW_DOWN_REFUSED, "internal error: control frame too long");
    return;
  }
  ftmw_hdr h = {.type = (uint8_t)type,
                .flags = (uint16_t)flags,
                .src = c->link->self_pid,
                .dst = c->pid,
                .tag = tag,
                .epoch = c->link->self.epoch,
                .seq = seq,
                .len = len};
  ftmw_wire_encode(buf, &h);
  if (len)
    memcpy(buf + FTMW_HDR_SIZE, payload, len);
  write_small(c, buf, FTMW_HDR_SIZE + len);
}

void ftmw_link_finish(ftmw_loop *lp, ftmw_out *o, int failed) {
  if (failed)
    o->failed = 1;
  o->done = 1;
  ftmw_loop_wake_owner(lp);
}

/* A failed write unlinks o from the ACK queue (a no-op when already
 * unlinked) before handing it back: the caller's frame then goes away,
 * and the queue must not point into it. */
static void out_write_cb(uv_write_t *req, int status) {
  ftmw_out *o = req->data;
  ftmw_loop *lp = ftmw_loop_of(req->handle->loop);
  ftmw_loop_write_done(lp);
  if (status < 0)
    ftmw_q_remove(&o->node);
  ftmw_link_finish(lp, o, status < 0);
}

void ftmw_link_write(ftmw_conn *c, ftmw_out *const *outs, unsigned n) {
  if (n > FTMW_LINK_BATCH_MAX) { /* in several writes */
    ftmw_link_write(c, outs, FTMW_LINK_BATCH_MAX);
    ftmw_link_write(c, outs + FTMW_LINK_BATCH_MAX, n - FTMW_LINK_BATCH_MAX);
    return;
  }
  if (c->closing) {
    for (unsigned k = 0; k < n; k++)
      ftmw_link_finish(c->link->lp, outs[k], 1);
    return;
  }
  /* v holds every frame's pieces, the ACK due to the peer ahead of them
   * (it was received first): outs[k]'s are v[first[k]..first[k+1]). */
  uv_buf_t v[1 + FTMW_LINK_BATCH_MAX * FTMW_OUT_BUFS];
  unsigned first[FTMW_LINK_BATCH_MAX + 1], nv = 0;
  /* After ftmw_link_finish the caller may return and free outs[k]: what is
   * needed of it afterwards is read first. */
  int want_ack[FTMW_LINK_BATCH_MAX];
  for (unsigned k = 0; k < n; k++) {
    ftmw_out *o = outs[k];
    want_ack[k] = o->want_ack;
    /* Linked while it awaits its ACK, else self-linked: a failed write
     * unlinks it either way. */
    ftmw_q_init(&o->node);
    if (o->want_ack)
      ftmw_q_insert_tail(&c->unacked, &o->node);
    first[k] = nv;
    if (k == 0 && take_ack(c, o->ack))
      v[nv++] = uv_buf_init((char *)o->ack, FTMW_HDR_SIZE);
    for (unsigned i = 0; i < o->nbufs; i++)
      v[nv++] = o->bufs[i];
  }
  first[n] = nv;
  c->last_tx_ms = ftmw_now_ms();
  /* One system call for them all; what the socket did not take goes
   * through libuv, frame by frame, in order. */
  size_t skip = try_send(c, v, nv);
  for (unsigned k = 0; k < n; k++) {
    ftmw_out *o = outs[k];
    unsigned i = first[k], end = first[k + 1];
    while (i < end && skip >= v[i].len)
      skip -= v[i++].len;
    if (i == end) {
      ftmw_link_finish(c->link->lp, o, 0);
      continue;
    }
    v[i].base += skip;
    v[i].len -= skip;
    skip = 0;
    o->req.data = o;
    if (ftmw_loop_write(c->link->lp, &o->req, (uv_stream_t *)&c->tcp, v + i,
                        end - i, out_write_cb) != 0) {
      ftmw_q_remove(&o->node);
      ftmw_link_finish(c->link->lp, o, 1);
    }
  }
  for (unsigned k = 0; k < n; k++)
    if (want_ack[k])
      ftmw_fault_hit(FTMW_FAULT_SEND_WRITTEN);
}

static ftmw_out *out_of(ftmw_qnode *n) {
  return FTMW_CONTAINER_OF(n, ftmw_out, node);
}

int ftmw_link_acked(ftmw_conn *c, uint64_t seq) {
  if (ftmw_q_empty(&c->unacked) || seq < out_of(ftmw_q_head(&c->unacked))->seq ||
      seq > out_of(c->unacked.prev)->seq)
    return -1;
  while (!ftmw_q_empty(&c->unacked) && out_of(ftmw_q_head(&c->unacked))->seq <= seq) {
    ftmw_out *o = out_of(ftmw_q_head(&c->unacked));
    ftmw_q_remove(&o->node);
    o->acked = 1; /* settled, if written: o may be freed then */
  }
  ftmw_loop_wake_owner(c->link->lp);
  return 0;
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
  ftmw_msg_free_data(payload);
}

static void rejected(ftmw_conn *c, const char *why) {
  ftmw_log("dropped connection from %s: %s", c->addr, why);
  ftmw_trace("connection_rejected", "\"from\":\"%s\",\"reason\":\"%s\"",
             c->addr, why);
  ftmw_link_close(c);
}

/* A HELLO on an unbound connection: the secret first, compared in
 * constant time so that it cannot be guessed byte by byte; then the
 * owner says who it is. Returns 0 when bound, -1 when refused, 1 when the
 * owner closed c. */
static int on_hello(ftmw_conn *c, const uint8_t *payload) {
  ftmw_link *l = c->link;
  ftmw_hello m;
  if (ftmw_wire_decode_hello(payload, FTMW_HELLO_SIZE, &m) != FTMW_WIRE_OK) {
    c->reject = "malformed HELLO";
    return -1;
  }
  unsigned diff = 0;
  for (int i = 0; i < FTMW_SECRET_SIZE; i++)
    diff |= (unsigned)(m.secret[i] ^ l->cfg.secret[i]);
  if (diff != 0) {
    c->reject = "wrong job secret";
    return -1;
  }
  return l->ops->on_hello(l->ctx, c, &m, &c->reject);
}

/* Returns non-zero when the connection was closed. */
static int on_frame(void *ctx, const ftmw_hdr *h, void *payload) {
  ftmw_conn *c = ctx;
  if (c->peer == NULL) { /* unauthenticated: only a HELLO is acceptable */
    int rc = h->type == FTMW_FRAME_HELLO ? on_hello(c, payload) : -1;
    payload_release(c, payload);
    if (rc > 0)
      return 1;
    if (rc != 0) {
      rejected(c, c->reject ? c->reject : "expected HELLO");
      return 1;
    }
    return 0;
  }
  /* A heartbeat carries nothing (the wire allows it no payload) and only
   * shows the connection alive, which any byte read already did: it is
   * not fenced. A connection whose identity changes, a spare activated,
   * has heartbeats of the old identity in flight both ways: the spare's,
   * and those of masters that had not yet read its ACTIVATED. */
  if (h->type == FTMW_FRAME_HEARTBEAT)
    return 0;
  return c->link->ops->on_frame(c->link->ctx, c, c->peer, h, payload);
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
void ftmw_link_heard(ftmw_conn *c) {
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
    char why[96];
    snprintf(why, sizeof(why), "connection lost (%s)",
             nread == UV_EOF ? "closed" : uv_strerror((int)nread));
    ftmw_link_down(c, FTMW_DOWN_CLOSED, why);
    return;
  }
  if (nread == 0)
    return;
  c->last_rx_ms = ftmw_now_ms();
  ftmw_link_heard(c);
  if (c->quiet && c->peer) {
    c->quiet = 0;
    if (c->link->ops->on_quiet)
      c->link->ops->on_quiet(c->link->ctx, c, c->peer, 0, 0);
    if (c->closing)
      return;
  }
  int rc = c->direct ? ftmw_reader_direct_done(&c->reader, (size_t)nread)
                     : ftmw_reader_feed(&c->reader, c->stage, (size_t)nread);
  if (rc == 0 || c->closing)
    return;
  char why[96];
  snprintf(why, sizeof(why), "protocol error: %s",
           rc < 0 ? ftmw_wire_strerror(rc) : c->reject ? c->reject : "refused");
  if (c->peer)
    ftmw_link_down(c, FTMW_DOWN_REFUSED, why);
  else
    rejected(c, why);
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  (void)buf;
  got_bytes(s->data, nread);
}

void ftmw_link_drain(ftmw_conn *c) {
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

void ftmw_link_close(ftmw_conn *c) {
  if (c->closing)
    return;
  if (c->ack_due > c->ack_sent && --c->link->acks_due == 0)
    uv_timer_stop(&c->link->ack_timer);
  c->closing = 1;
  ftmw_q_remove(&c->node);
  c->peer = NULL;
  while (!ftmw_q_empty(&c->unacked)) {
    ftmw_out *o = FTMW_CONTAINER_OF(ftmw_q_head(&c->unacked), ftmw_out, node);
    ftmw_q_remove(&o->node);
    o->failed = 1; /* o may be freed from now on, if written */
  }
  ftmw_loop_wake_owner(c->link->lp);
  uv_close((uv_handle_t *)&c->tcp, conn_close_cb);
}

int ftmw_link_open(const ftmw_conn *c) { return !c->closing; }

int ftmw_link_readable_by_peer(const ftmw_conn *c) {
  return !c->broken && !c->connecting && !c->closing;
}

int ftmw_link_fd(const ftmw_conn *c) {
  uv_os_fd_t fd;
  return uv_fileno((const uv_handle_t *)&c->tcp, &fd) == 0 ? fd : -1;
}

void ftmw_link_bind(ftmw_conn *c, void *peer, uint32_t pid,
                    const ftmw_place *at) {
  c->peer = peer;
  c->pid = pid;
  c->at = at;
  c->quiet = 0; /* a new peer is judged afresh */
  c->reader.max_payload = c->link->cfg.max_message;
}

static ftmw_conn *conn_new(ftmw_link *l) {
  ftmw_conn *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return NULL;
  if (uv_tcp_init(ftmw_loop_uv(l->lp), &c->tcp) != 0) {
    free(c);
    return NULL;
  }
  c->tcp.data = c;
  c->link = l;
  ftmw_q_init(&c->unacked);
  c->opened_ms = c->last_rx_ms = c->last_tx_ms = ftmw_now_ms();
  ftmw_reader_init(&c->reader, FTMW_HELLO_SIZE, payload_alloc, on_frame,
                   payload_release, c);
  ftmw_q_insert_tail(&l->conns, &c->node);
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
  ftmw_loop_watchers_changed(c->link->lp, 1);
  uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb);
}

static void on_connection(uv_stream_t *server, int status) {
  ftmw_link *l = server->data;
  if (status < 0) {
    ftmw_log("accept failed: %s", uv_strerror(status));
    return;
  }
  ftmw_conn *c = conn_new(l);
  if (c == NULL) {
    ftmw_log("accept: out of memory");
    return;
  }
  if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
    ftmw_link_close(c);
    return;
  }
  conn_ready(c);
}

static void on_connect(uv_connect_t *req, int status) {
  ftmw_conn *c = req->data;
  if (c->closing)
    return;
  c->connecting = 0;
  if (status < 0) {
    c->broken = 1; /* nothing reaches it: no FENCE either */
    char why[96];
    snprintf(why, sizeof(why), "cannot connect: %s", uv_strerror(status));
    ftmw_link_down(c, FTMW_DOWN_UNREACHED, why);
    return;
  }
  conn_ready(c);
}

int ftmw_link_connect(ftmw_link *l, const struct sockaddr *addr, void *peer,
                      uint32_t pid, const ftmw_place *at, ftmw_conn **out) {
  ftmw_conn *c = conn_new(l);
  if (c == NULL)
    return UV_ENOMEM;
  ftmw_link_bind(c, peer, pid, at);
  c->connect_req.data = c;
  c->connecting = 1;
  ftmw_loop_watchers_changed(l->lp, 1);
  int rc = uv_tcp_connect(&c->connect_req, &c->tcp, addr, on_connect);
  if (rc != 0) {
    c->peer = NULL;
    ftmw_link_close(c);
    return rc;
  }
  /* HELLO goes first: libuv writes what is queued once connected, in
   * order, so it precedes anything the owner writes from now on. Written
   * unbound, so that a HELLO that cannot be queued closes c here. */
  ftmw_hello m = l->self;
  memcpy(m.secret, l->cfg.secret, sizeof(m.secret));
  uint8_t payload[FTMW_HELLO_SIZE];
  ftmw_wire_encode_hello(payload, &m);
  c->peer = NULL;
  ftmw_link_send(c, FTMW_FRAME_HELLO, 0, 0, 0, payload, sizeof(payload));
  if (c->closing)
    return UV_ENOMEM;
  c->peer = peer;
  *out = c;
  return 0;
}

/* --- the link ----------------------------------------------------------- */


void ftmw_link_set_self(ftmw_link *l, const ftmw_hello *self, uint32_t pid) {
  l->self = *self;
  l->self_pid = pid;
}

int ftmw_link_listen(ftmw_link *l, const char *ip, int *port) {
  struct sockaddr_in addr;
  int rc = uv_ip4_addr(ip, 0, &addr);
  if (rc == 0)
    rc = uv_tcp_init(ftmw_loop_uv(l->lp), &l->listener);
  if (rc == 0) {
    l->listening = 1;
    l->listener.data = l;
    rc = uv_tcp_bind(&l->listener, (const struct sockaddr *)&addr, 0);
  }
  if (rc == 0)
    rc = uv_listen((uv_stream_t *)&l->listener, 1024, on_connection);
  if (rc == 0) {
    int len = sizeof(addr);
    rc = uv_tcp_getsockname(&l->listener, (struct sockaddr *)&addr, &len);
    *port = ntohs(addr.sin_port);
  }
  return rc;
}

void ftmw_link_stop(ftmw_link *l) {
  while (!ftmw_q_empty(&l->conns))
    ftmw_link_close(FTMW_CONTAINER_OF(ftmw_q_head(&l->conns), ftmw_conn, node));
  if (l->listening)
    uv_close((uv_handle_t *)&l->listener, NULL);
  uv_close((uv_handle_t *)&l->tick, NULL);
  uv_close((uv_handle_t *)&l->ack_timer, NULL);
}
