/* The libuv the library runs on in the simulator, part one (uv.c has the
 * loops and handles): threads are coroutines, locks and condition
 * variables block coroutines, the clock is the virtual one, randomness is
 * the seed's, and a node has one network interface. */
#define _GNU_SOURCE
#include "sim.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

/* --- locks, condition variables, threads ---------------------------------- */

typedef struct {
  sim_coro *owner;
} sim_mutex;
_Static_assert(sizeof(sim_mutex) <= sizeof(uv_mutex_t), "mutex fits");

typedef struct {
  uint64_t gen;
} sim_cond;
_Static_assert(sizeof(sim_cond) <= sizeof(uv_cond_t), "cond fits");

int uv_mutex_init(uv_mutex_t *m) {
  memset(m, 0, sizeof(*m));
  return 0;
}
int uv_mutex_init_recursive(uv_mutex_t *m) { return uv_mutex_init(m); }
void uv_mutex_destroy(uv_mutex_t *m) { (void)m; }

static int mutex_free(void *arg) { return ((sim_mutex *)arg)->owner == NULL; }

void uv_mutex_lock(uv_mutex_t *mu) {
  sim_mutex *m = (sim_mutex *)mu;
  sim_yield(); /* another thread may take it first */
  if (m->owner == sim_self()) {
    fprintf(stderr, "ftmw-sim: node %d locks a mutex it holds\n",
            sim_node_self()->id);
    abort();
  }
  while (m->owner != NULL)
    sim_block(mutex_free, m, 0);
  m->owner = sim_self();
}

int uv_mutex_trylock(uv_mutex_t *mu) {
  sim_mutex *m = (sim_mutex *)mu;
  if (m->owner != NULL)
    return UV_EBUSY;
  m->owner = sim_self();
  return 0;
}

void uv_mutex_unlock(uv_mutex_t *mu) {
  sim_mutex *m = (sim_mutex *)mu;
  if (m->owner != sim_self()) {
    fprintf(stderr, "ftmw-sim: node %d unlocks a mutex it does not hold\n",
            sim_node_self() ? sim_node_self()->id : -1);
    abort();
  }
  m->owner = NULL;
}

int uv_cond_init(uv_cond_t *c) {
  memset(c, 0, sizeof(*c));
  return 0;
}
void uv_cond_destroy(uv_cond_t *c) { (void)c; }
/* Every signal wakes every waiter: a spurious wake-up, which a condition
 * variable allows and its users must take. */
void uv_cond_signal(uv_cond_t *c) { ((sim_cond *)c)->gen++; }
void uv_cond_broadcast(uv_cond_t *c) { ((sim_cond *)c)->gen++; }

typedef struct {
  sim_cond *c;
  uint64_t seen;
} cond_wait;

static int signalled(void *arg) {
  cond_wait *w = arg;
  return w->c->gen != w->seen;
}

static int wait_cond(uv_cond_t *c, uv_mutex_t *m, uint64_t deadline) {
  cond_wait w = {(sim_cond *)c, ((sim_cond *)c)->gen};
  uv_mutex_unlock(m);
  int rc = sim_block(signalled, &w, deadline);
  uv_mutex_lock(m);
  return rc;
}

void uv_cond_wait(uv_cond_t *c, uv_mutex_t *m) { wait_cond(c, m, 0); }

int uv_cond_timedwait(uv_cond_t *c, uv_mutex_t *m, uint64_t timeout) {
  return wait_cond(c, m, sim_now_ns + timeout) == 0 ? 0 : UV_ETIMEDOUT;
}

typedef struct {
  void (*entry)(void *);
  void *arg;
} thread_start;

int uv_thread_create(uv_thread_t *tid, uv_thread_cb entry, void *arg) {
  sim_coro *c = sim_spawn(sim_node_self(), entry, arg);
  *tid = (uv_thread_t)c;
  return 0;
}

static int coro_done(void *arg) { return sim_coro_done(arg); }

int uv_thread_join(uv_thread_t *tid) {
  sim_coro *c = (sim_coro *)*tid;
  while (!sim_coro_done(c))
    sim_block(coro_done, c, 0);
  return 0;
}

uv_thread_t uv_thread_self(void) { return (uv_thread_t)sim_self(); }
int uv_thread_equal(const uv_thread_t *a, const uv_thread_t *b) {
  return *a == *b;
}

/* --- time, randomness, interfaces ----------------------------------------- */

uint64_t uv_hrtime(void) { return sim_now_ns; }

static int never(void *arg) {
  (void)arg;
  return 0;
}

void uv_sleep(unsigned int msec) {
  sim_block(never, NULL, sim_now_ns + (uint64_t)msec * SIM_NS_PER_MS);
}

int uv_random(uv_loop_t *loop, uv_random_t *req, void *buf, size_t len,
              unsigned flags, uv_random_cb cb) {
  (void)loop, (void)req, (void)flags, (void)cb;
  uint8_t *p = buf;
  for (size_t i = 0; i < len; i++)
    p[i] = (uint8_t)sim_rand();
  return 0;
}

int uv_interface_addresses(uv_interface_address_t **out, int *count) {
  uv_interface_address_t *v = calloc(1, sizeof(*v));
  if (v == NULL)
    return UV_ENOMEM;
  v->name = strdup("sim0");
  v->address.address4.sin_family = AF_INET;
  v->address.address4.sin_addr.s_addr = htonl(sim_node_self()->ip);
  *out = v;
  *count = 1;
  return 0;
}

void uv_free_interface_addresses(uv_interface_address_t *v, int count) {
  for (int i = 0; i < count; i++)
    free(v[i].name);
  free(v);
}

