/* The ms_* log (ftmw/mslog.c): call sequences against the replay plan
 * SPEC section 5 prescribes, and the log's memory bound.
 *
 * A sequence is a string of calls to one worker, in order: S (ms_send),
 * R (ms_recv) or I (ms_irecv), then the tag (a number, or * for
 * FT_ANY_TAG), or B (ms_bcast's send, no tag), or A and a tag (an
 * ms_recv from FT_ANY_SOURCE that brought this worker's message with that
 * tag: ftmw_mslog_answered, else logged as R); then the outcome: nothing for success (an I stays posted),
 * "!" when the call reported the worker's failure, and for an I, "w" when
 * its ft_wait completed and "f" when its ft_wait reported the failure. The
 * plan is written as the positions of the replayed calls, from 0. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mslog.h"

#define MAXCALLS 64

static int values[MAXCALLS]; /* each call's data: its position */

/* Logs seq into log; positions are kept in each send's copy and each
 * receive's buffer. */
static void play(ftmw_mslog *log, const char *seq) {
  int pos = 0;
  for (const char *s = seq; *s;) {
    if (*s == ' ') {
      s++;
      continue;
    }
    int kind = *s == 'S' || *s == 'B' ? FTMW_MSLOG_SEND
             : *s == 'R' || *s == 'A' ? FTMW_MSLOG_RECV
             : FTMW_MSLOG_IRECV;
    cr_assert(strchr("SRIBA", *s), "bad token in '%s'", seq);
    int answer = *s == 'A';
    int tag = FT_ANY_TAG;
    if (*s++ == 'B')
      tag = FTMW_TAG_BCAST;
    else if (*s == '*')
      s++;
    else
      tag = (int)strtol(s, (char **)&s, 10);
    cr_assert_lt(pos, MAXCALLS);
    values[pos] = pos;
    ftmw_mslog_call *c =
        ftmw_mslog_call_new(kind, tag, &values[pos], 1, FT_INT, sizeof(int));
    cr_assert_not_null(c);
    if (*s == '!') {
      c->state = FTMW_MSLOG_FAILED;
      s++;
    }
    if (answer && ftmw_mslog_answered(log, tag)) {
      ftmw_mslog_call_free(c);
      pos++;
      continue;
    }
    ftmw_mslog_add(log, c);
    if (kind == FTMW_MSLOG_IRECV && c->state != FTMW_MSLOG_FAILED) {
      log->posted = c;
      if (*s == 'w' || *s == 'f')
        ftmw_mslog_posted_done(log, *s++ == 'w');
    }
    pos++;
  }
}

/* The plan of log, as positions separated by spaces. */
static void plan_str(const ftmw_mslog *log, char *out, size_t size) {
  ftmw_mslog_call *plan[MAXCALLS];
  int n = ftmw_mslog_plan(log, plan);
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    const int *v = plan[i]->buf;
    size_t len = strlen(out);
    snprintf(out + len, size - len, "%s%d", i ? " " : "", *v);
  }
}

