/* The simulated network (see sim.h): each connection is two socketpairs,
 * one per node, with the simulator in the middle. What a node writes is
 * read here at once and delivered to the other node after a drawn delay,
 * in order (a FIFO per direction, as TCP). A node that ends has its ends
 * closed, which the other side sees after what was in flight, or, when it
 * was lost silently (a host without power), never: what it wrote before
 * still arrives, and then nothing. A partition holds what crosses it (as
 * TCP would, retransmitting) until it heals, when what it held goes on in
 * order (a partition held for good is one that never heals). */
#define _GNU_SOURCE
#include "sim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS 256
#define MAX_LISTENERS 32
#define READ_MAX 65536

uint64_t sim_net_min_ns = 20000, sim_net_max_ns = 200000;

typedef struct chunk {
  struct chunk *next;
  uint64_t at;
  size_t len, off;
  int eof;
  uint8_t data[];
} chunk;

typedef struct {
  sim_node *from, *to;
  int src, dst; /* the simulator's ends: read from src, write to dst */
  int to_fd;    /* the receiving node's end, which dst feeds */
  chunk *head, *tail;
  uint64_t last_at;
  int eof_read, done;
  int dirty; /* its node wrote to (or closed) its end since the last read */
} dir;

/* What the simulator knows of the nodes' fds without asking the kernel:
 * which direction a node's writes feed (out_of), and whether the fd may
 * have something to read (maybe): only the simulator's deliveries and
 * closes make it readable. */
#define FD_MAX 65536
static dir *out_of[FD_MAX];
static uint8_t maybe[FD_MAX];
static int any_dirty;

void sim_net_wrote(int fd) {
  if (fd >= 0 && fd < FD_MAX && out_of[fd]) {
    out_of[fd]->dirty = 1;
    any_dirty = 1;
  }
}

int sim_net_maybe_readable(int fd) {
  return fd < 0 || fd >= FD_MAX || maybe[fd];
}

void sim_net_not_readable(int fd) {
  if (fd >= 0 && fd < FD_MAX)
    maybe[fd] = 0;
}

static void may_read(int fd) {
  if (fd >= 0 && fd < FD_MAX)
    maybe[fd] = 1;
}

struct sim_conn {
  int index;
  sim_node *a, *b;
  int a_fd, b_fd;
  void *listener;
  uint64_t ready_at;
  int state; /* CONNECTING, OPEN, REFUSED */
  dir d[2]; /* 0: a to b, 1: b to a */
  uint32_t a_ip;
  int a_port;
};

enum { CONNECTING, OPEN, REFUSED };

typedef struct {
  void *owner;
  sim_node *node;
  uint32_t ip;
  int port;
  sim_conn *pending[MAX_CONNS];
  int npending;
} listener;

static sim_conn conns[MAX_CONNS];
static int nconns;
static listener listeners[MAX_LISTENERS];
static int nlisteners;
static int next_port = 40000;
static int in_group[SIM_MAX_NODES];
static int parted;

static int cut(const dir *d) {
  return parted && in_group[d->from->id] != in_group[d->to->id];
}

static uint64_t delay(void) {
  return sim_net_min_ns + sim_below(sim_net_max_ns - sim_net_min_ns + 1);
}

static int pair(int *node_end, int *sim_end) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
    perror("ftmw-sim: socketpair");
    abort();
  }
  *node_end = sv[0];
  *sim_end = sv[1];
  if (sv[0] >= FD_MAX || sv[1] >= FD_MAX) {
    fprintf(stderr, "ftmw-sim: fd %d past %d\n", sv[1], FD_MAX);
    abort();
  }
  maybe[sv[0]] = 1;
  out_of[sv[0]] = out_of[sv[1]] = NULL;
  return 0;
}

static listener *find_listener(uint32_t ip, int port) {
  for (int i = 0; i < nlisteners; i++)
    if (listeners[i].owner && listeners[i].ip == ip && listeners[i].port == port)
      return &listeners[i];
  return NULL;
}

int sim_listen(sim_node *n, uint32_t ip, int *port, void *owner) {
  if (*port == 0)
    *port = next_port++;
  if (find_listener(ip, *port))
    return -EADDRINUSE;
  if (nlisteners == MAX_LISTENERS)
    return -ENOBUFS;
  listener *l = &listeners[nlisteners++];
  memset(l, 0, sizeof(*l));
  l->owner = owner;
  l->node = n;
  l->ip = ip;
  l->port = *port;
  return 0;
}

