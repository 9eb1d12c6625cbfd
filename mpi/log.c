/* The master's log, and how a dead worker is brought back without the
 * program knowing.
 *
 * For each worker the master keeps every message it sent it, in order
 * (the whole history: a worker's state may accumulate across tasks), and
 * counts the messages it took from it. A worker that dies is restored
 * (ft_restore: a spare, or a respawn that does not block), and its log is
 * sent again. The new incarnation runs the worker's program from the
 * start and, the program being deterministic, sends again what the dead
 * one sent: its first messages, as many as were taken from the dead
 * one, are dropped; the next is the one the master waits for.
 *
 * FT_MPI_REPLAY=unanswered is for farm workers that hold one task at a
 * time, answer it with one message, and keep nothing from one task to
 * the next but what they got before their first task (the problem). What
 * the master sent a worker up to its first answer is its start, kept:
 * the problem and the first task. Then, when the master takes an answer,
 * what it had sent the worker since the start leaves the log (but the
 * collectives' messages). A restored worker is sent its start, the
 * collectives' messages and the task it had not answered; its answer to
 * the first task and its parts of collectives already taken are dropped,
 * and its next answer is new.
 *
 * The log's memory is bounded by FT_MPI_LOG_LIMIT (bytes, all workers;
 * default 1 GiB). A worker whose log would pass it has it cut, said on
 * stderr once: its death then stops the job with a message, since it can
 * no longer be replayed. */
#include "layer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "owned.h"
#include "wire.h"

typedef struct lentry {
  lblob *b;
  int start; /* FT_MPI_REPLAY=unanswered: sent before the first answer */
} lentry;

typedef struct wlog {
  lentry *v; /* the log, oldest first: msgs of cap */
  size_t msgs, cap, bytes;
  /* Messages taken from the worker, all incarnations, and repeats still
   * to drop from its newest incarnation: all of them, or with
   * FT_MPI_REPLAY=unanswered the layer's (collectives, MPI_Finalize). */
  uint64_t taken;
  uint64_t drop;
  int answers;     /* FT_MPI_REPLAY=unanswered: answers taken, 0 or 1 */
  int drop_answer; /* ... and the first answer, still to drop */
  int cut;        /* its log passed the limit and was let go */
  int restores;
} wlog;

static wlog *logs; /* [1..W] */
static int nlogs;
static size_t total, limit;
static int unanswered; /* FT_MPI_REPLAY=unanswered */

lblob *lblob_new(const char *call, int tag, const void *data, size_t len) {
  lblob *b = malloc(sizeof(*b) + (len ? len : 1));
  if (b == NULL)
    layer_stop(1, call, "out of memory for a copy of %zu bytes", len);
  b->refs = 1;
  b->tag = tag;
  b->len = len;
  if (len)
    memcpy(b->data, data, len);
  return b;
}

void lblob_unref(void *blob) {
  lblob *b = blob;
  if (b && --b->refs == 0)
    free(b);
}

int lblob_write(const char *call, int dest, lblob *b) {
  ftmw_piece piece = {b->data, b->len, b};
  b->refs++;
  return ftmw_isend_owned(call, dest, b->tag, NULL, 0, &piece, 1, lblob_unref,
                          FTMW_FLAG_EAGER);
}

int llog_init(int W) {
  const char *v = getenv("FT_MPI_LOG_LIMIT");
  limit = (size_t)1 << 30;
  if (v && *v) {
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end != '\0' || v[0] == '-') {
      fprintf(stderr, "ftmw-mpi: FT_MPI_LOG_LIMIT='%s': expected a number of "
                      "bytes\n", v);
      ft_abort(LAYER_EXIT_MISUSE);
    }
    limit = (size_t)n;
  }
  v = getenv("FT_MPI_REPLAY");
  if (v && *v && strcmp(v, "all") != 0 && strcmp(v, "unanswered") != 0) {
    fprintf(stderr, "ftmw-mpi: FT_MPI_REPLAY='%s': expected 'all' (the "
                    "default) or 'unanswered'\n", v);
    ft_abort(LAYER_EXIT_MISUSE);
  }
  unanswered = v && strcmp(v, "unanswered") == 0;
  logs = calloc((size_t)W + 1, sizeof(*logs));
  nlogs = W;
  return logs ? 0 : -1;
}

