/* Collectives, through the master: workers never talk to each other, so
 * every collective is the workers' messages to the master and the
 * master's to them, with the layer's own tag (LAYER_TAG_COLL), which no
 * receive of the program matches. Every process calls collectives in the
 * same order (MPI's rule), and messages from one process arrive in order,
 * so the next message with that tag from a process is its part of this
 * collective. A master's messages are logged like any other: a restored
 * worker goes through the collectives again, and the master drops its
 * repeated parts. A root other than 0 sends its data through the master.
 *
 * Reductions combine in rank order, c0 op (c1 op (... op cW)), with
 * MPI_Reduce_local (every predefined operation, and the program's own).
 * A sum of floating-point numbers may thus round otherwise than the MPI
 * library's own order does (MPI leaves the order open). */
#include "layer.h"

#include <stdlib.h>
#include <string.h>

#define TAG LAYER_TAG_COLL

/* A master's message of len bytes to every worker but except (-1: none),
 * one copy shared by the logs. */
static void to_all(const char *call, const void *data, size_t len,
                   int except) {
  lblob *b = lblob_new(call, TAG, data, len);
  for (int w = 1; w <= layer.W; w++)
    if (w != except)
      lmatch_send_blob(call, w, b, 0);
  lblob_unref(b);
}

static void to(const char *call, int rank, const void *data, size_t len) {
  lmatch_send(call, rank, TAG, data, len, 0);
}

static ftmw_msg *from(int rank) { return lmatch_take(rank, TAG); }

/* Writes m into count elements of type at buf and frees m. */
static int unpack(const char *call, ftmw_msg *m, void *buf, int count,
                  MPI_Datatype type) {
  int rc = ldata_in(m->data, m->len, buf, count, type);
  size_t len = m->len;
  ftmw_msg_free(m);
  if (rc != MPI_SUCCESS)
    return layer_error(rc, call, "%zu bytes do not fit %d elements of the "
                       "datatype given (the processes' counts differ)", len,
                       count);
  return MPI_SUCCESS;
}

static int root_check(const char *call, int root, MPI_Comm comm) {
  int rc = layer_check(call, comm, 0);
  if (rc == MPI_SUCCESS && (root < 0 || root > layer.W))
    rc = layer_error(MPI_ERR_ROOT, call, "root %d is not in 0..%d", root,
                     layer.W);
  return rc;
}

static MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb, extent;
  PMPI_Type_get_extent(type, &lb, &extent);
  return extent;
}

/* --- broadcast and barrier ------------------------------------------------ */

LAYER_API int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root,
                        MPI_Comm comm) {
  static const char call[] = "MPI_Bcast";
  int rc = root_check(call, root, comm);
  ldata d = {0};
  if (rc == MPI_SUCCESS && root == layer.rank)
    rc = ldata_out(call, buf, count, type, &d);
  else if (rc == MPI_SUCCESS)
    rc = ldata_room(call, count, type, &d.len);
  if (rc != MPI_SUCCESS || layer.W == 0) {
    ldata_free(&d);
    return rc;
  }
  if (layer_master()) {
    if (root == 0) {
      to_all(call, d.base, d.len, -1);
    } else {
      ftmw_msg *m = from(root);
      to_all(call, m->data, m->len, root);
      rc = unpack(call, m, buf, count, type);
    }
  } else if (root == layer.rank) {
    to(call, 0, d.base, d.len);
  } else {
    rc = unpack(call, from(0), buf, count, type);
  }
  ldata_free(&d);
  return rc;
}

LAYER_API int MPI_Barrier(MPI_Comm comm) {
  int rc = layer_check("MPI_Barrier", comm, 0);
  if (rc != MPI_SUCCESS || layer.W == 0)
    return rc;
  if (layer_master()) {
    for (int w = 1; w <= layer.W; w++)
      ftmw_msg_free(from(w));
    to_all("MPI_Barrier", NULL, 0, -1);
  } else {
    to("MPI_Barrier", 0, NULL, 0);
    ftmw_msg_free(from(0));
  }
  return MPI_SUCCESS;
}

/* --- reductions ----------------------------------------------------------- */

/* count elements of type as they lie in memory, gaps included: the bytes
 * from buf + true lb over (count - 1) * extent + true extent. */
typedef struct span {
  MPI_Aint lb;
  size_t len;
} span;