static listener *listener_of(void *owner) {
  for (int i = 0; i < nlisteners; i++)
    if (listeners[i].owner == owner)
      return &listeners[i];
  return NULL;
}

void sim_unlisten(void *owner) {
  listener *l = listener_of(owner);
  if (l == NULL)
    return;
  for (int i = 0; i < l->npending; i++)
    close(l->pending[i]->b_fd); /* never accepted: the connector sees EOF */
  l->owner = NULL;
}

int sim_connect(sim_node *a, uint32_t ip, int port, int *fd, sim_conn **out) {
  listener *l = find_listener(ip, port);
  if (l == NULL || !l->node->alive)
    return -ECONNREFUSED;
  if (nconns == MAX_CONNS) {
    fprintf(stderr, "ftmw-sim: more than %d connections\n", MAX_CONNS);
    abort();
  }
  sim_conn *c = &conns[nconns];
  memset(c, 0, sizeof(*c));
  c->index = nconns++;
  c->a = a;
  c->b = l->node;
  c->listener = l->owner;
  c->state = CONNECTING;
  c->ready_at = sim_now_ns + delay();
  c->a_ip = a->ip;
  c->a_port = next_port++;
  int a_sim, b_sim;
  pair(&c->a_fd, &a_sim);
  pair(&c->b_fd, &b_sim);
  c->d[0] = (dir){.from = a, .to = c->b, .src = a_sim, .dst = b_sim,
                  .to_fd = c->b_fd, .dirty = 1};
  c->d[1] = (dir){.from = c->b, .to = a, .src = b_sim, .dst = a_sim,
                  .to_fd = c->a_fd, .dirty = 1};
  out_of[c->a_fd] = &c->d[0];
  out_of[c->b_fd] = &c->d[1];
  any_dirty = 1;
  *fd = c->a_fd;
  *out = c;
  sim_log("connect %d -> %d (conn %d)", a->id, c->b->id, c->index);
  return 0;
}

int sim_connect_done(const sim_conn *c) {
  return c->state == OPEN ? 1 : c->state == REFUSED ? -1 : 0;
}

int sim_accept_pending(void *owner) {
  listener *l = listener_of(owner);
  return l ? l->npending : 0;
}

int sim_accept(void *owner, uint32_t *ip, int *port) {
  listener *l = listener_of(owner);
  if (l == NULL || l->npending == 0)
    return -1;
  sim_conn *c = l->pending[0];
  memmove(l->pending, l->pending + 1, (size_t)(--l->npending) * sizeof(c));
  *ip = c->a_ip;
  *port = c->a_port;
  return c->b_fd;
}

/* --- moving bytes ---------------------------------------------------------- */

static void push(dir *d, const void *data, size_t len, int eof) {
  chunk *k = malloc(sizeof(*k) + len);
  if (k == NULL)
    abort();
  k->next = NULL;
  k->len = len;
  k->off = 0;
  k->eof = eof;
  memcpy(k->data, data, len);
  uint64_t at = sim_now_ns + delay();
  k->at = at > d->last_at ? at : d->last_at;
  d->last_at = k->at;
  if (d->tail)
    d->tail->next = k;
  else
    d->head = k;
  d->tail = k;
}

static void drop_all(dir *d) {
  while (d->head) {
    chunk *k = d->head;
    d->head = k->next;
    free(k);
  }
  d->tail = NULL;
}

/* The direction is over: the sim's ends go (the receiver reads what it
 * has, then EOF; its writes fail). */
static void finish(dir *d) {
  if (d->done)
    return;
  d->done = 1;
  drop_all(d);
  if (d->dst >= 0)
    close(d->dst);
  d->dst = -1;
  may_read(d->to_fd); /* EOF */
}

