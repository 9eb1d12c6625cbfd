/* The libuv the library runs on in the simulator: the functions it calls,
 * defined in the executable, so that every copy of the library binds to
 * them before the real libuv (see sim.h). uv_sync.c has the threads,
 * locks, condition variables and the clock; here a loop is a list of
 * handles that a pass goes through in the order they were made. TCP
 * handles are the simulated network's socketpairs (net.c); the library
 * reads and writes their fds itself, as it does real sockets. Only what the library uses is here, with libuv's semantics as
 * the library relies on them. */
#define _GNU_SOURCE
#include "sim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#define MAX_LOOPS SIM_MAX_NODES * 2
#define BACKEND_FD_BASE 100000
#define READ_SUGGESTED 65536

/* --- loops and handles ------------------------------------------------------ */

typedef struct wreq {
  struct wreq *next;
  uv_write_t *req;
  uv_write_cb cb;
  uv_buf_t *bufs;
  unsigned nbufs, at; /* the buffer being written */
  size_t off;         /* into it */
  int error;
} wreq;

typedef struct sh {
  uv_handle_t *h;
  struct sloop *l;
  uv_handle_type type;
  int closing;
  uv_close_cb close_cb;
  /* timer */
  int timer_on;
  uint64_t due, repeat, order;
  uv_timer_cb tcb;
  /* async */
  int async_pending;
  uv_async_cb acb;
  /* tcp */
  int fd;
  uint32_t ip, peer_ip;
  int port, peer_port;
  int listening;
  uv_connection_cb conn_cb;
  sim_conn *conn;
  uv_connect_t *creq;
  uv_connect_cb ccb;
  int refused;
  int reading;
  uv_alloc_cb alloc;
  uv_read_cb rcb;
  wreq *wq, *wq_tail;
} sh;

typedef struct sloop {
  uv_loop_t *uv;
  sim_node *node;
  uint64_t time_ms;
  sh **h;
  int nh, cap;
  int index;
  int stop; /* uv_stop: the running uv_run returns after this pass */
} sloop;

static sloop loops[MAX_LOOPS];
static int nloops;
static uint64_t timer_order;

static sloop *L(const uv_loop_t *loop) { return loop->internal_fields; }
static sh *H(const void *h) { return ((const uv_handle_t *)h)->u.reserved[0]; }

int uv_loop_init(uv_loop_t *loop) {
  if (nloops == MAX_LOOPS)
    return UV_ENOMEM;
  memset(loop, 0, sizeof(*loop));
  sloop *l = &loops[nloops];
  memset(l, 0, sizeof(*l));
  l->index = nloops++;
  l->uv = loop;
  l->node = sim_node_self();
  l->time_ms = sim_now_ns / SIM_NS_PER_MS;
  loop->internal_fields = l;
  return 0;
}

int uv_loop_close(uv_loop_t *loop) {
  sloop *l = L(loop);
  if (l->nh > 0)
    return UV_EBUSY;
  free(l->h);
  l->h = NULL;
  return 0;
}

int uv_backend_fd(const uv_loop_t *loop) {
  return BACKEND_FD_BASE + L(loop)->index;
}

void uv_update_time(uv_loop_t *loop) {
  L(loop)->time_ms = sim_now_ns / SIM_NS_PER_MS;
}

uint64_t uv_now(const uv_loop_t *loop) { return L(loop)->time_ms; }

static sh *add(uv_loop_t *loop, void *handle, uv_handle_type type) {
  sloop *l = L(loop);
  sh *r = calloc(1, sizeof(*r));
  if (r == NULL)
    abort();
  uv_handle_t *h = handle;
  void *data = h->data; /* libuv leaves data alone */
  memset(h, 0, type == UV_TCP ? sizeof(uv_tcp_t)
               : type == UV_TIMER ? sizeof(uv_timer_t)
                                  : sizeof(uv_async_t));
  h->data = data;
  h->loop = loop;
  h->type = type;
  h->u.reserved[0] = r;
  r->h = h;
  r->l = l;
  r->type = type;
  r->fd = -1;
  if (l->nh == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->h = realloc(l->h, (size_t)l->cap * sizeof(*l->h));
    if (l->h == NULL)
      abort();
  }
  l->h[l->nh++] = r;
  return r;
}

static void drop(sh *r) {
  sloop *l = r->l;
  for (int i = 0; i < l->nh; i++)
    if (l->h[i] == r) {
      memmove(l->h + i, l->h + i + 1, (size_t)(l->nh - i - 1) * sizeof(*l->h));
      l->nh--;
      break;
    }
  free(r);
}

