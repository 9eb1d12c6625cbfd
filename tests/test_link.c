/* The link layer (ftmw/link.c) in one process, over loopback: two links on
 * one loop (a listening "server" and a connecting "client"), or a link and
 * a raw socket that plays a peer which misbehaves on demand. No MPI, no
 * I/O thread: the test runs the loop itself (pump, RUN_UNTIL). Criterion
 * runs each test in its own process, so the loop's counts (its write
 * count, its SIGPIPE guard) start afresh in each. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "link.h"
#include "msg.h"

#define HEARTBEAT_MS 20
#define TIMEOUT_MS 200
#define MAX_MESSAGE (64u << 20)
#define BOUND_MS 5000 /* any one wait; the machine may be loaded */
#define MAX_FRAMES 64

static uint64_t now_ms(void) { return uv_hrtime() / 1000000u; }

/* --- what the upcalls saw ------------------------------------------------ */

typedef struct {
  ftmw_conn *c;
  void *peer;
  ftmw_hdr h;
  void *payload; /* the link's ftmw_msg data, kept (on_frame's contract) */
  int acks_before; /* ACKs this side had read before it */
} frame_rec;

typedef struct {
  const char *name;
  ftmw_link link;
  int inited;
  int peer_obj;   /* what this side binds its peer to (its address only) */
  ftmw_conn *conn; /* the client's connection, or the one the server bound */
  /* on_hello */
  int hellos;
  ftmw_hello hello;
  const char *refuse; /* refuse HELLOs with this text */
  /* on_frame */
  int nframes;
  frame_rec frames[MAX_FRAMES];
  int ack_mode; /* ACK frames go to ftmw_link_acked, as the owner does */
  int auto_ack; /* DATA is acknowledged (ftmw_link_ack), as the owner does */
  int acks;
  int ack_rc[MAX_FRAMES];
  /* on_down */
  int downs;
  int down_why;
  char down_text[128];
  void *down_peer;
  int ticks; /* heartbeat ticks run (on_tick) */
  /* on_stalled */
  int stalls;
  uint64_t stall_gap;
  int long_stall;
  int raw_heartbeats_at_down; /* what the raw peer had read by then */
} side;

/* A plain socket playing the link's peer: it reads frames with the wire
 * module's reader, and writes only what a test tells it to. */
typedef struct {
  int lfd, fd;
  ftmw_reader reader;
  int frames, hellos, heartbeats, datas;
  int first_type; /* of the first frame */
  ftmw_hello hello;
  ftmw_hdr data_hdr;
  uint8_t *data; /* the last DATA payload */
  size_t read_max; /* bytes a turn reads; 0: none */
  uint64_t turn_ms, last_turn, last_hb;
  int send_heartbeats;
  int eof;
} raw_peer;

static raw_peer raw = {.lfd = -1, .fd = -1};

/* The loop the links run on: only its libuv loop and its counts are used
 * (nothing hands it over, and no I/O thread runs it). */
static ftmw_loop owner;
static uv_loop_t *uv_of_owner(void) { return ftmw_loop_uv(&owner); }
static side srv = {.name = "server"}, cli = {.name = "client"};
static void (*pump_hook)(void); /* a raw peer's turn, at each pump */

static int on_hello(void *ctx, ftmw_conn *c, const ftmw_hello *m,
                    const char **reject) {
  side *s = ctx;
  s->hellos++;
  s->hello = *m;
  if (s->refuse) {
    *reject = s->refuse;
    return -1;
  }
  /* at = NULL: the peer is not "on this host", so a silent one is never
   * looked up in the kernel (link.c spared). */
  ftmw_link_bind(c, &s->peer_obj, m->id, NULL);
  s->conn = c;
  return 0;
}

static int on_frame(void *ctx, ftmw_conn *c, void *peer, const ftmw_hdr *h,
                    void *payload) {
  side *s = ctx;
  if (s->ack_mode && h->type == FTMW_FRAME_ACK) {
    cr_assert_null(payload);
    if (s->acks < MAX_FRAMES)
      s->ack_rc[s->acks] = ftmw_link_acked(c, h->seq);
    s->acks++;
    return 0;
  }
  if (s->auto_ack && h->type == FTMW_FRAME_DATA)
    ftmw_link_ack(c, h->seq, (size_t)h->len, ftmw_link_ack_when(h->flags));
  if (s->nframes < MAX_FRAMES) {
    s->frames[s->nframes] = (frame_rec){.c = c, .peer = peer, .h = *h,
                                        .payload = payload, .acks_before = s->acks};
  } else if (payload) {
    ftmw_msg_free(FTMW_CONTAINER_OF(payload, ftmw_msg, data));
  }
  s->nframes++;
  return 0;
}

static void on_down(void *ctx, ftmw_conn *c, void *peer, int why,
                    const char *text) {
  side *s = ctx;
  s->downs++;
  s->down_why = why;
  s->down_peer = peer;
  snprintf(s->down_text, sizeof(s->down_text), "%s", text);
  s->raw_heartbeats_at_down = raw.heartbeats;
  if (c == s->conn)
    s->conn = NULL;
  ftmw_link_close(c); /* as on_down's contract asks of the owner */
}

static void on_stalled(void *ctx, uint64_t gap, uint64_t now, int long_stall) {
  (void)now;
  side *s = ctx;
  s->stalls++;
  if (gap > s->stall_gap)
    s->stall_gap = gap;
  s->long_stall |= long_stall;
}

static void on_tick_start(void *ctx) { (void)ctx; }
static void on_tick(void *ctx, uint64_t now) {
  (void)now;
  ((side *)ctx)->ticks++;
}

static const char *name_of(void *ctx, const void *peer, char *buf, size_t len) {
  (void)peer;
  snprintf(buf, len, "%s's peer", ((side *)ctx)->name);
  return buf;
}

static const ftmw_link_ops ops = {
    .on_hello = on_hello,
    .on_frame = on_frame,
    .on_down = on_down,
    .on_stalled = on_stalled,
    .on_tick_start = on_tick_start,
    .on_tick = on_tick,
    .name = name_of,
};

/* --- running the loop ---------------------------------------------------- */

/* One non-blocking pass, the raw peer's turn, then a short sleep on the
 * loop's backend. */
static void pump(void) {
  uv_run(uv_of_owner(), UV_RUN_NOWAIT);
  if (pump_hook)
    pump_hook();
  struct pollfd p = {.fd = uv_backend_fd(uv_of_owner()), .events = POLLIN};
  poll(&p, 1, 2);
}

/* Runs the loop until cond holds; fails the test when it does not within
 * ms. */
#define RUN_UNTIL(cond, ms)                                                    \
  do {                                                                         \
    uint64_t t0_ = now_ms();                                                   \
    while (!(cond)) {                                                          \
      cr_assert(now_ms() - t0_ < (uint64_t)(ms), "not within %d ms: %s",      \
                (int)(ms), #cond);                                             \
      pump();                                                                  \
    }                                                                          \
  } while (0)

static void run_for(uint64_t ms) {
  uint64_t t0 = now_ms();
  while (now_ms() - t0 < ms)
    pump();
}

#define DONE(o) ((o)->done)
#define ACKED(o) ((o)->acked)
#define FAILED(o) ((o)->failed)

/* --- set-up -------------------------------------------------------------- */

static ftmw_link_cfg cfg_with(uint8_t secret_byte) {
  ftmw_link_cfg cfg = {.heartbeat_ms = HEARTBEAT_MS, .timeout_ms = TIMEOUT_MS,
                       .max_message = MAX_MESSAGE};
  memset(cfg.secret, secret_byte, sizeof(cfg.secret));
  return cfg;
}

/* The client: worker 3 of epoch 5, somewhere else (its place is made up). */
static const ftmw_place client_place = {
    .pid = 4242, .host = "client-host",
    .kernel = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
               13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24},
    .start = 777};

