/* Point-to-point calls and their requests. A send is eager, as MPI's is
 * for small messages: the data is copied (a master's copy is the log's,
 * log.c) and the call returns; MPI_Ssend waits for the receiver's library
 * to hold it. Non-blocking sends are thus complete when they return. A
 * receive is posted (match.c) and completed by whichever call waits or
 * tests for it. */
#include "layer.h"

#include <stddef.h>

/* --- arguments ------------------------------------------------------------ */

/* MPI_SUCCESS, 1 for MPI_PROC_NULL (nothing to do), or the error. */
static int peer_check(const char *call, int peer, int any_ok, MPI_Comm comm) {
  int rc = layer_check(call, comm, 0);
  if (rc != MPI_SUCCESS)
    return rc;
  if (peer == MPI_PROC_NULL)
    return 1;
  if (any_ok && peer == MPI_ANY_SOURCE)
    return MPI_SUCCESS;
  if (peer < 0 || peer > layer.W)
    return layer_error(MPI_ERR_RANK, call, "rank %d is not in MPI_COMM_WORLD "
                       "(0..%d)", peer, layer.W);
  if (peer == layer.rank)
    layer_stop(LAYER_EXIT_UNSUPPORTED, call,
               "a message from a process to itself is not supported by "
               "FTMW's MPI layer: the job stops");
  if (layer.rank != 0 && peer != 0)
    layer_stop(LAYER_EXIT_UNSUPPORTED, call,
               "messages between workers (%d and %d) are not supported by "
               "FTMW's MPI layer, whose workers talk to the master only: the "
               "job stops", layer.rank, peer);
  return MPI_SUCCESS;
}

static int tag_check(const char *call, int tag, int any_ok) {
  if ((any_ok && tag == MPI_ANY_TAG) || (tag >= 0 && tag <= LAYER_TAG_UB))
    return MPI_SUCCESS;
  return layer_error(MPI_ERR_TAG, call, "tag %d is not in 0..%d", tag,
                     LAYER_TAG_UB);
}

/* --- statuses and completion ---------------------------------------------- */

static void empty_status(MPI_Status *s) {
  ldata_status(s, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
}

static void proc_null_status(MPI_Status *s) {
  ldata_status(s, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS);
}

/* The status and return value of completed request r. */
static int finish(const char *call, const lreq *r, MPI_Status *s) {
  if (r->kind == LREQ_SEND) {
    empty_status(s);
    return MPI_SUCCESS;
  }
  if (r->source == MPI_PROC_NULL) {
    proc_null_status(s);
    return MPI_SUCCESS;
  }
  ldata_status(s, r->got_source, r->got_tag, r->err ? 0 : r->got_len, r->err);
  if (r->err != MPI_SUCCESS) {
    size_t room;
    ldata_room(call, r->count, r->type, &room);
    return layer_error(r->err, call,
                       "a message of %zu bytes from rank %d (tag %d) is "
                       "longer than the receive's %zu",
                       r->got_len, r->got_source, r->got_tag, room);
  }
  return MPI_SUCCESS;
}

/* Completes *h (waiting if block) into s; *h becomes MPI_REQUEST_NULL.
 * Returns 1 with *rc set if it completed. */
static int complete(const char *call, MPI_Request *h, MPI_Status *s,
                    int block, int *rc) {
  *rc = MPI_SUCCESS;
  layer_output();
  if (*h == MPI_REQUEST_NULL) {
    empty_status(s);
    return 1;
  }
  lreq *r = lreq_of(*h);
  if (r == NULL) {
    *rc = layer_error(MPI_ERR_REQUEST, call, "not a request of this process");
    return 1;
  }
  if (!r->done && (!block || r->kind == LREQ_RECV))
    lmatch_progress(0);
  while (block && !r->done)
    lmatch_progress(1);
  if (!r->done)
    return 0;
  *rc = finish(call, r, s);
  lreq_free(r);
  *h = MPI_REQUEST_NULL;
  return 1;
}

static MPI_Status *status_at(MPI_Status *v, int i) {
  return v == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &v[i];
}

/* --- sends ---------------------------------------------------------------- */

static int send(const char *call, const void *buf, int count,
                MPI_Datatype type, int dest, int tag, MPI_Comm comm, int sync) {
  int rc = peer_check(call, dest, 0, comm);
  if (rc == 1)
    return MPI_SUCCESS;
  if (rc == MPI_SUCCESS)
    rc = tag_check(call, tag, 0);
  ldata d;
  if (rc == MPI_SUCCESS)
    rc = ldata_out(call, buf, count, type, &d);
  if (rc != MPI_SUCCESS)
    return rc;
  lmatch_send(call, dest, tag, d.base, d.len, sync);
  ldata_free(&d);
  return MPI_SUCCESS;
}

LAYER_API int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest,
                       int tag, MPI_Comm comm) {
  return send("MPI_Send", buf, count, type, dest, tag, comm, 0);
}