static const struct {
  const char *name, *seq, *plan;
} cases[] = {
    /* Figure 4.6: a (tag 1) alone, then the cycle b, c (tag 2). */
    {"first iteration, failure at b", "S1 S2!", "0 1"},
    {"first iteration, failure at c", "S1 S2 R2!", "0 1 2"},
    {"last cycle not closed yet (failure found by ft_testany)", "S1 S2 R2",
     "0 1 2"},
    {"completed cycle skipped, a replayed", "S1 S2 R2 S1!", "3"},
    {"new instance replaces the old in place", "S1 S2 R2 S1 S2!", "3 4"},
    /* Broadcasts: each a node of its own, kept, replayed before the rest
     * (the cycle of tag 1 was renewed in place, ahead of the second). */
    {"broadcasts kept and replayed first", "B S1 R1 S2 R2 B S1 R1!",
     "0 5 6 7"},
    {"consecutive broadcasts are not a cycle", "B B S1 R1 S2 R2 S1 R1!",
     "0 1 6 7"},
    /* A broadcast inside a cycle neither splits nor ends it: the task's
     * send stays in its cycle (or the replayed receive would wait for an
     * answer to a task never sent). */
    {"broadcast inside an unfinished cycle", "S1 B R1!", "1 0 2"},
    {"broadcast inside a completed cycle", "S1 B R1 S2 R2!", "1 3 4"},
    {"failure at c of a later iteration", "S1 S2 R2 S1 S2 R2 S1 S2 R2!",
     "6 7 8"},
    {"unchecked failure, then the next call", "S1 S2 R2 S1! S2!", "3 4"},
    /* A failure at each position of a three-call cycle. */
    {"3-cycle, position 0", "S5 S7 S7 R7 S5 S7!", "4 5"},
    {"3-cycle, position 1", "S5 S7 S7 R7 S5 S7 S7!", "4 5 6"},
    {"3-cycle, position 2", "S5 S7 S7 R7 S5 S7 S7 R7!", "4 5 6 7"},
    {"3-cycle, between cycles", "S5 S7 S7 R7 S5!", "4"},
    /* Single-call nodes are replayed even when complete, in their place:
     * the reason a task's send and its result's receive share a tag. */
    {"single-call receive replayed", "S1 R2 S1 R2 S1!", "4 3"},
    /* FT_ANY_TAG: a node of its own, never replaced, always replayed. */
    {"any-tag receives kept", "S1 R* S2 R2 R* S2 R2!", "0 1 5 6 4"},
    {"consecutive any-tag receives", "R* R* R*!", "0 1 2"},
    {"any-tag receive inside a cycle splits it", "S2 R* R2 S3!", "2 1 3"},
    /* Failed calls in nodes that are no longer current. */
    {"single-call nodes keep their place", "S1 S2! S3 S1!", "3 1 2"},
    {"failed cycle stays incomplete", "S1 S2 R2! S3 S1!", "4 1 2 3"},
    /* ms_irecv: posted, completed, failed at its wait. */
    {"posted irecv completed", "S2 I2w S3!", "2"},
    {"posted irecv failed at wait", "S2 I2f", "0 1"},
    {"posted irecv still pending", "S2 I2 S3!", "0 1 2"},
    {"irecv failed when posted", "S2 I2!", "0 1"},
    /* A farm: tasks with one tag, results from FT_ANY_SOURCE with another.
     * An answer takes its task out; set-up and unanswered tasks stay. */
    {"farm: answered tasks leave", "S1 A2 S1 A2 S1!", "4"},
    {"farm: set-up kept, the unanswered task replayed", "S9 S1 A2 S1 A2 S1", "0 5"},
    {"farm: answered before the failure", "S9 S1 A2", "0"},
    {"farm: a task of two messages", "S1 S1 A2 S1 S1 A2 S1 S1!", "6 7"},
    {"not a task (a receive in it): logged as before", "S1 R1 A2 S1!", "3 2"},
    {"farm: a failed send is replayed", "S1 A2 S1!", "2"},
    {"answer with the task's tag joins its cycle", "S1 A1 S1!", "0 1 2"},
    {"no task to answer: logged as a receive", "R* A2", "0 1"},
};

Test(mslog, replay_plans, .timeout = 5) {
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    ftmw_mslog log;
    ftmw_mslog_init(&log);
    play(&log, cases[i].seq);
    char got[256];
    plan_str(&log, got, sizeof(got));
    cr_expect_str_eq(got, cases[i].plan, "%s: '%s' replays '%s', want '%s'",
                     cases[i].name, cases[i].seq, got, cases[i].plan);
    ftmw_mslog_clear(&log);
    cr_expect_eq(log.bytes, 0);
    cr_expect_eq(log.ncalls, 0);
  }
}

