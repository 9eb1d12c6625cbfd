/* MPI's matching over FTMW's messages, and recovery.
 *
 * The layer takes every message from FTMW as it comes (any source, any
 * tag: one FTMW receive each), and matches it as MPI does: to the
 * earliest posted receive it matches, else into the unexpected queue,
 * where a receive posted later finds the earliest that matches it. A
 * master's receive from FTMW that reports a failed worker (or, without
 * replicas, a failure seen before waiting) recovers it (log.c) and goes
 * on: the program never sees it. */
#include "layer.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "owned.h"

/* Posted receives (lreq.node) and unexpected messages (ftmw_msg's
 * by_arrival, free once FTMW handed the message over), oldest first. */
static ftmw_qnode posted = {&posted, &posted};
static ftmw_qnode unexpected = {&unexpected, &unexpected};

static int matches(int source, int tag, const ftmw_msg *m) {
  if (source != MPI_ANY_SOURCE && source != m->source)
    return 0;
  return tag == MPI_ANY_TAG ? m->tag <= LAYER_TAG_UB : tag == m->tag;
}

/* --- requests ------------------------------------------------------------- */

/* The program holds an MPI_Request that names a slot of this table: an
 * opaque value of MPI's handle type that is never MPI_REQUEST_NULL. */
static lreq **table;
static int table_len;

#ifdef OPEN_MPI /* MPI_Request is a pointer */
#define HANDLE(i) ((MPI_Request)(uintptr_t)(((uintptr_t)(i) << 4) | 0x9))
#define SLOT(h)                                                                \
  (((uintptr_t)(h) & 0xf) == 0x9 ? (long)((uintptr_t)(h) >> 4) : -1L)
#else /* MPICH: an int */
#define HANDLE(i) ((MPI_Request)(0x3a000000 + (i)))
#define SLOT(h)                                                                \
  ((h) >= 0x3a000000 && (h) < 0x3b000000 ? (long)((h) - 0x3a000000) : -1L)
#endif

static int table_free; /* no free slot below it */

lreq *lreq_new(int kind) {
  int i = table_free;
  while (i < table_len && table[i] != NULL)
    i++;
  table_free = i + 1;
  if (i == table_len) {
    int n = table_len ? 2 * table_len : 64;
    if (n > 0xffffff)
      layer_stop(1, "MPI", "more than %d requests outstanding", 0xffffff);
    lreq **t = realloc(table, (size_t)n * sizeof(*t));
    if (t == NULL)
      layer_stop(1, "MPI", "out of memory for a request");
    memset(t + table_len, 0, (size_t)(n - table_len) * sizeof(*t));
    table = t;
    table_len = n;
  }
  lreq *r = malloc(sizeof(*r));
  if (r == NULL)
    layer_stop(1, "MPI", "out of memory for a request");
  lreq_init(r, kind);
  r->index = i;
  table[i] = r;
  return r;
}

void lreq_init(lreq *r, int kind) {
  *r = (lreq){.kind = kind, .index = -1};
  ftmw_q_init(&r->node);
}

void lreq_free(lreq *r) {
  ftmw_q_remove(&r->node);
  if (r->held)
    ftmw_msg_free(r->held);
  if (r->index >= 0) {
    table[r->index] = NULL;
    if (r->index < table_free)
      table_free = r->index;
  }
  free(r);
}

MPI_Request lreq_handle(const lreq *r) { return HANDLE(r->index); }

lreq *lreq_of(MPI_Request h) {
  long i = SLOT(h);
  return i >= 0 && i < table_len ? table[i] : NULL;
}

/* --- matching ------------------------------------------------------------- */

static void fill(lreq *r, ftmw_msg *m) {
  r->got_source = m->source;
  r->got_tag = m->tag;
  r->got_len = m->len;
  if (r->kind == LREQ_TAKE) {
    r->held = m;
  } else {
    r->err = ldata_in(m->data, m->len, r->buf, r->count, r->type);
    ftmw_msg_free(m);
  }
  r->done = 1;
  if (r->freed)
    lreq_free(r);
}

/* A message taken from FTMW. */
static void arrive(ftmw_msg *m) {
  if (layer_master() && !llog_fresh(m->source, m->tag)) {
    ftmw_msg_free(m);
    return;
  }
  ftmw_qnode *n;
  ftmw_q_foreach(n, &posted) {
    lreq *r = FTMW_CONTAINER_OF(n, lreq, node);
    if (matches(r->source, r->tag, m)) {
      ftmw_q_remove(&r->node);
      fill(r, m);
      return;
    }
  }
  ftmw_q_insert_tail(&unexpected, &m->by_arrival);
}

void lmatch_post(lreq *r) {
  r->done = 0;
  ftmw_qnode *n;
  ftmw_q_foreach(n, &unexpected) {
    ftmw_msg *m = FTMW_CONTAINER_OF(n, ftmw_msg, by_arrival);
    if (matches(r->source, r->tag, m)) {
      ftmw_q_remove(n);
      fill(r, m);
      return;
    }
  }
  ftmw_q_insert_tail(&posted, &r->node);
}

void lmatch_unpost(lreq *r) { ftmw_q_remove(&r->node); }

const ftmw_msg *lmatch_find(int source, int tag) {
  ftmw_qnode *n;
  ftmw_q_foreach(n, &unexpected) {
    const ftmw_msg *m = FTMW_CONTAINER_OF(n, ftmw_msg, by_arrival);
    if (matches(source, tag, m))
      return m;
  }
  return NULL;
}