static int span_of(const char *call, int count, MPI_Datatype type, span *s) {
  MPI_Aint lb, extent, tlb, textent;
  size_t room;
  int rc = ldata_room(call, count, type, &room);
  if (rc != MPI_SUCCESS)
    return rc;
  PMPI_Type_get_extent(type, &lb, &extent);
  PMPI_Type_get_true_extent(type, &tlb, &textent);
  s->lb = tlb;
  s->len = count == 0 ? 0 : (size_t)((count - 1) * extent + textent);
  return MPI_SUCCESS;
}

/* The master: every process's contribution combined in rank order, in a
 * buffer of s.len bytes (typed at result - s.lb) to free. */
static char *reduce_at_master(const char *call, const void *mine, int count,
                              MPI_Datatype type, MPI_Op op, span s) {
  char *acc = malloc(s.len ? s.len : 1);
  ftmw_msg **parts = calloc((size_t)layer.W + 1, sizeof(*parts));
  if (acc == NULL || parts == NULL)
    layer_stop(1, call, "out of memory (%zu bytes)", s.len);
  for (int w = 1; w <= layer.W; w++) {
    parts[w] = from(w);
    if (parts[w]->len != s.len)
      layer_stop(LAYER_EXIT_MISUSE, call,
                 "rank %d contributed %zu bytes, rank 0 %zu: the counts or "
                 "datatypes differ", w, parts[w]->len, s.len);
  }
  const void *top = layer.W > 0 ? (const void *)parts[layer.W]->data
                                : (const char *)mine + s.lb;
  if (s.len)
    memcpy(acc, top, s.len);
  char *typed = acc - s.lb;
  for (int r = layer.W - 1; r >= 0; r--) {
    const char *in = r > 0 ? (const char *)parts[r]->data - s.lb
                           : (const char *)mine;
    if (count > 0 && PMPI_Reduce_local(in, typed, count, type, op) !=
                         MPI_SUCCESS)
      layer_stop(LAYER_EXIT_MISUSE, call,
                 "the operation does not apply to the datatype");
  }
  for (int w = 1; w <= layer.W; w++)
    ftmw_msg_free(parts[w]);
  free(parts);
  return acc;
}

/* A worker's contribution: its span. */
static void contribute(const char *call, const void *mine, span s) {
  to(call, 0, (const char *)mine + s.lb, s.len);
}

/* The result (s.len bytes at data, laid out as count elements of type)
 * into buf: its elements only, not the gaps between them. */
static void put(void *buf, const void *data, int count, MPI_Datatype type,
                span s) {
  if (s.len == 0)
    return;
  if (ldata_contiguous(type)) {
    memcpy((char *)buf + s.lb, data, s.len);
    return;
  }
  ldata d;
  if (ldata_out("MPI_Reduce", (const char *)data - s.lb, count, type, &d) ==
      MPI_SUCCESS)
    ldata_in(d.base, d.len, buf, count, type);
  ldata_free(&d);
}

/* Reduce to root, or to every rank (root -1: MPI_Allreduce). */
static int reduce(const char *call, const void *sbuf, void *rbuf, int count,
                  MPI_Datatype type, MPI_Op op, int root) {
  /* MPI_IN_PLACE is the root's (every rank's, for Allreduce): its own
   * part is then rbuf. */
  const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  span s;
  int rc = span_of(call, count, type, &s), all = root < 0;
  if (rc != MPI_SUCCESS)
    return rc;
  if (layer_master()) {
    char *acc = reduce_at_master(call, mine, count, type, op, s);
    if (all)
      to_all(call, acc, s.len, -1);
    if (all || root == 0)
      put(rbuf, acc, count, type, s);
    else
      to(call, root, acc, s.len);
    free(acc);
    return MPI_SUCCESS;
  }
  contribute(call, mine, s);
  if (all || root == layer.rank) {
    ftmw_msg *m = from(0);
    put(rbuf, m->data, count, type, s);
    ftmw_msg_free(m);
  }
  return MPI_SUCCESS;
}

LAYER_API int MPI_Reduce(const void *sbuf, void *rbuf, int count,
                         MPI_Datatype type, MPI_Op op, int root,
                         MPI_Comm comm) {
  int rc = root_check("MPI_Reduce", root, comm);
  return rc != MPI_SUCCESS
             ? rc
             : reduce("MPI_Reduce", sbuf, rbuf, count, type, op, root);
}