static int active(const sh *r) {
  if (r->closing)
    return 0;
  switch (r->type) {
  case UV_ASYNC:
    return 1;
  case UV_TIMER:
    return r->timer_on;
  case UV_TCP:
    return r->listening || r->reading || r->creq != NULL || r->wq != NULL;
  default:
    return 0;
  }
}

int uv_is_active(const uv_handle_t *h) { return active(H(h)); }
int uv_is_closing(const uv_handle_t *h) { return H(h)->closing; }

static int alive(const sloop *l) {
  for (int i = 0; i < l->nh; i++)
    if (active(l->h[i]) || l->h[i]->closing)
      return 1;
  return 0;
}

int uv_async_init(uv_loop_t *loop, uv_async_t *a, uv_async_cb cb) {
  sh *r = add(loop, a, UV_ASYNC);
  r->acb = cb;
  return 0;
}

int uv_async_send(uv_async_t *a) {
  H(a)->async_pending = 1;
  return 0;
}

int uv_timer_init(uv_loop_t *loop, uv_timer_t *t) {
  add(loop, t, UV_TIMER);
  return 0;
}

int uv_timer_start(uv_timer_t *t, uv_timer_cb cb, uint64_t timeout,
                   uint64_t repeat) {
  sh *r = H(t);
  if (r->closing)
    return UV_EINVAL;
  r->tcb = cb;
  r->due = r->l->time_ms + timeout;
  r->repeat = repeat;
  r->order = timer_order++;
  r->timer_on = 1;
  return 0;
}

int uv_timer_stop(uv_timer_t *t) {
  H(t)->timer_on = 0;
  return 0;
}

int uv_timer_again(uv_timer_t *t) {
  sh *r = H(t);
  if (r->repeat)
    uv_timer_start(t, r->tcb, r->repeat, r->repeat);
  return 0;
}

int uv_tcp_init(uv_loop_t *loop, uv_tcp_t *t) {
  add(loop, t, UV_TCP);
  return 0;
}

int uv_tcp_nodelay(uv_tcp_t *t, int on) {
  (void)t, (void)on;
  return 0;
}

int uv_tcp_keepalive(uv_tcp_t *t, int on, unsigned delay) {
  (void)t, (void)on, (void)delay;
  return 0;
}

int uv_fileno(const uv_handle_t *h, uv_os_fd_t *fd) {
  sh *r = H(h);
  if (r->type != UV_TCP || r->fd < 0 || r->closing)
    return UV_EBADF;
  *fd = r->fd;
  return 0;
}

int uv_tcp_bind(uv_tcp_t *t, const struct sockaddr *addr, unsigned flags) {
  (void)flags;
  const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
  sh *r = H(t);
  r->ip = ntohl(in->sin_addr.s_addr);
  r->port = ntohs(in->sin_port);
  if (r->ip != r->l->node->ip)
    return UV_EADDRNOTAVAIL;
  return 0;
}

int uv_listen(uv_stream_t *s, int backlog, uv_connection_cb cb) {
  (void)backlog;
  sh *r = H(s);
  int rc = sim_listen(r->l->node, r->ip, &r->port, r);
  if (rc != 0)
    return rc == -EADDRINUSE ? UV_EADDRINUSE : UV_ENOBUFS;
  r->listening = 1;
  r->conn_cb = cb;
  return 0;
}

static void fill_addr(struct sockaddr *name, int *len, uint32_t ip, int port) {
  struct sockaddr_in in;
  memset(&in, 0, sizeof(in));
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(ip);
  in.sin_port = htons((uint16_t)port);
  int n = *len < (int)sizeof(in) ? *len : (int)sizeof(in);
  memcpy(name, &in, (size_t)n);
  *len = (int)sizeof(in);
}

int uv_tcp_getsockname(const uv_tcp_t *t, struct sockaddr *name, int *len) {
  sh *r = H(t);
  fill_addr(name, len, r->ip ? r->ip : r->l->node->ip, r->port);
  return 0;
}

int uv_tcp_getpeername(const uv_tcp_t *t, struct sockaddr *name, int *len) {
  sh *r = H(t);
  if (r->fd < 0)
    return UV_ENOTCONN;
  fill_addr(name, len, r->peer_ip, r->peer_port);
  return 0;
}