LAYER_API int MPI_Ssend(const void *buf, int count, MPI_Datatype type,
                        int dest, int tag, MPI_Comm comm) {
  return send("MPI_Ssend", buf, count, type, dest, tag, comm, 1);
}

/* A ready send's receive is posted: an eager send does as well. */
LAYER_API int MPI_Rsend(const void *buf, int count, MPI_Datatype type,
                        int dest, int tag, MPI_Comm comm) {
  return send("MPI_Rsend", buf, count, type, dest, tag, comm, 0);
}

static int isend(const char *call, const void *buf, int count,
                 MPI_Datatype type, int dest, int tag, MPI_Comm comm, int sync,
                 MPI_Request *req) {
  int rc = send(call, buf, count, type, dest, tag, comm, sync);
  if (rc == MPI_SUCCESS) {
    lreq *r = lreq_new(LREQ_SEND);
    r->done = 1;
    *req = lreq_handle(r);
  }
  return rc;
}

LAYER_API int MPI_Isend(const void *buf, int count, MPI_Datatype type,
                        int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return isend("MPI_Isend", buf, count, type, dest, tag, comm, 0, req);
}

LAYER_API int MPI_Issend(const void *buf, int count, MPI_Datatype type,
                         int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return isend("MPI_Issend", buf, count, type, dest, tag, comm, 1, req);
}

LAYER_API int MPI_Irsend(const void *buf, int count, MPI_Datatype type,
                         int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return isend("MPI_Irsend", buf, count, type, dest, tag, comm, 0, req);
}

/* --- receives ------------------------------------------------------------- */

/* Checks a receive's arguments and fills r: MPI_SUCCESS, or the error. A
 * receive from MPI_PROC_NULL is done at once. */
static int recv_prepare(const char *call, lreq *r, void *buf, int count,
                        MPI_Datatype type, int source, int tag,
                        MPI_Comm comm) {
  size_t room;
  int rc = peer_check(call, source, 1, comm);
  if (rc == 1) {
    r->source = MPI_PROC_NULL;
    r->done = 1;
    return MPI_SUCCESS;
  }
  if (rc == MPI_SUCCESS)
    rc = tag_check(call, tag, 1);
  if (rc == MPI_SUCCESS)
    rc = ldata_room(call, count, type, &room);
  if (rc != MPI_SUCCESS)
    return rc;
  r->buf = buf;
  r->count = count;
  r->type = type;
  r->source = source;
  r->tag = tag;
  lmatch_post(r);
  return MPI_SUCCESS;
}

LAYER_API int MPI_Recv(void *buf, int count, MPI_Datatype type, int source,
                       int tag, MPI_Comm comm, MPI_Status *status) {
  lreq r;
  lreq_init(&r, LREQ_RECV);
  int rc = recv_prepare("MPI_Recv", &r, buf, count, type, source, tag, comm);
  if (rc != MPI_SUCCESS)
    return rc;
  while (!r.done)
    lmatch_progress(1);
  return finish("MPI_Recv", &r, status);
}