Test(mslog, sends_keep_a_copy_receives_the_buffer, .timeout = 5) {
  ftmw_mslog log;
  ftmw_mslog_init(&log);
  double x[3] = {1, 2, 3}, y[3];
  ftmw_mslog_call *s = ftmw_mslog_call_new(FTMW_MSLOG_SEND, 4, x, 3, FT_DOUBLE,
                                           sizeof(x));
  ftmw_mslog_call *r = ftmw_mslog_call_new(FTMW_MSLOG_RECV, 4, y, 3, FT_DOUBLE,
                                           sizeof(y));
  ftmw_mslog_add(&log, s);
  ftmw_mslog_add(&log, r);
  x[0] = 99;
  cr_assert_eq(((double *)s->buf)[0], 1.0);
  cr_assert(s->buf != (void *)x);
  cr_assert(r->buf == (void *)y);
  cr_assert_eq(log.bytes, 2 * sizeof(ftmw_mslog_call) + sizeof(x) +
                              sizeof(ftmw_mslog_node));
  ftmw_mslog_clear(&log);
}

/* Figure 4.6's loop, N times, with a payload of 1000 doubles for b: the
 * log holds one instance of each cycle whatever N is. */
static size_t fig46_bytes(int iterations) {
  static double b[1000], c;
  ftmw_mslog log;
  ftmw_mslog_init(&log);
  int a = 0;
  for (int i = 0; i < iterations; i++) {
    ftmw_mslog_add(&log, ftmw_mslog_call_new(FTMW_MSLOG_SEND, 1, &a, 1,
                                             FT_INT, sizeof(a)));
    ftmw_mslog_add(&log, ftmw_mslog_call_new(FTMW_MSLOG_SEND, 2, b, 1000,
                                             FT_DOUBLE, sizeof(b)));
    ftmw_mslog_add(&log, ftmw_mslog_call_new(FTMW_MSLOG_RECV, 2, &c, 1,
                                             FT_DOUBLE, sizeof(c)));
  }
  size_t bytes = log.bytes;
  cr_assert_eq(log.ncalls, iterations ? 3 : 0);
  ftmw_mslog_clear(&log);
  return bytes;
}

Test(mslog, memory_bounded_by_newest_instances, .timeout = 10) {
  size_t one = fig46_bytes(1);
  cr_assert_eq(fig46_bytes(10), one);
  cr_assert_eq(fig46_bytes(100000), one);
  cr_assert_eq(one, 3 * sizeof(ftmw_mslog_call) + sizeof(int) +
                        1000 * sizeof(double) + 2 * sizeof(ftmw_mslog_node));
}

Test(mslog, any_tag_entries_accumulate, .timeout = 5) {
  ftmw_mslog log;
  ftmw_mslog_init(&log);
  int v;
  for (int i = 0; i < 50; i++)
    ftmw_mslog_add(&log, ftmw_mslog_call_new(FTMW_MSLOG_RECV, FT_ANY_TAG, &v,
                                             1, FT_INT, sizeof(v)));
  cr_assert_eq(log.ncalls, 50);
  cr_assert_eq(log.bytes,
               50 * (sizeof(ftmw_mslog_call) + sizeof(ftmw_mslog_node)));
  ftmw_mslog_clear(&log);
}

Test(mslog, replaced_posted_irecv_is_forgotten, .timeout = 5) {
  ftmw_mslog log;
  ftmw_mslog_init(&log);
  int v;
  ftmw_mslog_call *i =
      ftmw_mslog_call_new(FTMW_MSLOG_IRECV, 2, &v, 1, FT_INT, sizeof(v));
  ftmw_mslog_add(&log, i);
  log.posted = i;
  ftmw_mslog_add(&log, ftmw_mslog_call_new(FTMW_MSLOG_SEND, 3, &v, 1, FT_INT,
                                           sizeof(v)));
  ftmw_mslog_add(&log, ftmw_mslog_call_new(FTMW_MSLOG_SEND, 2, &v, 1, FT_INT,
                                           sizeof(v)));
  cr_assert_null(log.posted); /* its record was freed with its instance */
  ftmw_mslog_posted_done(&log, 1); /* the wait then touches nothing */
  ftmw_mslog_clear(&log);
}