/* --- progress and recovery ------------------------------------------------ */

/* FTMW reported err (who: the rank it names). */
static void failed(const char *call, int err, int who) {
  if (err == FT_ERR_PEER_FAILED && layer_master() && who >= 1 &&
      who <= layer.W) {
    lmatch_recover(who);
    return;
  }
  if (err == FT_ERR_TERMINATED) /* MPI has no way to tell the program */
    layer_stop(LAYER_EXIT_TERMINATED, call,
               "stopped by SIGTERM (a time limit?): the job ends");
  if (err == FT_ERR_NO_MASTER)
    layer_stop(LAYER_EXIT_LOST, call,
               "every master has failed: worker %d stops", layer.rank);
  layer_stop(1, call, "%s", ft_strerror(err));
}

void lmatch_recover(int w) {
  /* The layer heeds the failure (ft_test: FT_ERRORS=checked would stop a
   * job that names a worker it was told had failed, calls.h) and takes
   * the dead incarnation's messages still queued, its own, counted
   * before its successor's come. */
  ft_test(w);
  for (;;) {
    int flag = 0, timed;
    ftmw_msg *m;
    FT_Status s;
    if (!ft_iprobe(w, FT_ANY_TAG, &flag, NULL) || !flag)
      break;
    if (!ftmw_recv_owned(w, FT_ANY_TAG, -1, &m, &s, &timed))
      break;
    arrive(m);
  }
  llog_restore(w);
}

/* Takes one message from FTMW, or does one recovery. block: waits for
 * one. Returns 1 if it did something. */
static int pull(int block) {
  ftmw_msg *m = NULL;
  FT_Status s;
  int timed = 0, ok;
  if (layer_master()) {
    /* Without replicas a failure is recovered before waiting, though
     * other workers' messages keep FTMW's receive busy. With replicas
     * only what FTMW reports, in every master alike, counts. */
    static unsigned long heeded; /* ftmw_failures() when none was left */
    unsigned long seen;
    if (block && !layer.replicas && (seen = ftmw_failures()) != heeded) {
      int w = ft_testany();
      if (w > 0) {
        lmatch_recover(w);
        return 1;
      }
      heeded = seen;
    }
    ok = ftmw_recv_owned(FT_ANY_SOURCE, FT_ANY_TAG, block ? -1 : 0, &m, &s,
                         &timed);
  } else {
    if (!block) {
      int flag = 0;
      if (!ft_iprobe(0, FT_ANY_TAG, &flag, &s)) {
        failed("MPI_Recv", ft_error(), 0);
        return 1;
      }
      if (!flag)
        return 0;
    }
    ok = ftmw_recv_owned(0, FT_ANY_TAG, -1, &m, &s, &timed);
  }
  if (ok) {
    arrive(m);
    return 1;
  }
  if (timed)
    return 0;
  failed("MPI_Recv", ft_error(), s.source);
  return 1;
}

int lmatch_progress(int block) {
  if (block)
    return pull(1);
  /* What has come already, not for ever. */
  int did = 0;
  for (int i = 0; i < 256 && pull(0); i++)
    did = 1;
  return did;
}

ftmw_msg *lmatch_take(int source, int tag) {
  lreq r;
  lreq_init(&r, LREQ_TAKE);
  r.source = source;
  r.tag = tag;
  lmatch_post(&r);
  while (!r.done)
    lmatch_progress(1);
  return r.held;
}

/* --- sends ---------------------------------------------------------------- */

/* FTMW's messages, and MPI's counts, are ints. */
static void size_check(const char *call, size_t len) {
  if (len > INT_MAX)
    layer_stop(LAYER_EXIT_UNSUPPORTED, call,
               "a message of %zu bytes: FTMW's messages are at most %d bytes",
               len, INT_MAX);
}

void lmatch_send_blob(const char *call, int dest, lblob *b, int sync) {
  size_check(call, b->len);
  llog_append(dest, b);
  int ok;
  if (sync) {
    ok = ft_ssend(b->data, (int)b->len, FT_BYTE, dest, b->tag) > 0 ||
         (b->len == 0 && ft_error() == FT_SUCCESS);
  } else {
    ok = lblob_write(call, dest, b);
  }
  if (!ok) /* the log has b: the replay sends it */
    failed(call, ft_error(), dest);
}

void lmatch_send(const char *call, int dest, int tag, const void *data,
                 size_t len, int sync) {
  size_check(call, len);
  if (layer_master()) {
    lblob *b = lblob_new(call, tag, data, len);
    lmatch_send_blob(call, dest, b, sync);
    lblob_unref(b);
    return;
  }
  int n = sync ? ft_ssend(data, (int)len, FT_BYTE, 0, tag)
               : ft_send(data, (int)len, FT_BYTE, 0, tag);
  if (n == 0 && ft_error() != FT_SUCCESS)
    failed(call, ft_error(), 0);
}

void lmatch_free(void) {
  while (!ftmw_q_empty(&unexpected)) {
    ftmw_qnode *n = ftmw_q_head(&unexpected);
    ftmw_q_remove(n);
    ftmw_msg_free(FTMW_CONTAINER_OF(n, ftmw_msg, by_arrival));
  }
  for (int i = 0; i < table_len; i++) /* each leaves the posted list */
    if (table[i])
      lreq_free(table[i]);
  ftmw_q_init(&posted); /* none of the layer's own is posted here */
  free(table);
  table = NULL;
  table_len = table_free = 0;
}