LAYER_API int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source,
                        int tag, MPI_Comm comm, MPI_Request *req) {
  lreq *r = lreq_new(LREQ_RECV);
  int rc = recv_prepare("MPI_Irecv", r, buf, count, type, source, tag, comm);
  if (rc != MPI_SUCCESS) {
    lreq_free(r);
    return rc;
  }
  *req = lreq_handle(r);
  return MPI_SUCCESS;
}

LAYER_API int MPI_Sendrecv(const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, int dest, int sendtag,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype,
                           int source, int recvtag, MPI_Comm comm,
                           MPI_Status *status) {
  static const char call[] = "MPI_Sendrecv";
  lreq r;
  lreq_init(&r, LREQ_RECV);
  int rc = recv_prepare(call, &r, recvbuf, recvcount, recvtype, source,
                        recvtag, comm);
  if (rc != MPI_SUCCESS)
    return rc;
  rc = send(call, sendbuf, sendcount, sendtype, dest, sendtag, comm, 0);
  if (rc != MPI_SUCCESS) {
    lmatch_unpost(&r);
    return rc;
  }
  while (!r.done)
    lmatch_progress(1);
  return finish(call, &r, status);
}

/* The send copies buf before the receive overwrites it. */
LAYER_API int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type,
                                   int dest, int sendtag, int source,
                                   int recvtag, MPI_Comm comm,
                                   MPI_Status *status) {
  static const char call[] = "MPI_Sendrecv_replace";
  int rc = send(call, buf, count, type, dest, sendtag, comm, 0);
  if (rc != MPI_SUCCESS)
    return rc;
  lreq r;
  lreq_init(&r, LREQ_RECV);
  rc = recv_prepare(call, &r, buf, count, type, source, recvtag, comm);
  if (rc != MPI_SUCCESS)
    return rc;
  while (!r.done)
    lmatch_progress(1);
  return finish(call, &r, status);
}

/* --- probes --------------------------------------------------------------- */

static int probe(const char *call, int source, int tag, MPI_Comm comm,
                 int block, int *flag, MPI_Status *status) {
  int rc = peer_check(call, source, 1, comm);
  if (rc == 1) {
    *flag = 1;
    proc_null_status(status);
    return MPI_SUCCESS;
  }
  if (rc == MPI_SUCCESS)
    rc = tag_check(call, tag, 1);
  if (rc != MPI_SUCCESS)
    return rc;
  const ftmw_msg *m;
  int tried = 0;
  while ((m = lmatch_find(source, tag)) == NULL && (block || !tried)) {
    lmatch_progress(block);
    tried = 1;
  }
  *flag = m != NULL;
  if (m)
    ldata_status(status, m->source, m->tag, m->len, MPI_SUCCESS);
  return MPI_SUCCESS;
}

LAYER_API int MPI_Probe(int source, int tag, MPI_Comm comm,
                        MPI_Status *status) {
  int flag;
  return probe("MPI_Probe", source, tag, comm, 1, &flag, status);
}

LAYER_API int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag,
                         MPI_Status *status) {
  return probe("MPI_Iprobe", source, tag, comm, 0, flag, status);
}

/* --- waits and tests ------------------------------------------------------ */

LAYER_API int MPI_Wait(MPI_Request *req, MPI_Status *status) {
  int rc;
  complete("MPI_Wait", req, status, 1, &rc);
  return rc;
}

LAYER_API int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
  int rc;
  *flag = complete("MPI_Test", req, status, 0, &rc);
  return rc;
}

/* The first request of v[0..n) that is done (-1: none; *active: some
 * request is not null). */