/* A record made for an operation that turned out to be a misuse is freed
 * with the node it had reserved. Only a leak checker can tell: the test
 * runs in the sanitizer build (tests/CMakeLists.txt turns leak detection
 * on for the unit tests there) and is skipped elsewhere. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#endif

Test(mslog, record_not_added_is_freed, .timeout = 5) {
#ifdef HAVE_LSAN
  int v = 0;
  ftmw_mslog_call *c =
      ftmw_mslog_call_new(FTMW_MSLOG_SEND, 1, &v, 1, FT_INT, sizeof(v));
  cr_assert_not_null(c);
  ftmw_mslog_call_free(c);
  cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "a record leaked");
#else
  cr_skip_test("needs the leak sanitizer (FTMW_SANITIZE=address)");
#endif
}

/* --- replay: the operations performed, through a fake worker ------------ */

typedef struct {
  char ops[256]; /* "S0 R2 I3 W": kind letter and call position */
  int fail_at;   /* the operation (from 1) that reports the death; 0: none */
  int done;
} fake_worker;

static int fake_op(void *ctx, int kind, ftmw_mslog_call *c) {
  fake_worker *f = ctx;
  if (++f->done == f->fail_at)
    return FT_ERR_PEER_FAILED;
  size_t len = strlen(f->ops);
  if (kind == FTMW_MSLOG_WAIT)
    snprintf(f->ops + len, sizeof(f->ops) - len, "%sW", len ? " " : "");
  else
    snprintf(f->ops + len, sizeof(f->ops) - len, "%s%c%d", len ? " " : "",
             "?SRI"[kind], *(int *)c->buf);
  return FT_SUCCESS;
}

/* Replays seq's log with the worker dying at operation fail_at (0: never);
 * returns the operations done in the replay that succeeded. */
static void replay_wait(const char *seq, int fail_at, int wait_last,
                        char *ops, size_t size, ftmw_mslog *log) {
  ftmw_mslog_init(log);
  play(log, seq);
  int n;
  fake_worker f = {.fail_at = fail_at};
  if (fail_at) {
    cr_assert_eq(ftmw_mslog_replay(log, fake_op, &f, wait_last, &n),
                 FT_ERR_PEER_FAILED);
    f = (fake_worker){0}; /* the next incarnation lives */
  }
  cr_assert_eq(ftmw_mslog_replay(log, fake_op, &f, wait_last, &n), FT_SUCCESS);
  snprintf(ops, size, "%s", f.ops);
}

/* ms_restore's replay. */
static void replay_str(const char *seq, int fail_at, char *ops, size_t size,
                       ftmw_mslog *log) {
  replay_wait(seq, fail_at, 1, ops, size, log);
}

static const struct {
  const char *name, *seq, *ops;
} replays[] = {
    {"figure 4.6, failure at c", "S1 S2 R2 S1 S2 R2!", "S3 S4 R5"},
    {"posted irecv waited for by the program: completed",
     "S2 I2f", "S0 I1 W"},
    {"posted irecv not waited for yet: left posted", "S2 I2 S3!", "S0 I1 S2"},
    {"irecv failed when posted: posted again", "S2 I2!", "S0 I1"},
    {"irecv completed before the next receive", "S2 I2w S2 R2 S3 S2 I2w R2!",
     "S5 I6 W R7 S4"}, /* S4: a single-call node, always replayed */
    {"sends pass a posted irecv", "S1 I1w S1 I1f", "S0 I1 S2 W I3 W"},
};

Test(mslog, replay_operations, .timeout = 5) {
  for (size_t i = 0; i < sizeof(replays) / sizeof(replays[0]); i++) {
    ftmw_mslog log;
    char ops[256];
    replay_str(replays[i].seq, 0, ops, sizeof(ops), &log);
    cr_expect_str_eq(ops, replays[i].ops, "%s: '%s' replays '%s', want '%s'",
                     replays[i].name, replays[i].seq, ops, replays[i].ops);
    ftmw_mslog_clear(&log);
  }
}

/* A second death at any operation of the replay: the next replay does
 * exactly what the first should have, and afterwards the log counts the
 * replayed cycle as done (a later failure does not replay it again). */