static void drop_all(wlog *l) {
  for (size_t i = 0; i < l->msgs; i++)
    lblob_unref(l->v[i].b);
  free(l->v);
  total -= l->bytes;
  l->v = NULL;
  l->msgs = l->cap = l->bytes = 0;
}

void llog_free(void) {
  for (int w = 1; logs && w <= nlogs; w++)
    drop_all(&logs[w]);
  free(logs);
  logs = NULL;
}

void llog_append(int w, lblob *b) {
  wlog *l = &logs[w];
  size_t cost = b->len + sizeof(lentry);
  if (l->cut)
    return;
  if (total + cost > limit) {
    if (ft_is_primary())
      fprintf(stderr,
              "ftmw-mpi: the log of worker %d passes FT_MPI_LOG_LIMIT (%zu "
              "bytes for all workers): it is let go, and the death of worker "
              "%d will now stop the job\n", w, limit, w);
    drop_all(l);
    l->cut = 1;
    return;
  }
  if (l->msgs == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    lentry *v = realloc(l->v, cap * sizeof(*v));
    if (v == NULL)
      layer_stop(1, "the log", "out of memory for the log of worker %d", w);
    l->v = v;
    l->cap = cap;
  }
  b->refs++;
  l->v[l->msgs++] = (lentry){b, 0};
  l->bytes += cost;
  total += cost;
}

/* An answer came: the first makes what was sent so far the start; after
 * it, what was sent since the start leaves the log, but the layer's
 * (collectives). */
static void answered(wlog *l) {
  size_t kept = 0;
  for (size_t i = 0; i < l->msgs; i++) {
    lentry e = l->v[i];
    if (l->answers == 0)
      e.start = 1;
    if (e.start || e.b->tag >= LAYER_TAG_COLL) {
      l->v[kept++] = e;
      continue;
    }
    size_t cost = e.b->len + sizeof(lentry);
    l->bytes -= cost;
    total -= cost;
    lblob_unref(e.b);
  }
  l->msgs = kept;
  l->answers = 1;
}

int llog_fresh(int w, int tag) {
  wlog *l = &logs[w];
  if (unanswered && tag < LAYER_TAG_COLL) {
    if (l->drop_answer) { /* its answer to its first task, again */
      l->drop_answer = 0;
      return 0;
    }
    answered(l);
    return 1;
  }
  if (l->drop > 0) {
    l->drop--;
    return 0;
  }
  l->taken++;
  return 1;
}

/* Sends w's whole log to its new incarnation. Returns 0 if it failed
 * meanwhile. */
static int replay(int w) {
  for (size_t i = 0; i < logs[w].msgs; i++) {
    if (!lblob_write("recovery", w, logs[w].v[i].b)) {
      if (ft_error() == FT_ERR_PEER_FAILED)
        return 0;
      layer_stop(1, "recovery", "replaying to worker %d: %s", w,
                 ft_strerror(ft_error()));
    }
  }
  return 1;
}

void llog_restore(int w) {
  wlog *l = &logs[w];
  for (;;) {
    if (l->cut)
      layer_stop(LAYER_EXIT_LOST, "recovery",
                 "worker %d failed, and its log was let go at "
                 "FT_MPI_LOG_LIMIT (%zu bytes): it cannot be brought back, "
                 "the job stops", w, limit);
    if (!ft_restore(w)) {
      if (ft_error() == FT_ERR_NO_HOST)
        layer_stop(LAYER_EXIT_LOST, "recovery",
                   "worker %d failed, and no host or spare is left to "
                   "restore it on: the job stops", w);
      layer_stop(1, "recovery", "restoring worker %d: %s", w,
                 ft_strerror(ft_error()));
    }
    l->drop = l->taken;
    l->drop_answer = unanswered && l->answers;
    l->restores++;
    if (ft_is_primary())
      fprintf(stderr,
              "ftmw-mpi: worker %d failed and was restored (%d); %zu "
              "message(s) sent again, its first %llu dropped\n",
              w, l->restores, l->msgs, (unsigned long long)l->drop);
    if (replay(w))
      return;
  }
}