static int first_done(int n, MPI_Request *v, int *active) {
  *active = 0;
  for (int i = 0; i < n; i++) {
    if (v[i] == MPI_REQUEST_NULL)
      continue;
    lreq *r = lreq_of(v[i]);
    if (r == NULL)
      return i; /* complete() reports it */
    *active = 1;
    if (r->done)
      return i;
  }
  return -1;
}

static int any(const char *call, int n, MPI_Request *v, int *index,
               MPI_Status *status, int block, int *flag) {
  int active, i, rc;
  layer_output();
  for (int tries = 0;; tries++) {
    i = first_done(n, v, &active);
    if (i >= 0 || !active || (!block && tries == 1))
      break;
    lmatch_progress(block);
  }
  *flag = i >= 0 || !active;
  *index = i >= 0 ? i : MPI_UNDEFINED;
  if (i < 0) {
    if (!active)
      empty_status(status);
    return MPI_SUCCESS;
  }
  complete(call, &v[i], status, 0, &rc);
  return rc;
}

LAYER_API int MPI_Waitany(int n, MPI_Request *v, int *index,
                          MPI_Status *status) {
  int flag;
  return any("MPI_Waitany", n, v, index, status, 1, &flag);
}

LAYER_API int MPI_Testany(int n, MPI_Request *v, int *index, int *flag,
                          MPI_Status *status) {
  return any("MPI_Testany", n, v, index, status, 0, flag);
}

LAYER_API int MPI_Waitall(int n, MPI_Request *v, MPI_Status *statuses) {
  int rc = MPI_SUCCESS, one;
  for (int i = 0; i < n; i++) {
    complete("MPI_Waitall", &v[i], status_at(statuses, i), 1, &one);
    if (one != MPI_SUCCESS)
      rc = MPI_ERR_IN_STATUS;
  }
  return rc;
}

LAYER_API int MPI_Testall(int n, MPI_Request *v, int *flag,
                          MPI_Status *statuses) {
  lmatch_progress(0);
  for (int i = 0; i < n; i++) {
    lreq *r = v[i] == MPI_REQUEST_NULL ? NULL : lreq_of(v[i]);
    if (r && !r->done) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return MPI_Waitall(n, v, statuses);
}

static int some(const char *call, int n, MPI_Request *v, int *outcount,
                int *indices, MPI_Status *statuses, int block) {
  int active, rc = MPI_SUCCESS, one;
  layer_output();
  for (int tries = 0;; tries++) {
    int i = first_done(n, v, &active);
    if (i >= 0 || !active || (!block && tries == 1))
      break;
    lmatch_progress(block);
  }
  if (!active) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  *outcount = 0;
  for (int i = 0; i < n; i++) {
    lreq *r = v[i] == MPI_REQUEST_NULL ? NULL : lreq_of(v[i]);
    if (v[i] == MPI_REQUEST_NULL || (r && !r->done))
      continue;
    complete(call, &v[i], status_at(statuses, *outcount), 0, &one);
    if (one != MPI_SUCCESS)
      rc = MPI_ERR_IN_STATUS;
    indices[(*outcount)++] = i;
  }
  return rc;
}

LAYER_API int MPI_Waitsome(int n, MPI_Request *v, int *outcount, int *indices,
                           MPI_Status *statuses) {
  return some("MPI_Waitsome", n, v, outcount, indices, statuses, 1);
}

LAYER_API int MPI_Testsome(int n, MPI_Request *v, int *outcount, int *indices,
                           MPI_Status *statuses) {
  return some("MPI_Testsome", n, v, outcount, indices, statuses, 0);
}

/* A receive freed before it completes still takes its message. */
LAYER_API int MPI_Request_free(MPI_Request *req) {
  lreq *r = lreq_of(*req);
  if (r == NULL)
    return layer_error(MPI_ERR_REQUEST, "MPI_Request_free",
                       "not a request of this process");
  if (r->done)
    lreq_free(r);
  else
    r->freed = 1;
  *req = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}