LAYER_API int MPI_Allreduce(const void *sbuf, void *rbuf, int count,
                            MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  int rc = layer_check("MPI_Allreduce", comm, 0);
  return rc != MPI_SUCCESS
             ? rc
             : reduce("MPI_Allreduce", sbuf, rbuf, count, type, op, -1);
}

/* --- gather and scatter --------------------------------------------------- */

/* Rank r's part of a gather at buf: counts (NULL: count each) elements
 * at displacement displs[r] (NULL: r * count) extents. */
static char *at(void *buf, int r, int count, const int *counts,
                const int *displs, MPI_Datatype type, int *n) {
  *n = counts ? counts[r] : count;
  MPI_Aint d = displs ? displs[r] : (MPI_Aint)r * count;
  return (char *)buf + d * extent_of(type);
}

/* Gather, and Gatherv (counts and displs at the root). */
static int gather(const char *call, const void *sbuf, int scount,
                  MPI_Datatype stype, void *rbuf, int rcount,
                  const int *counts, const int *displs, MPI_Datatype rtype,
                  int root, MPI_Comm comm) {
  int rc = root_check(call, root, comm), n = 0;
  ldata mine = {0};
  int in_place = sbuf == MPI_IN_PLACE && root == layer.rank;
  if (rc == MPI_SUCCESS && in_place) {
    const void *p = at(rbuf, root, rcount, counts, displs, rtype, &n);
    rc = ldata_out(call, p, n, rtype, &mine);
  }
  else if (rc == MPI_SUCCESS)
    rc = ldata_out(call, sbuf, scount, stype, &mine);
  if (rc != MPI_SUCCESS)
    return rc;
  if (!layer_master()) {
    to(call, 0, mine.base, mine.len);
    /* A worker root gets every other part from the master, in order. */
    for (int r = 0; root == layer.rank && r <= layer.W && rc == MPI_SUCCESS;
         r++) {
      if (r == root)
        continue;
      void *p = at(rbuf, r, rcount, counts, displs, rtype, &n);
      rc = unpack(call, from(0), p, n, rtype);
    }
    if (root == layer.rank && !in_place && rc == MPI_SUCCESS) {
      void *p = at(rbuf, root, rcount, counts, displs, rtype, &n);
      rc = ldata_in(mine.base, mine.len, p, n, rtype);
    }
    ldata_free(&mine);
    return rc;
  }
  for (int r = 0; r <= layer.W; r++) {
    if (r == root && root != 0) { /* its own part stays with it */
      ftmw_msg_free(from(r));
      continue;
    }
    ftmw_msg *m = r == 0 ? NULL : from(r);
    const void *data = m ? (const void *)m->data : mine.base;
    size_t len = m ? m->len : mine.len;
    if (root != 0) {
      to(call, root, data, len);
    } else if (!(r == 0 && in_place)) {
      void *p = at(rbuf, r, rcount, counts, displs, rtype, &n);
      if (ldata_in(data, len, p, n, rtype) != MPI_SUCCESS)
        rc = layer_error(MPI_ERR_TRUNCATE, call, "rank %d's part of %zu bytes "
                         "does not fit the root's %d elements", r, len, n);
    }
    if (m)
      ftmw_msg_free(m);
  }
  ldata_free(&mine);
  return rc;
}

LAYER_API int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype,
                         void *rbuf, int rcount, MPI_Datatype rtype, int root,
                         MPI_Comm comm) {
  return gather("MPI_Gather", sbuf, scount, stype, rbuf, rcount, NULL, NULL,
                rtype, root, comm);
}

LAYER_API int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype,
                          void *rbuf, const int *rcounts, const int *displs,
                          MPI_Datatype rtype, int root, MPI_Comm comm) {
  return gather("MPI_Gatherv", sbuf, scount, stype, rbuf, 0, rcounts, displs,
                rtype, root, comm);
}

