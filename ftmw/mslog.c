/* The master's per-worker log of ms_* calls (see mslog.h). */
#include "mslog.h"

#include <stdlib.h>
#include <string.h>

static size_t call_size(const ftmw_mslog_call *c) {
  return sizeof(*c) + (c->kind == FTMW_MSLOG_SEND ? c->bytes : 0);
}

void ftmw_mslog_init(ftmw_mslog *log) {
  ftmw_q_init(&log->nodes);
  log->cur = NULL;
  log->posted = NULL;
  log->ncalls = 0;
  log->bytes = 0;
}

/* Frees n's calls, leaving n empty. */
static void empty_node(ftmw_mslog *log, ftmw_mslog_node *n) {
  while (!ftmw_q_empty(&n->calls)) {
    ftmw_mslog_call *c =
        FTMW_CONTAINER_OF(ftmw_q_head(&n->calls), ftmw_mslog_call, node);
    ftmw_q_remove(&c->node);
    if (c == log->posted)
      log->posted = NULL; /* still posted, but its cycle is over */
    log->bytes -= call_size(c);
    log->ncalls--;
    free(c);
  }
  n->ncalls = 0;
}

void ftmw_mslog_clear(ftmw_mslog *log) {
  while (!ftmw_q_empty(&log->nodes)) {
    ftmw_mslog_node *n =
        FTMW_CONTAINER_OF(ftmw_q_head(&log->nodes), ftmw_mslog_node, node);
    empty_node(log, n);
    ftmw_q_remove(&n->node);
    free(n);
  }
  ftmw_mslog_init(log);
}

ftmw_mslog_call *ftmw_mslog_call_new(int kind, int tag, void *buf, int count,
                                 FT_Datatype type, size_t bytes) {
  size_t copy = kind == FTMW_MSLOG_SEND ? bytes : 0;
  ftmw_mslog_call *c = malloc(sizeof(*c) + copy);
  ftmw_mslog_node *fresh = malloc(sizeof(*fresh));
  if (c == NULL || fresh == NULL) {
    free(c);
    free(fresh);
    return NULL;
  }
  c->fresh = fresh;
  ftmw_q_init(&c->node);
  c->kind = kind;
  c->state = kind == FTMW_MSLOG_IRECV ? FTMW_MSLOG_PENDING : FTMW_MSLOG_OK;
  c->completion_tried = 0;
  c->tag = tag;
  c->count = count;
  c->type = type;
  c->bytes = bytes;
  if (copy) {
    memcpy(c->data, buf, copy);
    c->buf = c->data;
  } else {
    c->buf = kind == FTMW_MSLOG_SEND ? NULL : buf;
  }
  return c;
}

void ftmw_mslog_call_free(ftmw_mslog_call *c) {
  free(c->fresh);
  free(c);
}

static ftmw_mslog_node *find_node(ftmw_mslog *log, int tag) {
  ftmw_qnode *q;
  ftmw_q_foreach(q, &log->nodes) {
    ftmw_mslog_node *n = FTMW_CONTAINER_OF(q, ftmw_mslog_node, node);
    if (n->tag == tag)
      return n;
  }
  return NULL;
}

/* A call that is a node of its own: never part of a cycle. */
static int alone(int tag) {
  return tag == FT_ANY_TAG || tag == FTMW_TAG_BCAST;
}

/* Appends fresh, as a node for tag (*fresh is then NULL). */
static ftmw_mslog_node *new_node(ftmw_mslog *log, int tag,
                                 ftmw_mslog_node **fresh) {
  ftmw_mslog_node *n = *fresh;
  *fresh = NULL;
  n->tag = tag;
  n->ncalls = 0;
  n->closed = 0;
  ftmw_q_init(&n->calls);
  ftmw_q_insert_tail(&log->nodes, &n->node);
  log->bytes += sizeof(*n);
  return n;
}

/* The node a call with tag goes to; fresh is used if a new one is needed
 * (and set to NULL then). A broadcast stands beside the cycles (it is
 * replayed first, wherever it is): the current cycle goes on after it. */
static ftmw_mslog_node *node_for(ftmw_mslog *log, int tag,
                                 ftmw_mslog_node **fresh) {
  if (tag == FTMW_TAG_BCAST)
    return new_node(log, tag, fresh);
  ftmw_mslog_node *n = log->cur;
  if (n && !alone(tag) && n->tag == tag)
    return n; /* the same cycle goes on */
  if (n)
    n->closed = 1;
  n = alone(tag) ? NULL : find_node(log, tag);
  if (n == NULL)
    return new_node(log, tag, fresh);
  empty_node(log, n); /* a new instance replaces the old one in place */
  n->closed = 0;
  return n;
}

void ftmw_mslog_add(ftmw_mslog *log, ftmw_mslog_call *c) {
  ftmw_mslog_node *n = node_for(log, c->tag, &c->fresh);
  free(c->fresh);
  c->fresh = NULL;
  ftmw_q_insert_tail(&n->calls, &c->node);
  n->ncalls++;
  log->ncalls++;
  log->bytes += call_size(c);
  if (c->tag != FTMW_TAG_BCAST)
    log->cur = n;
}