static void read_dir(dir *d) {
  if (d->eof_read || d->src < 0 || !d->dirty)
    return;
  d->dirty = 0;
  static uint8_t buf[READ_MAX];
  for (;;) {
    ssize_t n = recv(d->src, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      if (!d->done) /* a crashed process's last writes still go */
        push(d, buf, (size_t)n, 0);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return;
    d->eof_read = 1; /* EOF, or the node's end is gone */
    if (!d->done)
      push(d, NULL, 0, 1);
    return;
  }
}

static void deliver_dir(dir *d) {
  while (d->head && d->head->at <= sim_now_ns && !cut(d)) {
    chunk *k = d->head;
    if (!d->to->alive && d->to->silent) {
      drop_all(d); /* into the black hole, which answers nothing */
      return;
    }
    if (k->eof || !d->to->alive) {
      /* The sender closed (or crashed), or the receiver is gone: the
       * connection is over both ways. */
      finish(d);
      return;
    }
    ssize_t n = send(d->dst, k->data + k->off, k->len - k->off,
                     MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
      return; /* the receiver's buffer is full: later */
    if (n < 0) {
      finish(d);
      return;
    }
    may_read(d->to_fd);
    for (ssize_t i = 0; i < n; i++) /* the run's hash covers every byte */
      sim_log_hash = (sim_log_hash ^ k->data[k->off + (size_t)i]) * 1099511628211ull;
    k->off += (size_t)n;
    if (k->off < k->len)
      return;
    d->head = k->next;
    if (d->head == NULL)
      d->tail = NULL;
    free(k);
  }
}

void sim_net_step(void) {
  int dirty = any_dirty;
  any_dirty = 0;
  for (int i = 0; i < nconns; i++) {
    sim_conn *c = &conns[i];
    if (c->state == CONNECTING && sim_now_ns >= c->ready_at &&
        !(parted && in_group[c->a->id] != in_group[c->b->id])) {
      listener *l = listener_of(c->listener);
      if (l == NULL || !c->b->alive || l->npending == MAX_CONNS) {
        c->state = REFUSED;
        finish(&c->d[0]);
        finish(&c->d[1]);
        close(c->b_fd);
      } else {
        c->state = OPEN;
        l->pending[l->npending++] = c;
        sim_log("accept %d <- %d (conn %d)", c->b->id, c->a->id, c->index);
      }
    }
    if (c->state == REFUSED)
      continue;
    for (int k = 0; k < 2; k++) {
      if (dirty)
        read_dir(&c->d[k]);
      if (c->state == OPEN)
        deliver_dir(&c->d[k]);
      /* One way over: the other way too (a closed socket takes nothing). */
      if (c->d[k].done && !c->d[k].from->silent && !c->d[1 - k].done &&
          c->d[1 - k].head == NULL)
        finish(&c->d[1 - k]);
    }
  }
}

uint64_t sim_net_next(void) {
  uint64_t next = 0;
  for (int i = 0; i < nconns; i++) {
    sim_conn *c = &conns[i];
    if (c->state == CONNECTING &&
        !(parted && in_group[c->a->id] != in_group[c->b->id]) &&
        (next == 0 || c->ready_at < next))
      next = c->ready_at;
    for (int k = 0; k < 2 && c->state == OPEN; k++) {
      const dir *d = &c->d[k];
      if (d->head && !cut(d) && (next == 0 || d->head->at < next))
        next = d->head->at > sim_now_ns ? d->head->at : sim_now_ns + 1;
    }
  }
  return next;
}

void sim_net_node_gone(sim_node *n, int silent) {
  for (int i = 0; i < nconns; i++) {
    sim_conn *c = &conns[i];
    if (c->a != n && c->b != n)
      continue;
    for (int k = 0; k < 2; k++) {
      dir *d = &c->d[k];
      if (d->from != n)
        continue;
      d->dirty = 1;
      any_dirty = 1;
      if (silent) {
        /* What it wrote is on the wire and arrives; then nothing more
         * comes from it, not even an EOF: a black hole. */
        read_dir(d);
        d->eof_read = 1;
      }
    }
    if (c->a == n && c->a_fd >= 0)
      close(c->a_fd), c->a_fd = -1;
    if (c->b == n && c->b_fd >= 0 && c->state != CONNECTING)
      close(c->b_fd), c->b_fd = -1;
  }
  for (int i = 0; i < nlisteners; i++)
    if (listeners[i].owner && listeners[i].node == n)
      listeners[i].owner = NULL;
}

void sim_net_partition(const int *group, int n) {
  memset(in_group, 0, sizeof(in_group));
  for (int i = 0; i < n; i++)
    in_group[group[i]] = 1;
  parted = 1;
}

void sim_net_heal(void) {
  parted = 0;
  any_dirty = 1;
}