/* Scatter, and Scatterv (counts and displs at the root). */
static int scatter(const char *call, const void *sbuf, int scount,
                   const int *counts, const int *displs, MPI_Datatype stype,
                   void *rbuf, int rcount, MPI_Datatype rtype, int root,
                   MPI_Comm comm) {
  int rc = root_check(call, root, comm), n = 0;
  if (rc != MPI_SUCCESS)
    return rc;
  int in_place = rbuf == MPI_IN_PLACE && root == layer.rank;
  if (root == layer.rank) {
    /* Every other rank's part, in rank order: to it (the master's) or to
     * the master (a worker root's). */
    for (int r = 0; r <= layer.W && rc == MPI_SUCCESS; r++) {
      if (r == root)
        continue;
      ldata d;
      const void *p = at((void *)sbuf, r, scount, counts, displs, stype, &n);
      rc = ldata_out(call, p, n, stype, &d);
      if (rc == MPI_SUCCESS)
        to(call, layer_master() ? r : 0, d.base, d.len);
      ldata_free(&d);
    }
    if (rc == MPI_SUCCESS && !in_place) {
      ldata d;
      const void *p = at((void *)sbuf, root, scount, counts, displs, stype,
                         &n);
      rc = ldata_out(call, p, n, stype, &d);
      if (rc == MPI_SUCCESS && ldata_in(d.base, d.len, rbuf, rcount, rtype))
        rc = layer_error(MPI_ERR_TRUNCATE, call, "the root's part does not "
                         "fit its %d elements", rcount);
      ldata_free(&d);
    }
    return rc;
  }
  if (layer_master()) { /* a worker's scatter: the master forwards */
    for (int r = 0; r <= layer.W; r++) {
      if (r == root)
        continue;
      ftmw_msg *m = from(root);
      if (r == 0)
        rc = unpack(call, m, rbuf, rcount, rtype);
      else {
        to(call, r, m->data, m->len);
        ftmw_msg_free(m);
      }
    }
    return rc;
  }
  return unpack(call, from(0), rbuf, rcount, rtype);
}

LAYER_API int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype,
                          void *rbuf, int rcount, MPI_Datatype rtype, int root,
                          MPI_Comm comm) {
  return scatter("MPI_Scatter", sbuf, scount, NULL, NULL, stype, rbuf, rcount,
                 rtype, root, comm);
}

LAYER_API int MPI_Scatterv(const void *sbuf, const int *scounts,
                           const int *displs, MPI_Datatype stype, void *rbuf,
                           int rcount, MPI_Datatype rtype, int root,
                           MPI_Comm comm) {
  return scatter("MPI_Scatterv", sbuf, 0, scounts, displs, stype, rbuf, rcount,
                 rtype, root, comm);
}

/* Gather at the master, then every part to everyone in one message. */
LAYER_API int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype,
                            void *rbuf, int rcount, MPI_Datatype rtype,
                            MPI_Comm comm) {
  static const char call[] = "MPI_Allgather";
  int rc = layer_check(call, comm, 0), n;
  ldata mine = {0};
  size_t part;
  if (rc == MPI_SUCCESS)
    rc = ldata_room(call, rcount, rtype, &part);
  if (rc == MPI_SUCCESS && sbuf == MPI_IN_PLACE) {
    const void *p = at(rbuf, layer.rank, rcount, NULL, NULL, rtype, &n);
    rc = ldata_out(call, p, n, rtype, &mine);
  }
  else if (rc == MPI_SUCCESS)
    rc = ldata_out(call, sbuf, scount, stype, &mine);
  if (rc != MPI_SUCCESS)
    return rc;
  size_t all = part * ((size_t)layer.W + 1);
  char *parts = NULL;
  ftmw_msg *m = NULL;
  if (layer_master()) {
    if ((parts = malloc(all ? all : 1)) == NULL)
      layer_stop(1, call, "out of memory (%zu bytes)", all);
    for (int r = 0; r <= layer.W; r++) {
      ftmw_msg *p = r == 0 ? NULL : from(r);
      size_t len = p ? p->len : mine.len;
      if (len != part)
        layer_stop(LAYER_EXIT_MISUSE, call, "rank %d's part has %zu bytes, "
                   "not %zu: the counts or datatypes differ", r, len, part);
      if (len)
        memcpy(parts + (size_t)r * part, p ? (void *)p->data : mine.base, len);
      if (p)
        ftmw_msg_free(p);
    }
    to_all(call, parts, all, -1);
  } else {
    to(call, 0, mine.base, mine.len);
    m = from(0);
    if (m->len != all)
      layer_stop(LAYER_EXIT_MISUSE, call, "the parts have %zu bytes, not %zu: "
                 "the counts or datatypes differ", m->len, all);
    parts = (char *)m->data;
  }
  for (int r = 0; r <= layer.W; r++)
    ldata_in(parts + (size_t)r * part, part,
             at(rbuf, r, rcount, NULL, NULL, rtype, &n), rcount, rtype);
  if (m)
    ftmw_msg_free(m);
  else
    free(parts);
  ldata_free(&mine);
  return MPI_SUCCESS;
}