Test(mslog, death_during_replay_replays_the_same, .timeout = 5) {
  /* The program went on after the failure in cycle 2 and failed again in
   * cycle 3 before restoring: both cycles are replayed. */
  const char *seq = "S1 S2 S2 R2! S3 S3!";
  const char *want = "S0 S1 S2 R3 S4 S5";
  for (int k = 1; k <= 6; k++) {
    ftmw_mslog log;
    char ops[256];
    replay_str(seq, k, ops, sizeof(ops), &log);
    cr_expect_str_eq(ops, want, "death at replayed operation %d: '%s'", k, ops);
    /* The cycles are now complete once another tag follows. */
    ftmw_mslog_call *c =
        ftmw_mslog_call_new(FTMW_MSLOG_SEND, 1, &values[0], 1, FT_INT, sizeof(int));
    c->state = FTMW_MSLOG_FAILED;
    ftmw_mslog_add(&log, c);
    char got[64];
    plan_str(&log, got, sizeof(got));
    cr_expect_str_eq(got, "0", "after the replay: '%s'", got);
    ftmw_mslog_clear(&log);
  }
}

Test(mslog, irecv_left_posted_is_pending_again, .timeout = 5) {
  ftmw_mslog log;
  char ops[256];
  replay_str("S2 I2!", 0, ops, sizeof(ops), &log);
  cr_assert_not_null(log.posted);
  cr_assert_eq(log.posted->state, FTMW_MSLOG_PENDING);
  ftmw_mslog_posted_done(&log, 1); /* the program's ft_wait completes it */
  cr_assert_null(log.posted);
  ftmw_mslog_clear(&log);
}

/* ms_irestore of a worker that died after its answer came and before its
 * next task: the cycle is not closed, so it is replayed, and the irecv
 * the program's wait completed is completed by the replay (W), as
 * ms_restore does, and not left posted, where the program's next wait
 * would take the same answer again (ftmw-sim seed 3453569 found it). */
Test(mslog, irestore_completes_an_answered_irecv, .timeout = 5) {
  for (int wait_last = 0; wait_last <= 1; wait_last++) {
    ftmw_mslog log;
    char ops[256];
    replay_wait("S2 I2w", 0, wait_last, ops, sizeof(ops), &log);
    cr_expect_str_eq(ops, "S0 I1 W", "wait_last %d: '%s'", wait_last, ops);
    cr_expect_null(log.posted, "wait_last %d: left posted", wait_last);
    ftmw_mslog_clear(&log);
  }
}

/* ms_irestore: the irecv the program had waited for is posted again and
 * left for its next wait (no W at the end), pending as a new one; one
 * that a receive followed in the cycle is still completed first. */
Test(mslog, irestore_leaves_the_waited_irecv_posted, .timeout = 5) {
  static const struct {
    const char *seq, *ops;
  } cases[] = {
      {"S2 I2f", "S0 I1"},
      {"S1 I1w S1 I1f", "S0 I1 S2 W I3"},
      {"S2 I2w S2 R2 S3 S2 I2w R2!", "S5 I6 W R7 S4"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    ftmw_mslog log;
    char ops[256];
    replay_wait(cases[i].seq, 0, 0, ops, sizeof(ops), &log);
    cr_expect_str_eq(ops, cases[i].ops, "'%s' replays '%s', want '%s'",
                     cases[i].seq, ops, cases[i].ops);
    if (i < 2) {
      cr_assert_not_null(log.posted, "'%s': left posted", cases[i].seq);
      cr_expect_eq(log.posted->state, FTMW_MSLOG_PENDING);
      cr_expect_eq(log.posted->completion_tried, 0);
      ftmw_mslog_posted_done(&log, 0); /* the new worker dies too */
      char again[256];
      fake_worker f = {0};
      int n;
      cr_assert_eq(ftmw_mslog_replay(&log, fake_op, &f, 0, &n), FT_SUCCESS);
      snprintf(again, sizeof(again), "%s", f.ops);
      cr_expect_str_eq(again, ops, "'%s' after a second death: '%s'",
                       cases[i].seq, again);
    }
    ftmw_mslog_clear(&log);
  }
}