int uv_accept(uv_stream_t *server, uv_stream_t *client) {
  sh *s = H(server), *c = H(client);
  uint32_t ip;
  int port;
  int fd = sim_accept(s, &ip, &port);
  if (fd < 0)
    return UV_EAGAIN;
  c->fd = fd;
  c->peer_ip = ip;
  c->peer_port = port;
  c->ip = s->ip;
  c->port = s->port;
  return 0;
}

int uv_tcp_connect(uv_connect_t *req, uv_tcp_t *t, const struct sockaddr *addr,
                   uv_connect_cb cb) {
  const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
  sh *r = H(t);
  if (r->creq || r->fd >= 0)
    return UV_EALREADY;
  req->handle = (uv_stream_t *)t; /* req->data is the caller's */
  r->creq = req;
  r->ccb = cb;
  r->peer_ip = ntohl(in->sin_addr.s_addr);
  r->peer_port = ntohs(in->sin_port);
  r->ip = r->l->node->ip;
  int fd;
  if (sim_connect(r->l->node, r->peer_ip, r->peer_port, &fd, &r->conn) != 0)
    r->refused = 1; /* reported at the next pass, as libuv does */
  else
    r->fd = fd;
  return 0;
}

int uv_read_start(uv_stream_t *s, uv_alloc_cb alloc, uv_read_cb cb) {
  sh *r = H(s);
  if (r->closing)
    return UV_EINVAL;
  r->alloc = alloc;
  r->rcb = cb;
  r->reading = 1;
  return 0;
}

int uv_read_stop(uv_stream_t *s) {
  H(s)->reading = 0;
  return 0;
}

static size_t queued_bytes(const wreq *w) {
  size_t n = 0;
  for (unsigned i = w->at; i < w->nbufs; i++)
    n += w->bufs[i].len - (i == w->at ? w->off : 0);
  return n;
}

/* Writes what the socket takes of w: 1 when all of it is written or it
 * failed, 0 when the rest must wait. */