static void side_init(side *s, const ftmw_link_cfg *cfg, uint32_t role,
                      uint32_t id, uint32_t pid, const char *host) {
  ftmw_link_init(&s->link, &owner, cfg, &ops, s);
  s->inited = 1;
  ftmw_hello self = {.role = role, .id = id, .epoch = 5};
  if (s == &cli)
    self.at = client_place;
  else
    snprintf(self.at.host, sizeof(self.at.host), "%s", host);
  ftmw_link_set_self(&s->link, &self, pid);
}

static void setup(void) {
  signal(SIGPIPE, SIG_DFL); /* a SIGPIPE that gets through kills the test */
  cr_assert_eq(uv_loop_init(uv_of_owner()), 0);
}

static int server_up(void) {
  ftmw_link_cfg cfg = cfg_with(0x5a);
  side_init(&srv, &cfg, FTMW_ROLE_MASTER, 0, FTMW_PID_MASTER(0), "server-host");
  int port = 0;
  cr_assert_eq(ftmw_link_listen(&srv.link, "127.0.0.1", &port), 0);
  cr_assert_gt(port, 0);
  return port;
}

static void client_init(uint8_t secret_byte) {
  ftmw_link_cfg cfg = cfg_with(secret_byte);
  side_init(&cli, &cfg, FTMW_ROLE_WORKER, 3, 3, NULL);
}

/* s's connection, which the test goes on to use: it must not have gone
 * down meanwhile. */
static ftmw_conn *conn_of(const side *s) {
  cr_assert_not_null(s->conn, "%s's connection is gone: %s", s->name, s->down_text);
  return s->conn;
}

/* Whether s's connection is made (and not closed since). */
static int connected(const side *s) {
  return s->conn != NULL && ftmw_link_readable_by_peer(s->conn);
}

static struct sockaddr_in loopback(int port) {
  struct sockaddr_in a;
  cr_assert_eq(uv_ip4_addr("127.0.0.1", port, &a), 0);
  return a;
}

/* Connects the client to port once the links have ticked: a link credits
 * a stall of its loop only from its first tick on (see
 * stall_before_first_tick_is_no_peer_silence), and no other test may
 * fail on a loaded machine's stalls. */
static void client_connect(int port) {
  RUN_UNTIL(cli.ticks >= 2 && (!srv.inited || srv.ticks >= 2), BOUND_MS);
  struct sockaddr_in a = loopback(port);
  cr_assert_eq(ftmw_link_connect(&cli.link, (const struct sockaddr *)&a,
                                 &cli.peer_obj, FTMW_PID_MASTER(0), NULL, &cli.conn),
               0);
}

/* A client connected to a server that bound it. */
static void handshake(void) {
  int port = server_up();
  client_init(0x5a);
  client_connect(port);
  RUN_UNTIL(srv.hellos == 1 && srv.conn != NULL && connected(&cli), BOUND_MS);
  cr_assert_eq(srv.downs + cli.downs, 0, "server: %s; client: %s", srv.down_text,
               cli.down_text);
}

static void free_frames(side *s) {
  int n = s->nframes < MAX_FRAMES ? s->nframes : MAX_FRAMES;
  for (int i = 0; i < n; i++)
    if (s->frames[i].payload)
      ftmw_msg_free(FTMW_CONTAINER_OF(s->frames[i].payload, ftmw_msg, data));
  s->nframes = 0;
}

/* Stops both links, runs the loop until every handle is closed, and
 * frees what the test kept. */
static void teardown(void) {
  pump_hook = NULL;
  if (srv.inited)
    ftmw_link_stop(&srv.link);
  if (cli.inited)
    ftmw_link_stop(&cli.link);
  uv_run(uv_of_owner(), UV_RUN_DEFAULT);
  cr_assert_eq(uv_loop_close(uv_of_owner()), 0, "a handle was left open");
  free_frames(&srv);
  free_frames(&cli);
  ftmw_msg_release_cache();
}

/* A DATA frame to write: hdr from ftmw_wire_encode, then data. */
static void out_data(ftmw_out *o, uint32_t src, uint32_t dst, int tag,
                     uint64_t seq, const void *data, size_t len) {
  ftmw_hdr h = {.type = FTMW_FRAME_DATA, .src = src, .dst = dst, .tag = tag,
                .epoch = 5, .seq = seq, .len = len};
  ftmw_wire_encode(o->hdr, &h);
  o->seq = seq;
  o->bufs[0] = uv_buf_init((char *)o->hdr, FTMW_HDR_SIZE);
  o->nbufs = 1;
  if (len) {
    o->bufs[1].base = (char *)data;
    o->bufs[1].len = len;
    o->nbufs = 2;
  }
}

/* One frame, alone in its write. */
static void write1(ftmw_conn *c, ftmw_out *o) { ftmw_link_write(c, &o, 1); }

static uint8_t *pattern(size_t len, unsigned seed) {
  uint8_t *p = malloc(len);
  cr_assert_not_null(p);
  for (size_t i = 0; i < len; i++)
    p[i] = (uint8_t)(i * 31u + seed + (i >> 12));
  return p;
}

static void expect_frame(const frame_rec *f, int type, int tag, uint64_t seq,
                         uint32_t src, uint32_t dst, const void *data, size_t len) {
  cr_expect_eq(f->h.type, type);
  cr_expect_eq(f->h.tag, tag);
  cr_expect_eq(f->h.seq, seq);
  cr_expect_eq(f->h.src, src);
  cr_expect_eq(f->h.dst, dst);
  cr_expect_eq(f->h.epoch, 5);
  cr_assert_eq(f->h.len, len);
  if (len == 0) {
    cr_expect_null(f->payload);
  } else {
    cr_assert_not_null(f->payload);
    cr_expect_eq(memcmp(f->payload, data, len), 0, "payload differs");
  }
}

/* --- a raw peer ---------------------------------------------------------- */

static void *raw_alloc(void *ctx, const ftmw_hdr *h) {
  (void)ctx;
  return malloc(h->len);
}

static void raw_release(void *ctx, void *payload) {
  (void)ctx;
  free(payload);
}

static int raw_emit(void *ctx, const ftmw_hdr *h, void *payload) {
  raw_peer *r = ctx;
  if (r->frames++ == 0)
    r->first_type = h->type;
  if (h->type == FTMW_FRAME_HELLO) {
    r->hellos++;
    cr_assert_eq(ftmw_wire_decode_hello(payload, h->len, &r->hello), FTMW_WIRE_OK);
  } else if (h->type == FTMW_FRAME_HEARTBEAT) {
    r->heartbeats++;
  } else if (h->type == FTMW_FRAME_DATA) {
    r->datas++;
    r->data_hdr = *h;
    free(r->data);
    r->data = payload;
    return 0;
  }
  free(payload);
  return 0;
}

