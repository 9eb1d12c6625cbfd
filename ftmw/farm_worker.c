/* The task farm's worker side (ftmw_farm.h): receive a task, run the
 * user's function on it, send the result; checkpoints on the way.
 * Application thread only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "farm_wire.h"
#include "error.h"
#include "owned.h"
#include "leave.h"

struct ft_farm_task {
  int64_t id;
  uint32_t run;
  int attempt;
  const uint8_t *in;
  size_t in_len;
  const uint8_t *ckpt; /* NULL: started from the beginning */
  size_t ckpt_len;
  /* FARM_REPLY_HDR bytes of header, then the output: handed over to
   * the send of the RESULT (owned.h), then a new one */
  uint8_t *out;
  size_t out_len, out_cap;
};

/* Grows *buf (capacity *cap) to hold at least need bytes: need at first,
 * then doubling. Returns 0, or -1 out of memory (*buf unchanged). */
static int farm_reserve(uint8_t **buf, size_t *cap, size_t need) {
  if (need <= *cap)
    return 0;
  size_t c = *cap ? *cap : need;
  while (c < need)
    c *= 2;
  uint8_t *b = realloc(*buf, c);
  if (b == NULL)
    return -1;
  *buf = b;
  *cap = c;
  return 0;
}

int64_t ft_farm_task_id(const ft_farm_task *t) { return t ? t->id : -1; }

int ft_farm_attempt(const ft_farm_task *t) { return t ? t->attempt : 0; }

const void *ft_farm_input(const ft_farm_task *t, size_t *n) {
  if (n)
    *n = t ? t->in_len : 0;
  return t ? t->in : NULL;
}

const void *ft_farm_resumed(const ft_farm_task *t, size_t *n) {
  if (n)
    *n = t && t->ckpt ? t->ckpt_len : 0;
  return t ? t->ckpt : NULL;
}

int ft_farm_reply(ft_farm_task *t, const void *out, size_t n) {
  if (t == NULL || (out == NULL && n > 0))
    return ftmw_fail(t == NULL ? FT_ERR_NULL_ARG : FT_ERR_BUFFER);
  if (n > (size_t)INT32_MAX - FARM_REPLY_HDR)
    return ftmw_fail(FT_ERR_TOO_BIG);
  if (farm_reserve(&t->out, &t->out_cap, FARM_REPLY_HDR + n) < 0)
    return ftmw_fail(FT_ERR_NOMEM);
  if (n)
    memcpy(t->out + FARM_REPLY_HDR, out, n);
  t->out_len = FARM_REPLY_HDR + n;
  ftmw_ok();
  return 1;
}

int ft_farm_checkpoint(ft_farm_task *t, const void *state, size_t n) {
  if (t == NULL || (state == NULL && n > 0))
    return ftmw_fail(t == NULL ? FT_ERR_NULL_ARG : FT_ERR_BUFFER);
  if (n > (size_t)INT32_MAX - FARM_REPLY_HDR)
    return ftmw_fail(FT_ERR_TOO_BIG);
  uint8_t *b = malloc(FARM_REPLY_HDR + n);
  if (b == NULL)
    return ftmw_fail(FT_ERR_NOMEM);
  ftmw_put64(b, (uint64_t)t->id);
  ftmw_put32(b + 8, t->run);
  ftmw_put32(b + 12, 0);
  if (n)
    memcpy(b + FARM_REPLY_HDR, state, n);
  /* Blocking: once it returns the primary has the state (and passes it
   * on to the replicas), so a death right after loses nothing saved. */
  int ok = ft_send(b, (int)(FARM_REPLY_HDR + n), FT_BYTE, 0, FARM_TAG_CKPT) > 0;
  free(b);
  return ok;
}

/* Parses TASK message b (len bytes) into t. Returns 0, or -1 if it is not
 * a well-formed task. */
static int parse_task(const uint8_t *b, size_t len, ft_farm_task *t) {
  if (len < FARM_TASK_HDR)
    return -1;
  uint64_t in_len = ftmw_get64(b + 16);
  uint32_t ckpt_len = ftmw_get32(b + 12);
  if (in_len > len - FARM_TASK_HDR ||
      ckpt_len != len - FARM_TASK_HDR - in_len)
    return -1;
  t->id = (int64_t)ftmw_get64(b);
  t->run = ftmw_get32(b + 8);
  t->attempt = (int)ftmw_get32(b + 24);
  t->in = b + FARM_TASK_HDR;
  t->in_len = (size_t)in_len;
  t->ckpt = ckpt_len ? t->in + in_len : NULL;
  t->ckpt_len = ckpt_len;
  return 0;
}

/* The worker cannot go on with the farm: it leaves the job as a crashed
 * worker would, so that the master restores it and hands its copies out
 * again, instead of waiting for answers that would never come. */
static void leave(const char *why, int tag, size_t n) {
  ftmw_leave(FTMW_LEAVE_FARM_BROKEN, 0,
             "the farm: %s (tag %d, %zu bytes): leaving the job", why, tag, n);
}

/* Runs fn on t and sends its result. Returns 1, or 0 when the master is
 * gone. */
static int run_task(ft_farm_task *t, ft_farm_fn fn, void *ctx) {
  t->out_len = 0;
  int code = fn(t, ctx);
  if (t->out_len == 0 && farm_reserve(&t->out, &t->out_cap, FARM_REPLY_HDR) < 0)
    leave("out of memory for a result", FARM_TAG_RESULT, FARM_REPLY_HDR);
  if (code != 0 || t->out_len == 0)
    t->out_len = FARM_REPLY_HDR; /* an error carries no output */
  ftmw_put64(t->out, (uint64_t)t->id);
  ftmw_put32(t->out + 8, t->run);
  ftmw_put32(t->out + 12, (uint32_t)code);
  /* Not waited for (the next task may already be queued here), nor
   * copied: the send frees t->out once the master has it. */
  ftmw_piece out = {t->out, t->out_len, t->out};
  t->out = NULL;
  t->out_len = t->out_cap = 0;
  return ftmw_isend_owned("ft_isend", 0, FARM_TAG_RESULT, NULL, 0, &out, 1,
                          free, FTMW_FLAG_LAZY);
}

int ft_farm_work(ft_farm_fn fn, void *ctx) {
  if (fn == NULL)
    return ftmw_fail(FT_ERR_NULL_ARG);
  ft_farm_task t = {0};
  int rc = 0;
  for (;;) {
    FT_Status st;
    ftmw_msg *m;
    int timed_out;
    /* The task as it was read from the socket: not copied. */
    if (!ftmw_recv_owned(0, FT_ANY_TAG, -1, &m, &st, &timed_out))
      break; /* every master is gone */
    if (st.tag == FARM_TAG_STOP) {
      ftmw_msg_free(m);
      rc = 1;
      break;
    }
    if (st.tag != FARM_TAG_TASK || parse_task(m->data, m->len, &t) < 0)
      leave("got a message that is not a farm task (does the master make "
            "other ft_* calls inside the farm?)", st.tag, m->len);
    int ok = run_task(&t, fn, ctx);
    ftmw_msg_free(m);
    if (!ok)
      break;
  }
  free(t.out);
  if (rc)
    ftmw_ok();
  return rc;
}