static int write_some(sh *r, wreq *w) {
  while (w->at < w->nbufs) {
    uv_buf_t *b = &w->bufs[w->at];
    if (w->off == b->len) {
      w->at++;
      w->off = 0;
      continue;
    }
    ssize_t n = send(r->fd, b->base + w->off, b->len - w->off,
                     MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return 0;
    if (n < 0) {
      w->error = uv_translate_sys_error(errno);
      return 1;
    }
    ((uv_stream_t *)r->h)->write_queue_size -= (size_t)n;
    w->off += (size_t)n;
  }
  return 1;
}

int uv_write(uv_write_t *req, uv_stream_t *s, const uv_buf_t bufs[],
             unsigned int nbufs, uv_write_cb cb) {
  sh *r = H(s);
  if (r->closing || r->fd < 0)
    return UV_EBADF;
  wreq *w = calloc(1, sizeof(*w));
  if (w == NULL)
    return UV_ENOMEM;
  w->bufs = malloc(nbufs * sizeof(*bufs));
  if (w->bufs == NULL) {
    free(w);
    return UV_ENOMEM;
  }
  memcpy(w->bufs, bufs, nbufs * sizeof(*bufs));
  w->nbufs = nbufs;
  w->req = req;
  w->cb = cb;
  req->handle = s;
  s->write_queue_size += queued_bytes(w);
  if (r->wq_tail)
    r->wq_tail->next = w;
  else
    r->wq = w;
  r->wq_tail = w;
  return 0;
}

/* The first write request of r is over: its callback, with status. */
static void write_over(sh *r, int status) {
  wreq *w = r->wq;
  r->wq = w->next;
  if (r->wq == NULL)
    r->wq_tail = NULL;
  ((uv_stream_t *)r->h)->write_queue_size -= queued_bytes(w);
  uv_write_t *req = w->req;
  uv_write_cb cb = w->cb;
  free(w->bufs);
  free(w);
  if (cb)
    cb(req, status);
}

void uv_close(uv_handle_t *h, uv_close_cb cb) {
  sh *r = H(h);
  if (r->closing)
    return;
  r->closing = 1;
  r->close_cb = cb;
  r->timer_on = 0;
  if (r->type == UV_TCP) {
    if (r->listening)
      sim_unlisten(r);
    r->listening = r->reading = 0;
    if (r->fd >= 0) {
      sim_net_wrote(r->fd); /* its EOF */
      close(r->fd);
    }
    r->fd = -1;
  }
}

/* --- a pass ------------------------------------------------------------------ */

static int fd_ready(int fd, short events) {
  if (!(events & POLLOUT) && !sim_net_maybe_readable(fd))
    return 0; /* nothing delivered since it was found empty */
  struct pollfd p = {.fd = fd, .events = events};
  int ready = sim_real_poll(&p, 1, 0) > 0 &&
              (p.revents & (events | POLLHUP | POLLERR));
  if (!ready && !(events & POLLOUT))
    sim_net_not_readable(fd);
  return ready;
}

static sh *due_timer(sloop *l) {
  sh *best = NULL;
  for (int i = 0; i < l->nh; i++) {
    sh *r = l->h[i];
    if (r->type == UV_TIMER && r->timer_on && !r->closing &&
        r->due <= l->time_ms &&
        (best == NULL || r->due < best->due ||
         (r->due == best->due && r->order < best->order)))
      best = r;
  }
  return best;
}

/* What a pass would do for r now. */
static int has_event(sh *r) {
  if (r->closing)
    return 1;
  switch (r->type) {
  case UV_ASYNC:
    return r->async_pending;
  case UV_TCP:
    if (r->creq)
      return r->refused || sim_connect_done(r->conn) != 0;
    if (r->listening && sim_accept_pending(r))
      return 1;
    if (r->wq && r->fd >= 0 && fd_ready(r->fd, POLLOUT))
      return 1;
    return r->reading && r->fd >= 0 && fd_ready(r->fd, POLLIN | POLLRDHUP);
  default:
    return 0;
  }
}

static int has_work(void *arg) {
  sloop *l = arg;
  uint64_t now_ms = sim_now_ns / SIM_NS_PER_MS;
  for (int i = 0; i < l->nh; i++) {
    sh *r = l->h[i];
    if (r->type == UV_TIMER ? (r->timer_on && r->due <= now_ms) : has_event(r))
      return 1;
  }
  return 0;
}

/* When the next timer of l falls due, in virtual ns (0: none). */
static uint64_t next_due_ns(const sloop *l) {
  uint64_t next = 0;
  for (int i = 0; i < l->nh; i++) {
    const sh *r = l->h[i];
    if (r->type == UV_TIMER && r->timer_on && !r->closing &&
        (next == 0 || r->due < next))
      next = r->due;
  }
  return next ? next * SIM_NS_PER_MS : 0;
}

int uv_backend_timeout(const uv_loop_t *loop) {
  sloop *l = L(loop);
  for (int i = 0; i < l->nh; i++)
    if (l->h[i]->closing || (l->h[i]->type == UV_ASYNC && l->h[i]->async_pending))
      return 0;
  uint64_t next = next_due_ns(l);
  if (next == 0)
    return -1;
  uint64_t due_ms = next / SIM_NS_PER_MS;
  return due_ms <= l->time_ms ? 0 : (int)(due_ms - l->time_ms);
}

static void read_once(sh *r) {
  uv_buf_t buf = uv_buf_init(NULL, 0);
  r->alloc(r->h, READ_SUGGESTED, &buf);
  if (buf.base == NULL || buf.len == 0) {
    r->rcb((uv_stream_t *)r->h, UV_ENOBUFS, &buf);
    return;
  }
  ssize_t n;
  do
    n = recv(r->fd, buf.base, buf.len, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    n = 0;
  else if (n == 0)
    n = UV_EOF;
  else if (n < 0)
    n = uv_translate_sys_error(errno);
  r->rcb((uv_stream_t *)r->h, n, &buf);
}

/* One pass over l: due timers, then each handle's event, then the closed
 * handles' callbacks. Returns how many callbacks ran. */
static int pass(sloop *l) {
  int did = 0;
  l->time_ms = sim_now_ns / SIM_NS_PER_MS;
  sh *t;
  while ((t = due_timer(l)) != NULL) {
    if (t->repeat)
      t->due = l->time_ms + t->repeat, t->order = timer_order++;
    else
      t->timer_on = 0;
    t->tcb((uv_timer_t *)t->h);
    did++;
  }
  /* Handles made by the callbacks wait for the next pass; ones closed
   * by them are skipped. */
  int n = l->nh;
  sh **snap = malloc((size_t)(n ? n : 1) * sizeof(*snap));
  if (snap == NULL)
    abort();
  memcpy(snap, l->h, (size_t)n * sizeof(*snap));
  for (int i = 0; i < n; i++) {
    sh *r = snap[i];
    if (r->closing)
      continue;
    if (r->type == UV_ASYNC && r->async_pending) {
      r->async_pending = 0;
      r->acb((uv_async_t *)r->h);
      did++;
      continue;
    }
    if (r->type != UV_TCP)
      continue;
    if (r->creq && (r->refused || sim_connect_done(r->conn) != 0)) {
      int status = r->refused || sim_connect_done(r->conn) < 0 ? UV_ECONNREFUSED : 0;
      uv_connect_t *req = r->creq;
      r->creq = NULL;
      if (status != 0 && r->fd >= 0) {
        sim_net_wrote(r->fd);
        close(r->fd);
        r->fd = -1;
      }
      r->ccb(req, status);
      did++;
      continue;
    }
    if (r->listening) {
      for (int k = sim_accept_pending(r); k > 0 && !r->closing; k--) {
        r->conn_cb((uv_stream_t *)r->h, 0);
        did++;
      }
      continue;
    }
    while (r->wq && !r->closing && r->fd >= 0 && write_some(r, r->wq)) {
      write_over(r, r->wq->error);
      did++;
    }
    if (!r->closing && r->reading && r->fd >= 0 &&
        fd_ready(r->fd, POLLIN | POLLRDHUP)) {
      read_once(r);
      did++;
    }
  }
  free(snap);
  /* Closed handles: their writes are cancelled, then their callback. */
  for (int i = 0; i < l->nh;) {
    sh *r = l->h[i];
    if (!r->closing) {
      i++;
      continue;
    }
    while (r->wq)
      write_over(r, UV_ECANCELED);
    if (r->creq) {
      uv_connect_t *req = r->creq;
      r->creq = NULL;
      r->ccb(req, UV_ECANCELED);
    }
    uv_handle_t *h = r->h;
    uv_close_cb cb = r->close_cb;
    drop(r); /* before the callback, which may free the handle */
    if (cb)
      cb(h);
    did++;
    i = 0; /* the list changed */
  }
  return did;
}

/* libuv's uv_run(UV_RUN_ONCE) runs the timers due, then polls until an
 * event (pending callbacks aside): a callback that ends the caller's wait
 * must uv_stop. Here a pass does the timers and the I/O at once, and one
 * that did anything returns without blocking, so a missing uv_stop goes
 * unseen (tests/test_loop.c checks it against the real libuv). */
void uv_stop(uv_loop_t *loop) { L(loop)->stop = 1; }

int uv_run(uv_loop_t *loop, uv_run_mode mode) {
  sloop *l = L(loop);
  for (;;) {
    int did = pass(l);
    if (l->stop)
      break;
    if (mode == UV_RUN_NOWAIT)
      break;
    if (!alive(l))
      break;
    if (did == 0) {
      sim_block(has_work, l, next_due_ns(l));
      pass(l);
    }
    if (mode == UV_RUN_ONCE)
      break;
  }
  l->stop = 0; /* as libuv: a stop ends this run only */
  return alive(l);
}

/* --- the I/O thread's poll on the loop's fd --------------------------------- */

/* poll(2) for fds a node's coroutine waits on: a loop's backend fd is
 * ready when its loop has work, a socket when poll says so; a timeout
 * blocks the coroutine, not the thread. */
typedef struct {
  struct pollfd *fds;
  nfds_t n;
  int ready;
} poll_wait;

static int poll_now(poll_wait *p) {
  int ready = 0;
  for (nfds_t i = 0; i < p->n; i++) {
    struct pollfd *f = &p->fds[i];
    f->revents = 0;
    if (f->fd >= BACKEND_FD_BASE && f->fd < BACKEND_FD_BASE + MAX_LOOPS) {
      if (has_work(&loops[f->fd - BACKEND_FD_BASE]))
        f->revents = POLLIN;
    } else if (f->fd >= 0) {
      struct pollfd one = {.fd = f->fd, .events = f->events};
      if (sim_real_poll(&one, 1, 0) > 0)
        f->revents = one.revents;
    }
    ready += f->revents != 0;
  }
  p->ready = ready;
  return ready;
}

static int poll_ready(void *arg) { return poll_now(arg) > 0; }

int sim_poll(struct pollfd *fds, nfds_t n, int timeout) {
  poll_wait p = {fds, n, 0};
  if (poll_now(&p) > 0 || timeout == 0) {
    sim_yield();
    return poll_now(&p);
  }
  uint64_t deadline =
      timeout < 0 ? 0 : sim_now_ns + (uint64_t)timeout * SIM_NS_PER_MS;
  sim_block(poll_ready, &p, deadline);
  return poll_now(&p);
}