static void set_nonblocking(int fd) {
  cr_assert_eq(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
}

/* Listens on 127.0.0.1, port chosen by the kernel. rcvbuf > 0: the
 * accepted socket's receive buffer (set before listen, inherited), which
 * also stops the kernel from growing it. */
static int raw_listen(int rcvbuf) {
  raw.lfd = socket(AF_INET, SOCK_STREAM, 0);
  cr_assert_geq(raw.lfd, 0);
  if (rcvbuf > 0)
    cr_assert_eq(setsockopt(raw.lfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
  struct sockaddr_in a = loopback(0);
  cr_assert_eq(bind(raw.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
  cr_assert_eq(listen(raw.lfd, 4), 0);
  socklen_t len = sizeof(a);
  cr_assert_eq(getsockname(raw.lfd, (struct sockaddr *)&a, &len), 0);
  set_nonblocking(raw.lfd);
  ftmw_reader_init(&raw.reader, MAX_MESSAGE, raw_alloc, raw_emit, raw_release, &raw);
  return ntohs(a.sin_port);
}

static void raw_heartbeat(void) {
  uint8_t hb[FTMW_HDR_SIZE];
  ftmw_hdr h = {.type = FTMW_FRAME_HEARTBEAT, .src = FTMW_PID_MASTER(0), .dst = 3};
  ftmw_wire_encode(hb, &h);
  /* The link closed it (EPIPE, ECONNRESET): no more. Full: next turn. */
  ssize_t n = send(raw.fd, hb, sizeof(hb), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    raw.send_heartbeats = 0;
  else
    cr_assert(n < 0 || n == (ssize_t)sizeof(hb), "a heartbeat cut short");
}

/* The raw peer's turn: accepts, then every turn_ms reads up to read_max
 * bytes and, if asked to, sends a heartbeat. */
static void raw_turn(void) {
  if (raw.fd < 0) {
    raw.fd = accept(raw.lfd, NULL, NULL);
    if (raw.fd < 0)
      return;
    set_nonblocking(raw.fd);
  }
  uint64_t now = now_ms();
  if (raw.send_heartbeats && now - raw.last_hb >= HEARTBEAT_MS) {
    raw_heartbeat();
    raw.last_hb = now;
  }
  if (now - raw.last_turn < raw.turn_ms)
    return;
  raw.last_turn = now;
  static uint8_t buf[64 * 1024];
  size_t got = 0;
  while (!raw.eof && got < raw.read_max) {
    size_t want = raw.read_max - got < sizeof(buf) ? raw.read_max - got : sizeof(buf);
    ssize_t n = recv(raw.fd, buf, want, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    if (n <= 0) {
      raw.eof = 1;
      break;
    }
    got += (size_t)n;
    cr_assert_eq(ftmw_reader_feed(&raw.reader, buf, (size_t)n), 0,
                 "the link wrote a malformed stream");
  }
}

/* Closes fd with a reset (SO_LINGER 0): the peer's process died. */
static void close_reset(int fd) {
  struct linger lg = {.l_onoff = 1, .l_linger = 0};
  cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
  close(fd);
}

static void raw_close(void) {
  if (raw.fd >= 0)
    close(raw.fd);
  if (raw.lfd >= 0)
    close(raw.lfd);
  raw.fd = raw.lfd = -1;
  ftmw_reader_reset(&raw.reader);
  free(raw.data);
  raw.data = NULL;
}

/* A client link connected to the raw peer, its HELLO read; the raw peer
 * heartbeats (as a live peer does) unless heartbeats is 0. */
static void client_to_raw(int rcvbuf, int heartbeats) {
  int port = raw_listen(rcvbuf);
  client_init(0x5a);
  raw.read_max = 1 << 20;
  raw.send_heartbeats = heartbeats;
  pump_hook = raw_turn;
  client_connect(port);
  RUN_UNTIL(raw.hellos == 1 && connected(&cli), BOUND_MS);
  cr_assert_eq(raw.hellos, 1);
  cr_assert_eq(raw.first_type, FTMW_FRAME_HELLO, "HELLO is the first frame");
}

/* Whether the other end of a plain socket closed it (EOF or reset). */
static int gone(int fd) {
  char b[256];
  ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static int connect_raw(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  cr_assert_geq(fd, 0);
  struct sockaddr_in a = loopback(port);
  cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
  return fd;
}

/* stderr into a file, to read what the link logged (ftmw_log). */
static int saved_stderr = -1;
static FILE *captured;

static void capture_stderr(void) {
  captured = tmpfile();
  cr_assert_not_null(captured);
  fflush(stderr);
  saved_stderr = dup(STDERR_FILENO);
  dup2(fileno(captured), STDERR_FILENO);
}

static char *captured_text(void) {
  static char text[8192];
  fflush(stderr);
  dup2(saved_stderr, STDERR_FILENO);
  close(saved_stderr);
  rewind(captured);
  size_t n = fread(text, 1, sizeof(text) - 1, captured);
  text[n] = '\0';
  fclose(captured);
  fputs(text, stderr); /* still shown with the test's output */
  return text;
}

TestSuite(link, .init = setup);

/* --- the tests ----------------------------------------------------------- */

/* HELLO carries who the client said it is; frames sent both ways, by
 * ftmw_link_send and by ftmw_link_write (header and data in two buffers),
 * arrive whole, heartbeats are not handed up. */
Test(link, handshake_and_frames_both_ways, .timeout = 30) {
  handshake();
  cr_expect_eq(srv.hello.role, FTMW_ROLE_WORKER);
  cr_expect_eq(srv.hello.id, 3);
  cr_expect_eq(srv.hello.epoch, 5);
  cr_expect_eq(srv.hello.at.pid, client_place.pid);
  cr_expect_str_eq(srv.hello.at.host, client_place.host);
  cr_expect_eq(memcmp(srv.hello.at.kernel, client_place.kernel, FTMW_KERNEL_ID_SIZE), 0);
  cr_expect_eq(srv.hello.at.start, client_place.start);
  cr_expect_eq(cli.hellos, 0, "a connecting link takes no HELLO");

  /* Client to server. */
  uint8_t small[FTMW_DECIDE_SIZE];
  for (size_t i = 0; i < sizeof(small); i++)
    small[i] = (uint8_t)(0xa0 + i);
  ftmw_link_send(conn_of(&cli), FTMW_FRAME_DECIDE, FTMW_DECIDE_TEST, 11, 0, small,
                 sizeof(small));
  size_t big_len = 300000;
  uint8_t *big = pattern(big_len, 1);
  ftmw_out o = {0};
  out_data(&o, 3, FTMW_PID_MASTER(0), 9, 12, big, big_len);
  write1(conn_of(&cli), &o);
  RUN_UNTIL(srv.nframes == 2 && DONE(&o), BOUND_MS);
  cr_expect_eq(FAILED(&o), 0);
  cr_expect_eq(ACKED(&o), 0);
  for (int i = 0; i < 2; i++) {
    cr_expect_eq(srv.frames[i].c, srv.conn);
    cr_expect_eq(srv.frames[i].peer, &srv.peer_obj, "on_frame gets the bound peer");
  }
  /* ftmw_link_send: src is the sender's pid (set_self), dst the bound pid. */
  expect_frame(&srv.frames[0], FTMW_FRAME_DECIDE, FTMW_DECIDE_TEST, 11, 3,
               FTMW_PID_MASTER(0), small, sizeof(small));
  expect_frame(&srv.frames[1], FTMW_FRAME_DATA, 9, 12, 3, FTMW_PID_MASTER(0), big, big_len);

  /* Server to client. */
  uint8_t reply[100];
  for (size_t i = 0; i < sizeof(reply); i++)
    reply[i] = (uint8_t)(7 * i);
  ftmw_link_send(conn_of(&srv), FTMW_FRAME_DATA, 4, 21, 0, reply, sizeof(reply));
  uint8_t *big2 = pattern(big_len, 2);
  ftmw_out o2 = {0};
  out_data(&o2, FTMW_PID_MASTER(0), 3, 6, 22, big2, big_len);
  write1(conn_of(&srv), &o2);
  RUN_UNTIL(cli.nframes == 2 && DONE(&o2), BOUND_MS);
  cr_expect_eq(FAILED(&o2), 0);
  for (int i = 0; i < 2; i++) {
    cr_expect_eq(cli.frames[i].c, cli.conn);
    cr_expect_eq(cli.frames[i].peer, &cli.peer_obj, "the peer given to connect");
  }
  expect_frame(&cli.frames[0], FTMW_FRAME_DATA, 4, 21, FTMW_PID_MASTER(0), 3, reply,
               sizeof(reply));
  expect_frame(&cli.frames[1], FTMW_FRAME_DATA, 6, 22, FTMW_PID_MASTER(0), 3, big2, big_len);

  /* Several heartbeat periods: both links heartbeat, neither hands them
   * up, nobody is down. */
  run_for(10 * HEARTBEAT_MS);
  cr_expect_eq(srv.nframes, 2);
  cr_expect_eq(cli.nframes, 2);
  cr_expect_eq(srv.downs + cli.downs, 0);
  free(big);
  free(big2);
  teardown();
}

/* A HELLO without the job's secret never reaches the owner; the
 * connection is dropped, which the client sees as its peer closing. */
Test(link, wrong_secret_refused, .timeout = 30) {
  capture_stderr();
  int port = server_up();
  client_init(0xa5);
  client_connect(port);
  RUN_UNTIL(cli.downs == 1, BOUND_MS);
  cr_expect_eq(cli.down_why, FTMW_DOWN_CLOSED, "why %d: %s", cli.down_why, cli.down_text);
  cr_expect_eq(cli.down_peer, &cli.peer_obj);
  RUN_UNTIL(ftmw_q_empty(&srv.link.conns), BOUND_MS);
  run_for(5 * HEARTBEAT_MS);
  cr_expect_eq(srv.hellos, 0, "on_hello called for a wrong secret");
  cr_expect_eq(srv.nframes + srv.downs, 0);
  cr_expect(strstr(captured_text(), "wrong job secret") != NULL, "the reason is logged");
  teardown();
}

/* on_hello refuses: the link closes the connection, and a frame the
 * client sent right behind its HELLO is never handed up. */
Test(link, identity_refused, .timeout = 30) {
  capture_stderr();
  int port = server_up();
  srv.refuse = "no worker 3 in this job";
  client_init(0x5a);
  client_connect(port);
  /* Connected (HELLO written in that pass): the server has not read it. */
  RUN_UNTIL(connected(&cli) || cli.downs > 0, BOUND_MS);
  cr_assert_eq(cli.downs, 0, "down before even connected: %s", cli.down_text);
  uint8_t data[32] = {1, 2, 3};
  ftmw_link_send(conn_of(&cli), FTMW_FRAME_DATA, 1, 1, 0, data, sizeof(data));
  RUN_UNTIL(cli.downs == 1, BOUND_MS);
  cr_expect_eq(cli.down_why, FTMW_DOWN_CLOSED, "why %d: %s", cli.down_why, cli.down_text);
  RUN_UNTIL(ftmw_q_empty(&srv.link.conns), BOUND_MS);
  run_for(5 * HEARTBEAT_MS);
  cr_expect_eq(srv.hellos, 1);
  cr_expect_eq(srv.nframes, 0, "a frame from a refused client was handed up");
  cr_expect_eq(srv.downs, 0, "an unbound connection has no peer to be down");
  cr_expect(strstr(captured_text(), "no worker 3 in this job") != NULL,
            "the reject text is logged");
  teardown();
}

/* "HELLO goes first" (ftmw_link_connect): frames the owner sends or
 * writes at once, while the connection is still being made, follow the
 * HELLO on the wire. */
Test(link, frames_sent_while_connecting_follow_hello, .timeout = 30) {
  int port = server_up();
  client_init(0x5a);
  client_connect(port);
  uint8_t data[32] = {1, 2, 3};
  ftmw_link_send(conn_of(&cli), FTMW_FRAME_DATA, 1, 1, 0, data, sizeof(data));
  ftmw_out o = {0};
  out_data(&o, 3, FTMW_PID_MASTER(0), 1, 2, data, sizeof(data));
  write1(conn_of(&cli), &o);
  RUN_UNTIL((srv.nframes == 2 && DONE(&o)) || cli.downs > 0, BOUND_MS);
  cr_assert_eq(cli.downs, 0, "the server dropped the client: %s", cli.down_text);
  cr_expect_eq(srv.hellos, 1);
  expect_frame(&srv.frames[0], FTMW_FRAME_DATA, 1, 1, 3, FTMW_PID_MASTER(0), data,
               sizeof(data));
  expect_frame(&srv.frames[1], FTMW_FRAME_DATA, 1, 2, 3, FTMW_PID_MASTER(0), data,
               sizeof(data));
  cr_expect_eq(FAILED(&o), 0);
  teardown();
}

/* Bytes that are no frame, and a frame that is not a HELLO, from
 * strangers: each is dropped without an upcall, and the listener then
 * takes a proper client. */
Test(link, garbage_before_hello, .timeout = 30) {
  capture_stderr();
  int port = server_up();
  int g = connect_raw(port);
  char junk[128];
  memset(junk, 'x', sizeof(junk));
  memcpy(junk, "GET / HTTP/1.0\r\n\r\n", 18);
  cr_assert_eq(write(g, junk, sizeof(junk)), (ssize_t)sizeof(junk));
  RUN_UNTIL(gone(g), BOUND_MS);
  close(g);

  int d = connect_raw(port);
  uint8_t frame[FTMW_HDR_SIZE];
  ftmw_hdr h = {.type = FTMW_FRAME_DATA, .src = 3, .tag = 1, .seq = 1};
  ftmw_wire_encode(frame, &h);
  cr_assert_eq(write(d, frame, sizeof(frame)), (ssize_t)sizeof(frame));
  RUN_UNTIL(gone(d), BOUND_MS);
  close(d);
  RUN_UNTIL(ftmw_q_empty(&srv.link.conns), BOUND_MS);
  cr_expect_eq(srv.hellos + srv.nframes + srv.downs, 0);
  char *log = captured_text();
  cr_expect(strstr(log, "protocol error") != NULL, "garbage is logged as such");
  cr_expect(strstr(log, "expected HELLO") != NULL, "a frame before HELLO is logged as such");

  client_init(0x5a);
  client_connect(port);
  RUN_UNTIL(srv.hellos == 1 && srv.conn != NULL && connected(&cli), BOUND_MS);
  ftmw_link_send(conn_of(&cli), FTMW_FRAME_DATA, 2, 3, 0, NULL, 0);
  RUN_UNTIL(srv.nframes == 1, BOUND_MS);
  expect_frame(&srv.frames[0], FTMW_FRAME_DATA, 2, 3, 3, FTMW_PID_MASTER(0), NULL, 0);
  teardown();
}

/* ACKs are cumulative: one acknowledges every frame awaiting one up to
 * its seq; -1 (a protocol error for the owner) for an ACK below the
 * oldest awaiting, above the newest written, or with nothing awaiting. */
Test(link, ack_is_cumulative, .timeout = 30) {
  handshake();
  cli.ack_mode = 1;
  uint8_t data[64] = {9};
  ftmw_out a = {.want_ack = 1};
  out_data(&a, 3, FTMW_PID_MASTER(0), 1, 7, data, sizeof(data));
  write1(conn_of(&cli), &a);
  RUN_UNTIL(srv.nframes == 1 && DONE(&a), BOUND_MS);
  run_for(3 * HEARTBEAT_MS);
  cr_expect_eq(ACKED(&a), 0, "acked before any ACK");
  cr_expect_eq(FAILED(&a), 0);
  ftmw_link_send(conn_of(&srv), FTMW_FRAME_ACK, 0, 7, 0, NULL, 0);
  RUN_UNTIL(cli.acks == 1, BOUND_MS);
  cr_expect_eq(cli.ack_rc[0], 0);
  cr_expect_eq(ACKED(&a), 1);
  cr_expect_eq(FAILED(&a), 0);

  /* Three awaiting: an ACK of the middle one acknowledges the oldest too,
   * not the newest. */
  ftmw_out b = {.want_ack = 1}, c = {.want_ack = 1}, d = {.want_ack = 1};
  out_data(&b, 3, FTMW_PID_MASTER(0), 1, 8, data, sizeof(data));
  out_data(&c, 3, FTMW_PID_MASTER(0), 1, 9, data, sizeof(data));
  out_data(&d, 3, FTMW_PID_MASTER(0), 1, 11, data, sizeof(data));
  write1(conn_of(&cli), &b);
  write1(conn_of(&cli), &c);
  write1(conn_of(&cli), &d);
  RUN_UNTIL(srv.nframes == 4 && DONE(&b) && DONE(&c) && DONE(&d), BOUND_MS);
  ftmw_link_send(conn_of(&srv), FTMW_FRAME_ACK, 0, 12, 0, NULL, 0);
  RUN_UNTIL(cli.acks == 2, BOUND_MS);
  cr_expect_eq(cli.ack_rc[1], -1, "ACK 12 while 11 is the newest written");
  cr_expect_eq(ACKED(&b) + ACKED(&c) + ACKED(&d), 0);
  ftmw_link_send(conn_of(&srv), FTMW_FRAME_ACK, 0, 10, 0, NULL, 0);
  RUN_UNTIL(cli.acks == 3, BOUND_MS);
  cr_expect_eq(cli.ack_rc[2], 0);
  cr_expect_eq(ACKED(&b), 1);
  cr_expect_eq(ACKED(&c), 1);
  cr_expect_eq(ACKED(&d), 0, "11 is after the ACK's 10");
  ftmw_link_send(conn_of(&srv), FTMW_FRAME_ACK, 0, 9, 0, NULL, 0);
  RUN_UNTIL(cli.acks == 4, BOUND_MS);
  cr_expect_eq(cli.ack_rc[3], -1, "ACK 9 while 11 is the oldest awaiting");
  ftmw_link_send(conn_of(&srv), FTMW_FRAME_ACK, 0, 11, 0, NULL, 0);
  RUN_UNTIL(cli.acks == 5, BOUND_MS);
  cr_expect_eq(cli.ack_rc[4], 0);
  cr_expect_eq(ACKED(&d), 1);
  /* Nothing awaits: any ACK is unexpected. */
  ftmw_link_send(conn_of(&srv), FTMW_FRAME_ACK, 0, 11, 0, NULL, 0);
  RUN_UNTIL(cli.acks == 6, BOUND_MS);
  cr_expect_eq(cli.ack_rc[5], -1, "a second ACK of 11");
  cr_expect_eq(cli.downs + srv.downs, 0);
  teardown();
}

static void set_flags(ftmw_out *o, unsigned flags) {
  ftmw_hdr h;
  cr_assert_eq(ftmw_wire_decode(o->hdr, 1 << 20, &h), FTMW_WIRE_OK);
  h.flags = (uint16_t)flags;
  ftmw_wire_encode(o->hdr, &h);
}

static void set_lazy(ftmw_out *o) { set_flags(o, FTMW_FLAG_LAZY); }

/* A lazy ACK goes within about a millisecond when nothing else is written
 * to the peer, or ahead of the next frame written to it; one ACK may
 * acknowledge several frames. A frame that is not lazy is acknowledged at
 * once. */
/* Frames written in one call arrive whole and in order, with the ACK due
 * to the peer ahead of them, whether the socket takes them all at once
 * or not (300 kB frames among small ones: the rest goes through libuv,
 * frame by frame); more than FTMW_LINK_BATCH_MAX in one call too. */
Test(link, batch_in_order, .timeout = 30) {
  handshake();
  cli.ack_mode = 1;
  enum { N = 5, MANY = FTMW_LINK_BATCH_MAX + 6 };
  size_t lens[N] = {10, 300000, 0, 300000, 64};
  uint8_t *data[N];
  ftmw_out o[N], *outs[N];
  for (int k = 0; k < N; k++) {
    data[k] = pattern(lens[k] ? lens[k] : 1, (unsigned)k);
    o[k] = (ftmw_out){.want_ack = k % 2};
    out_data(&o[k], 3, FTMW_PID_MASTER(0), k, 100 + (uint64_t)k, data[k], lens[k]);
    outs[k] = &o[k];
  }
  ftmw_link_write(conn_of(&cli), outs, N);
  RUN_UNTIL(srv.nframes == N && DONE(&o[0]) && DONE(&o[1]) && DONE(&o[2]) &&
                DONE(&o[3]) && DONE(&o[4]),
            BOUND_MS);
  for (int k = 0; k < N; k++) {
    cr_expect_eq(FAILED(&o[k]), 0);
    expect_frame(&srv.frames[k], FTMW_FRAME_DATA, k, 100 + (uint64_t)k, 3,
                 FTMW_PID_MASTER(0), data[k], lens[k]);
  }
  ftmw_link_send(conn_of(&srv), FTMW_FRAME_ACK, 0, 103, 0, NULL, 0);
  RUN_UNTIL(cli.acks == 1, BOUND_MS);
  cr_expect_eq(cli.ack_rc[0], 0, "one ACK for the batch's frames");
  cr_expect(ACKED(&o[1]) && ACKED(&o[3]));

  static ftmw_out many[MANY];
  ftmw_out *mp[MANY];
  uint8_t byte = 0x5c;
  for (int k = 0; k < MANY; k++) {
    many[k] = (ftmw_out){0};
    out_data(&many[k], 3, FTMW_PID_MASTER(0), 1, 200 + (uint64_t)k, &byte, 1);
    mp[k] = &many[k];
  }
  free_frames(&srv);
  ftmw_link_write(conn_of(&cli), mp, MANY);
  RUN_UNTIL(srv.nframes >= MANY && DONE(&many[MANY - 1]), BOUND_MS);
  cr_expect_eq(srv.nframes, MANY);
  for (int k = 0; k < MANY && k < MAX_FRAMES; k++)
    cr_expect_eq(srv.frames[k].h.seq, 200 + (uint64_t)k, "frame %d out of order", k);
  for (int k = 0; k < MANY; k++)
    cr_expect_eq(FAILED(&many[k]) + !DONE(&many[k]), 0, "frame %d not written", k);
  for (int k = 0; k < N; k++)
    free(data[k]);
  teardown();
}

Test(link, lazy_ack, .timeout = 30) {
  handshake();
  cli.ack_mode = 1;
  srv.auto_ack = 1;
  uint8_t data[16] = {1};
  ftmw_out a = {.want_ack = 1};
  out_data(&a, 3, FTMW_PID_MASTER(0), 1, 1, data, sizeof(data));
  set_lazy(&a);
  write1(conn_of(&cli), &a);
  RUN_UNTIL(ACKED(&a), BOUND_MS); /* nothing else goes: the delay's */
  cr_expect_eq(cli.acks, 1);

  ftmw_out b = {.want_ack = 1}, c = {.want_ack = 1}, back = {0};
  out_data(&b, 3, FTMW_PID_MASTER(0), 1, 2, data, sizeof(data));
  out_data(&c, 3, FTMW_PID_MASTER(0), 1, 3, data, sizeof(data));
  set_lazy(&b);
  set_lazy(&c);
  write1(conn_of(&cli), &b);
  write1(conn_of(&cli), &c);
  RUN_UNTIL(srv.nframes == 3, BOUND_MS);
  out_data(&back, FTMW_PID_MASTER(0), 3, 1, 1, data, sizeof(data));
  write1(conn_of(&srv), &back);
  RUN_UNTIL(ACKED(&b) && ACKED(&c) && cli.nframes == 1, BOUND_MS);
  cr_expect_leq(cli.acks, 3, "one ACK or two for b and c");
  cr_expect_eq(cli.frames[0].acks_before, cli.acks,
               "the ACK was written ahead of the frame back");

  ftmw_out d = {.want_ack = 1};
  out_data(&d, 3, FTMW_PID_MASTER(0), 1, 4, data, sizeof(data));
  write1(conn_of(&cli), &d);
  RUN_UNTIL(ACKED(&d), BOUND_MS);
  for (int i = 0; i < cli.acks && i < MAX_FRAMES; i++)
    cr_expect_eq(cli.ack_rc[i], 0, "ACK %d acknowledges frames", i);
  cr_expect_eq(cli.downs + srv.downs, 0);
  teardown();
}

/* An eager frame's ACK (nobody waits for it) goes ahead of the next frame
 * written back, or at the receiver's next heartbeat tick when nothing is
 * written back; and at once when FTMW_LINK_ACK_FRAMES eager frames wait
 * for it, so that an eager sender's window never fills for want of an
 * ACK. Every ACK acknowledges frames that were written. */
Test(link, eager_ack, .timeout = 30) {
  handshake();
  cli.ack_mode = 1;
  srv.auto_ack = 1;
  uint8_t data[16] = {2};
  ftmw_out a = {.want_ack = 1}, back = {0};
  out_data(&a, 3, FTMW_PID_MASTER(0), 1, 1, data, sizeof(data));
  set_flags(&a, FTMW_FLAG_EAGER);
  write1(conn_of(&cli), &a);
  RUN_UNTIL(ACKED(&a), BOUND_MS); /* nothing written back: the tick's */
  cr_expect_eq(cli.acks, 1);

  ftmw_out b = {.want_ack = 1};
  out_data(&b, 3, FTMW_PID_MASTER(0), 1, 2, data, sizeof(data));
  set_flags(&b, FTMW_FLAG_EAGER);
  write1(conn_of(&cli), &b);
  RUN_UNTIL(srv.nframes == 2, BOUND_MS);
  out_data(&back, FTMW_PID_MASTER(0), 3, 1, 1, data, sizeof(data));
  write1(conn_of(&srv), &back);
  RUN_UNTIL(ACKED(&b) && cli.nframes == 1, BOUND_MS);
  cr_expect_eq(cli.frames[0].acks_before, cli.acks,
               "the ACK was written ahead of the frame back");

  enum { N = FTMW_LINK_ACK_FRAMES * 2 + 1 };
  static ftmw_out many[N];
  ftmw_out *mp[N];
  for (int k = 0; k < N; k++) {
    many[k] = (ftmw_out){.want_ack = 1};
    out_data(&many[k], 3, FTMW_PID_MASTER(0), 1, 3 + (uint64_t)k, data,
             sizeof(data));
    set_flags(&many[k], FTMW_FLAG_EAGER);
    mp[k] = &many[k];
  }
  int acks_before = cli.acks;
  for (int k = 0; k < N; k += FTMW_LINK_BATCH_MAX)
    ftmw_link_write(conn_of(&cli), mp + k,
                    N - k < FTMW_LINK_BATCH_MAX ? N - k : FTMW_LINK_BATCH_MAX);
  RUN_UNTIL(ACKED(&many[N - 1]), BOUND_MS);
  /* Whatever ACKs the ticks add, no ACK may leave more than
   * FTMW_LINK_ACK_FRAMES of them unacknowledged: two at least (one tick's
   * ACK alone would cover all of them if that rule were missing). */
  cr_expect_geq(cli.acks - acks_before, 2, "%d ACKs for %d eager frames",
                cli.acks - acks_before, N);
  for (int k = 0; k < N; k++)
    cr_expect_eq(ACKED(&many[k]), 1, "frame %d not acknowledged", k);
  for (int i = 0; i < cli.acks && i < MAX_FRAMES; i++)
    cr_expect_eq(cli.ack_rc[i], 0, "ACK %d acknowledges frames", i);
  cr_expect_eq(cli.downs + srv.downs, 0);
  teardown();
}

/* A peer that reads and never writes: heartbeats go out every heartbeat,
 * and the peer is declared silent once nothing came for the timeout, not
 * before. */
Test(link, silent_peer_declared_after_timeout, .timeout = 30) {
  uint64_t t0 = now_ms();
  client_to_raw(0, 0);
  cr_expect_eq(raw.hello.role, FTMW_ROLE_WORKER);
  cr_expect_eq(raw.hello.id, 3);
  uint8_t secret[FTMW_SECRET_SIZE];
  memset(secret, 0x5a, sizeof(secret));
  cr_expect_eq(memcmp(raw.hello.secret, secret, sizeof(secret)), 0, "HELLO carries the secret");
  RUN_UNTIL(cli.downs == 1, BOUND_MS);
  uint64_t took = now_ms() - t0;
  cr_expect_eq(cli.down_why, FTMW_DOWN_SILENT, "why %d: %s", cli.down_why, cli.down_text);
  cr_expect_eq(strncmp(cli.down_text, "silent for ", 11), 0, "text: %s", cli.down_text);
  cr_expect_null(strstr(cli.down_text, "process"), "a peer not on this host is not looked up: %s",
                 cli.down_text);
  cr_expect_geq(took, TIMEOUT_MS, "declared silent after %llu ms", (unsigned long long)took);
  /* Heartbeats went out every heartbeat until then (the timeout is ten
   * of them; at least two read, whatever the load). */
  cr_expect_geq(cli.raw_heartbeats_at_down, 2, "heartbeats read before the down: %d",
                cli.raw_heartbeats_at_down);
  cr_expect_eq(raw.datas, 0);
  teardown();
  raw_close();
}

/* The server closes the connection (its owner's ftmw_link_close): the
 * client's peer is down (CLOSED) and its frame awaiting an ACK fails. */
Test(link, peer_closed_fails_unacked, .timeout = 30) {
  handshake();
  uint8_t data[64] = {1};
  ftmw_out a = {.want_ack = 1};
  out_data(&a, 3, FTMW_PID_MASTER(0), 1, 1, data, sizeof(data));
  write1(conn_of(&cli), &a);
  RUN_UNTIL(srv.nframes == 1 && DONE(&a), BOUND_MS);
  cr_expect_eq(FAILED(&a), 0);
  ftmw_link_close(conn_of(&srv));
  srv.conn = NULL;
  RUN_UNTIL(cli.downs == 1, BOUND_MS);
  cr_expect_eq(cli.down_why, FTMW_DOWN_CLOSED, "why %d: %s", cli.down_why, cli.down_text);
  cr_expect_eq(cli.down_peer, &cli.peer_obj);
  cr_expect(strstr(cli.down_text, "connection lost") != NULL, "text: %s", cli.down_text);
  cr_expect_eq(FAILED(&a), 1);
  cr_expect_eq(ACKED(&a), 0);
  cr_expect_eq(srv.downs, 0, "closing its own connection is no down");
  teardown();
}

/* The peer's process dies (its socket reset): CLOSED, and the frame
 * awaiting an ACK fails. (The text says "reset" only when the read meets
 * the reset first: a heartbeat written meanwhile takes the error, and the
 * read then finds the end of the stream.) */
Test(link, peer_reset_fails_unacked, .timeout = 30) {
  client_to_raw(0, 1);
  uint8_t data[64] = {1};
  ftmw_out a = {.want_ack = 1};
  out_data(&a, 3, FTMW_PID_MASTER(0), 1, 1, data, sizeof(data));
  write1(conn_of(&cli), &a);
  RUN_UNTIL(raw.datas == 1 && DONE(&a), BOUND_MS);
  cr_expect_eq(FAILED(&a), 0);
  close_reset(raw.fd);
  raw.fd = -1;
  pump_hook = NULL;
  RUN_UNTIL(cli.downs == 1, BOUND_MS);
  cr_expect_eq(cli.down_why, FTMW_DOWN_CLOSED, "why %d: %s", cli.down_why, cli.down_text);
  cr_expect(strncmp(cli.down_text, "connection lost (", 17) == 0, "text: %s", cli.down_text);
  cr_expect_eq(FAILED(&a), 1);
  cr_expect_eq(ACKED(&a), 0);
  teardown();
  raw_close();
}

/* A large frame to a peer that reads slowly (but is alive: it
 * heartbeats): not done while the socket cannot take it, done once it
 * drained, the peer never declared down, the bytes intact. */
Test(link, slow_reader_gets_large_frame_whole, .timeout = 60) {
  client_to_raw(64 * 1024, 1); /* a small receive buffer: 8 MiB cannot fit */
  raw.read_max = 0;
  size_t len = 8u << 20;
  uint8_t *big = pattern(len, 3);
  ftmw_out o = {0};
  out_data(&o, 3, FTMW_PID_MASTER(0), 2, 40, big, len);
  write1(conn_of(&cli), &o);
  run_for(300); /* more than the timeout: heartbeats keep the peer alive */
  cr_expect_eq(DONE(&o), 0, "done before the peer read it");
  cr_expect_eq(cli.downs, 0, "why %d: %s", cli.down_why, cli.down_text);
  /* 256 KiB every 50 ms. */
  raw.read_max = 256 * 1024;
  raw.turn_ms = 50;
  RUN_UNTIL(raw.datas == 1, 30000);
  RUN_UNTIL(DONE(&o), BOUND_MS);
  cr_expect_eq(FAILED(&o), 0);
  cr_expect_eq(cli.downs, 0, "why %d: %s", cli.down_why, cli.down_text);
  cr_expect_eq(raw.data_hdr.seq, 40);
  cr_expect_eq(raw.data_hdr.tag, 2);
  cr_assert_eq(raw.data_hdr.len, len);
  cr_expect_eq(memcmp(raw.data, big, len), 0, "the frame arrived altered");
  free(big);
  teardown();
  raw_close();
}

/* A write to a peer whose socket was reset (the SIGPIPE path): SIGPIPE
 * keeps its default action, which would kill this process. The first
 * attempt (try_send, MSG_NOSIGNAL) meets the reset and the rest goes to
 * libuv's uv_write, whose writev may raise SIGPIPE: the loop module
 * blocks SIGPIPE on the thread while such writes are queued (and takes a
 * raised one back when a call leaves the loop, loop_leave, which this
 * test does not run). What is tested: the frame fails (done, failed), the
 * peer is reported down, and the process lives; a SIGPIPE left pending
 * (here, on Linux with libuv 1.44, one is: the path is taken) must be one
 * the guard holds blocked. */
Test(link, write_to_reset_peer_fails_without_sigpipe, .timeout = 30) {
  client_to_raw(0, 1);
  pump_hook = NULL;
  close_reset(raw.fd);
  raw.fd = -1;
  usleep(50 * 1000); /* the reset arrives; the loop has not read it */
  size_t len = 4u << 20;
  uint8_t *big = pattern(len, 4);
  ftmw_out o = {.want_ack = 1};
  out_data(&o, 3, FTMW_PID_MASTER(0), 2, 1, big, len);
  write1(conn_of(&cli), &o);
  RUN_UNTIL(DONE(&o), BOUND_MS);
  cr_expect_eq(FAILED(&o), 1, "a frame to a reset peer reported written");
  RUN_UNTIL(cli.downs == 1, BOUND_MS);
  cr_expect_eq(cli.down_why, FTMW_DOWN_CLOSED, "why %d: %s", cli.down_why, cli.down_text);
  sigset_t pending, blocked;
  cr_assert_eq(sigpending(&pending), 0);
  cr_assert_eq(pthread_sigmask(SIG_BLOCK, NULL, &blocked), 0);
  if (sigismember(&pending, SIGPIPE)) {
    cr_expect(sigismember(&blocked, SIGPIPE), "SIGPIPE pending and not blocked");
    struct timespec zero = {0, 0};
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigtimedwait(&pipe_only, NULL, &zero); /* as loop_leave does */
  }
  free(big);
  teardown();
  raw_close();
}

/* A frame that awaits no ACK, made as replica.c makes them (zero
 * initialised: its node never queued), fails cleanly when the write
 * fails: here it is still queued in libuv when the owner closes the
 * connection (ECANCELED). */
Test(link, failed_write_without_ack, .timeout = 30) {
  client_to_raw(64 * 1024, 1);
  raw.read_max = 0; /* reads nothing more */
  size_t len = 8u << 20;
  uint8_t *big = pattern(len, 7);
  ftmw_out o = {.seq = 1};
  out_data(&o, 3, FTMW_PID_MASTER(0), 2, 1, big, len);
  write1(conn_of(&cli), &o);
  run_for(50);
  cr_expect_eq(DONE(&o), 0, "8 MiB taken by a socket nobody reads");
  ftmw_link_close(conn_of(&cli));
  cli.conn = NULL;
  RUN_UNTIL(DONE(&o), BOUND_MS);
  cr_expect_eq(FAILED(&o), 1);
  cr_expect_eq(ACKED(&o), 0);
  free(big);
  teardown();
  raw_close();
}

/* The owner closes a connection with frames awaiting their ACK, one
 * written, one still queued in libuv: both fail at once and are done
 * (the queued one once libuv gives it back); a write on the closing
 * connection fails at once. */
Test(link, close_fails_unacked, .timeout = 30) {
  client_to_raw(64 * 1024, 1);
  raw.read_max = 0; /* reads nothing more */
  uint8_t small[64] = {5};
  size_t len = 8u << 20;
  uint8_t *big = pattern(len, 5);
  ftmw_out a = {.want_ack = 1}, b = {.want_ack = 1}, c = {0};
  out_data(&a, 3, FTMW_PID_MASTER(0), 1, 1, small, sizeof(small));
  out_data(&b, 3, FTMW_PID_MASTER(0), 1, 2, big, len);
  out_data(&c, 3, FTMW_PID_MASTER(0), 1, 3, small, sizeof(small));
  write1(conn_of(&cli), &a);
  write1(conn_of(&cli), &b);
  RUN_UNTIL(DONE(&a), BOUND_MS);
  run_for(50);
  cr_expect_eq(DONE(&b), 0, "8 MiB taken by a socket nobody reads");
  ftmw_conn *conn = conn_of(&cli);
  ftmw_link_close(conn);
  cli.conn = NULL;
  cr_expect_eq(ftmw_link_open(conn), 0);
  cr_expect_eq(ftmw_link_readable_by_peer(conn), 0);
  cr_expect_eq(FAILED(&a), 1);
  cr_expect_eq(FAILED(&b), 1);
  ftmw_link_close(conn); /* a no-op */
  write1(conn, &c);
  cr_expect_eq(DONE(&c), 1, "a write on a closing connection is done at once");
  cr_expect_eq(FAILED(&c), 1);
  RUN_UNTIL(DONE(&b), BOUND_MS);
  cr_expect_eq(ACKED(&a) + ACKED(&b), 0);
  cr_expect_eq(cli.downs, 0, "the owner's own close is no down");
  free(big);
  teardown();
  raw_close();
}

/* Nothing listens at the address (a bound socket that does not listen
 * holds the port): the connect fails later, as on_down(UNREACHED). */
Test(link, connect_refused_is_unreached, .timeout = 30) {
  int hold = socket(AF_INET, SOCK_STREAM, 0);
  cr_assert_geq(hold, 0);
  struct sockaddr_in a = loopback(0);
  cr_assert_eq(bind(hold, (struct sockaddr *)&a, sizeof(a)), 0);
  socklen_t alen = sizeof(a);
  cr_assert_eq(getsockname(hold, (struct sockaddr *)&a, &alen), 0);
  client_init(0x5a);
  client_connect(ntohs(a.sin_port));
  RUN_UNTIL(cli.downs == 1, BOUND_MS);
  cr_expect_eq(cli.down_why, FTMW_DOWN_UNREACHED, "why %d: %s", cli.down_why, cli.down_text);
  cr_expect_eq(cli.down_peer, &cli.peer_obj);
  cr_expect(strstr(cli.down_text, "cannot connect") != NULL, "text: %s", cli.down_text);
  close(hold);
  teardown();
}

/* ftmw_link_drain reads what waits on the socket now, without the loop:
 * the frame is handed up before the loop runs again. */
Test(link, drain_reads_ahead_of_the_loop, .timeout = 30) {
  handshake();
  uint8_t data[48];
  for (size_t i = 0; i < sizeof(data); i++)
    data[i] = (uint8_t)(3 * i + 1);
  ftmw_link_send(conn_of(&srv), FTMW_FRAME_DATA, 8, 31, 0, data, sizeof(data));
  /* The socket took it at once (nothing queued): wait for the bytes on
   * the client's socket, not running the loop. */
  struct pollfd p = {.fd = ftmw_link_fd(conn_of(&cli)), .events = POLLIN};
  cr_assert_geq(p.fd, 0);
  cr_assert_eq(poll(&p, 1, BOUND_MS), 1);
  cr_assert_eq(cli.nframes, 0);
  ftmw_link_drain(conn_of(&cli));
  cr_assert_eq(cli.nframes, 1, "drain handed nothing up");
  expect_frame(&cli.frames[0], FTMW_FRAME_DATA, 8, 31, FTMW_PID_MASTER(0), 3, data,
               sizeof(data));
  teardown();
}

/* A stranger that connects and says nothing is dropped, but only after
 * 10 timeouts (a joiner on a busy machine gets that long). */
Test(link, silent_stranger_dropped_after_ten_timeouts, .timeout = 30) {
  int port = server_up();
  uint64_t t0 = now_ms();
  int s = connect_raw(port);
  RUN_UNTIL(gone(s), 10 * TIMEOUT_MS + BOUND_MS);
  uint64_t took = now_ms() - t0;
  cr_expect_geq(took, 10 * TIMEOUT_MS, "dropped after %llu ms", (unsigned long long)took);
  close(s);
  RUN_UNTIL(ftmw_q_empty(&srv.link.conns), BOUND_MS);
  cr_expect_eq(srv.hellos + srv.nframes + srv.downs, 0);
  teardown();
}

/* A frame over cfg.max_message from a bound peer is a protocol error:
 * the receiver reports its peer down (REFUSED) and hands nothing up. */
Test(link, oversize_frame_refused, .timeout = 30) {
  ftmw_link_cfg cfg = cfg_with(0x5a);
  cfg.max_message = 1 << 20;
  side_init(&srv, &cfg, FTMW_ROLE_MASTER, 0, FTMW_PID_MASTER(0), "server-host");
  int port = 0;
  cr_assert_eq(ftmw_link_listen(&srv.link, "127.0.0.1", &port), 0);
  client_init(0x5a);
  client_connect(port);
  RUN_UNTIL(srv.conn != NULL, BOUND_MS);
  size_t len = (1 << 20) + 1;
  uint8_t *big = pattern(len, 6);
  ftmw_out o = {0};
  out_data(&o, 3, FTMW_PID_MASTER(0), 1, 1, big, len);
  write1(conn_of(&cli), &o);
  RUN_UNTIL(srv.downs == 1, BOUND_MS);
  cr_expect_eq(srv.down_why, FTMW_DOWN_REFUSED, "why %d: %s", srv.down_why, srv.down_text);
  cr_expect(strstr(srv.down_text, "protocol error") != NULL, "text: %s", srv.down_text);
  cr_expect_eq(srv.down_peer, &srv.peer_obj);
  cr_expect_eq(srv.nframes, 0);
  RUN_UNTIL(cli.downs == 1, BOUND_MS); /* the server's owner closed it */
  cr_expect_eq(cli.down_why, FTMW_DOWN_CLOSED);
  RUN_UNTIL(DONE(&o), BOUND_MS);
  free(big);
  teardown();
}

/* This process did not run its loop for three timeouts: nobody was
 * watched meanwhile, so that is no peer's silence. Both links report the
 * stall (long: peers may have declared this process failed), count it,
 * and declare nobody down. */
Test(link, own_stall_is_no_peer_silence, .timeout = 30) {
  handshake();
  usleep(3 * TIMEOUT_MS * 1000);
  run_for(5 * HEARTBEAT_MS);
  cr_expect_eq(srv.downs + cli.downs, 0, "server: %s; client: %s", srv.down_text,
               cli.down_text);
  side *both[] = {&srv, &cli};
  for (int i = 0; i < 2; i++) {
    side *s = both[i];
    cr_expect_geq(s->stalls, 1, "%s saw no stall", s->name);
    cr_expect_geq(s->stall_gap, 3 * TIMEOUT_MS - 2 * HEARTBEAT_MS, "%s: gap %llu", s->name,
                  (unsigned long long)s->stall_gap);
    cr_expect_eq(s->long_stall, 1);
    cr_expect_geq(ftmw_link_stalled_ms(&s->link), s->stall_gap);
  }
  teardown();
}

/* The same stall before the links' first ticks: the client connects and
 * the loop does not run for three timeouts. Nobody was watched then
 * either, yet today the first tick has no earlier tick to measure from
 * (link.c check_stall: l->last_tick != 0), credits nothing, and declares
 * the client's peer silent since the connection was opened. */
Test(link, stall_before_first_tick_is_no_peer_silence, .timeout = 30) {
  int port = server_up();
  client_init(0x5a);
  struct sockaddr_in a = loopback(port);
  cr_assert_eq(ftmw_link_connect(&cli.link, (const struct sockaddr *)&a, &cli.peer_obj,
                                 FTMW_PID_MASTER(0), NULL, &cli.conn),
               0);
  usleep(3 * TIMEOUT_MS * 1000); /* the loop has not run since the links' init */
  run_for(5 * HEARTBEAT_MS);
  cr_expect_eq(srv.downs + cli.downs, 0, "server: %s; client: %s", srv.down_text,
               cli.down_text);
  cr_expect_geq(cli.stalls, 1, "the client saw no stall");
  teardown();
}