int ftmw_mslog_answered(ftmw_mslog *log, int tag) {
  ftmw_mslog_node *n = log->cur;
  if (n == NULL || alone(n->tag) || n->tag == tag || n->ncalls == 0)
    return 0;
  const ftmw_qnode *q;
  ftmw_q_foreach(q, &n->calls) {
    const ftmw_mslog_call *c = FTMW_CONTAINER_OF(q, ftmw_mslog_call, node);
    if (c->kind != FTMW_MSLOG_SEND || c->state != FTMW_MSLOG_OK)
      return 0; /* not a task that went out whole */
  }
  empty_node(log, n);
  return 1;
}

void ftmw_mslog_posted_done(ftmw_mslog *log, int ok) {
  ftmw_mslog_call *c = log->posted;
  if (c == NULL)
    return;
  c->completion_tried = 1;
  c->state = ok ? FTMW_MSLOG_OK : FTMW_MSLOG_FAILED;
  log->posted = NULL;
}

int ftmw_mslog_node_replayed(const ftmw_mslog_node *n) {
  if (alone(n->tag) || n->ncalls <= 1 || !n->closed)
    return 1;
  const ftmw_qnode *q;
  ftmw_q_foreach(q, &n->calls) {
    const ftmw_mslog_call *c = FTMW_CONTAINER_OF(q, ftmw_mslog_call, node);
    if (c->state != FTMW_MSLOG_OK)
      return 1; /* the cycle did not complete */
  }
  return 0;
}

/* Appends to plan[*k..] the calls of the replayed nodes that are
 * broadcasts (bcast 1) or are not (0), in log order. */
static void plan_nodes(const ftmw_mslog *log, int bcast,
                       ftmw_mslog_call **plan, int *k) {
  const ftmw_qnode *q, *r;
  ftmw_q_foreach(q, &log->nodes) {
    const ftmw_mslog_node *n = FTMW_CONTAINER_OF(q, ftmw_mslog_node, node);
    if ((n->tag == FTMW_TAG_BCAST) != bcast || !ftmw_mslog_node_replayed(n))
      continue;
    ftmw_q_foreach(r, &n->calls) {
      plan[(*k)++] = FTMW_CONTAINER_OF(r, ftmw_mslog_call, node);
    }
  }
}

/* Broadcasts first: a cycle's new instance took its old one's place, so
 * it may stand before broadcasts made ahead of it, which the worker may
 * need to answer it. They travel apart from the other messages (their
 * own tag), so sending them all first changes no match. */
int ftmw_mslog_plan(const ftmw_mslog *log, ftmw_mslog_call **plan) {
  int k = 0;
  plan_nodes(log, 1, plan, &k);
  plan_nodes(log, 0, plan, &k);
  return k;
}

/* Runs plan[0..n-1]; sets *posted to the irecv left posted, if any. */
static int run_plan(ftmw_mslog_call **plan, int n, ftmw_mslog_op op, void *ctx,
                    int wait_last, ftmw_mslog_call **posted) {
  *posted = NULL;
  for (int i = 0; i < n; i++) {
    ftmw_mslog_call *c = plan[i];
    int rc;
    if (*posted && c->kind != FTMW_MSLOG_SEND) {
      if ((rc = op(ctx, FTMW_MSLOG_WAIT, NULL)) != FT_SUCCESS)
        return rc;
      *posted = NULL;
    }
    if ((rc = op(ctx, c->kind, c)) != FT_SUCCESS)
      return rc;
    if (c->kind == FTMW_MSLOG_IRECV)
      *posted = c;
  }
  /* The last irecv: one the program has not waited for yet is left for
   * its wait. One its wait completed (a cycle answered, but not yet
   * closed by another tag) is completed here, by ms_irestore too: left
   * posted, the program's next wait would deliver that answer a second
   * time. One whose wait reported the failure is completed here by
   * ms_restore and left for the program's next wait by ms_irestore. */
  if (*posted && (*posted)->completion_tried &&
      (wait_last || (*posted)->state == FTMW_MSLOG_OK)) {
    int rc = op(ctx, FTMW_MSLOG_WAIT, NULL);
    if (rc != FT_SUCCESS)
      return rc;
    *posted = NULL;
  }
  return FT_SUCCESS;
}

int ftmw_mslog_replay(ftmw_mslog *log, ftmw_mslog_op op, void *ctx,
                      int wait_last, int *n) {
  ftmw_mslog_call **plan = malloc(((size_t)log->ncalls + 1) * sizeof(*plan));
  *n = 0;
  if (plan == NULL)
    return FT_ERR_NOMEM;
  *n = ftmw_mslog_plan(log, plan);
  ftmw_mslog_call *posted;
  int rc = run_plan(plan, *n, op, ctx, wait_last, &posted);
  if (rc == FT_SUCCESS) {
    for (int i = 0; i < *n; i++)
      plan[i]->state = FTMW_MSLOG_OK;
    if (posted) { /* the program's wait completes it, as a new one */
      posted->state = FTMW_MSLOG_PENDING;
      posted->completion_tried = 0;
      log->posted = posted;
    }
  }
  free(plan);
  return rc;
}
