/* Job-level checks of the ft_* API, run through ftmwrun by ctest.
 * Usage: job_api MODE   (api | isend | isendfail | posted | ms | msfail | big |
 *                        busy | wakeups | hang | rogue | deadfin | orphan |
 *                        farm)
 * Exits 0 when every check of the mode passed; prints what failed. */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "ftmw_farm.h"
#include "ftmw_impl.h" /* rogue mode reads the master's listening address */
#include "transport.h"

#include "check.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- api: misuse codes and ordinary traffic ------------------------------ */

static void api_master(int W) {
  int x = 1, r;
  FT_Status st;
  expect_err(ft_send(&x, 1, FT_INT, 0, 0), 0, FT_ERR_RANK, "send to rank 0");
  expect_err(ft_send(&x, 1, FT_INT, W + 1, 0), 0, FT_ERR_RANK, "send to W+1");
  expect_err(ft_send(&x, -1, FT_INT, 1, 0), 0, FT_ERR_COUNT, "negative count");
  expect_err(ft_send(NULL, 1, FT_INT, 1, 0), 0, FT_ERR_BUFFER, "NULL buffer");
  expect_err(ft_send(&x, 1, (FT_Datatype)99, 1, 0), 0, FT_ERR_TYPE, "bad type");
  expect_err(ft_send(&x, 1, FT_INT, 1, -5), 0, FT_ERR_TAG, "negative tag");
  /* 2^31-1 doubles is 16 GiB, over the 4 GiB limit: refused before any
   * byte of the (1-int) buffer is read. */
  expect_err(ft_send(&x, 2147483647, FT_DOUBLE, 1, 0), 0, FT_ERR_TOO_BIG, "over the size limit");
  expect_err(ft_recv(&x, 1, FT_INT, 1, -7, &st), 0, FT_ERR_TAG, "recv tag -7");
  expect_err(ft_restore(1), 0, FT_ERR_NOT_FAILED, "restore of a live worker");
  expect_err(ft_wait(1), 0, FT_ERR_NOT_POSTED, "wait without irecv");
  expect_err(ft_waitany(&r), -1, FT_ERR_NONE_POSTED, "waitany without irecv");
  expect_err(ft_waitany(NULL), -1, FT_ERR_NULL_ARG, "waitany(NULL)");
  CHECK(ft_test(1) == 0 && ft_testany() == 0, "no failure expected");
  CHECK(ft_is_primary() == 1, "master is primary");
  for (int w = 1; w <= W; w++)
    CHECK(ft_send(&w, 1, FT_INT, w, 3) == 1, "send to %d: %s", w, ft_strerror(ft_error()));
  /* Every worker answers {rank, rank*10}: a too-small buffer leaves the
   * message queued, then the right size receives it. */
  int two[2];
  CHECK(ft_recv(two, 1, FT_INT, 1, 4, &st) == 0 && ft_error() == FT_ERR_TRUNCATE &&
            st.count == 2,
        "truncation: %s count %d", ft_errname(ft_error()), st.count);
  CHECK(ft_recv(two, 2, FT_INT, 1, 4, &st) == 2 && two[0] == 1 && two[1] == 10 &&
            st.source == 1 && st.tag == 4,
        "receive after truncation");
  int got[64] = {0};
  for (int w = 2; w <= W; w++) /* posted receives, completed in any order */
    CHECK(ft_irecv(&got[2 * w], 2, FT_INT, w, FT_ANY_TAG) == 1, "irecv %d", w);
  for (int n = 2; n <= W; n++) {
    int w = ft_waitany(&r);
    CHECK(w >= 2 && w == r && got[2 * w] == w && got[2 * w + 1] == 10 * w, "waitany got %d", w);
  }
  /* Zero-count message: returns 0 with FT_SUCCESS. */
  CHECK(ft_recv(NULL, 0, FT_INT, FT_ANY_SOURCE, 9, &st) == 0 && ft_error() == FT_SUCCESS &&
            st.count == 0,
        "zero-count message: %s", ft_errname(ft_error()));
}

static void api_worker(int rank) {
  int x = 0, r;
  FT_Status st;
  expect_err(ft_send(&x, 1, FT_INT, 1, 0), 0, FT_ERR_RANK, "worker send to a worker");
  expect_err(ft_restore(1), 0, FT_ERR_ROLE, "worker restore");
  expect_err(ft_irecv(&x, 1, FT_INT, 0, 0), 0, FT_ERR_ROLE, "worker irecv");
  expect_err(ft_waitany(&r), -1, FT_ERR_ROLE, "worker waitany");
  CHECK(ft_is_primary() == 0, "worker is not primary");
  CHECK(ft_recv(&x, 1, FT_INT, 0, FT_ANY_TAG, &st) == 1 && x == rank && st.tag == 3,
        "worker %d received %d", rank, x);
  int two[2] = {rank, rank * 10};
  CHECK(ft_send(two, 2, FT_INT, 0, 4) == 2, "reply");
  if (rank == 1)
    CHECK(ft_send(NULL, 0, FT_INT, 0, 9) == 0 && ft_error() == FT_SUCCESS, "zero send");
}

static double sum(const double *v, int n);

/* --- ms: the ms_* calls' misuse codes, what they log, and the log's size */

#define MS_B 1000 /* doubles in b, figure 4.6's tag-2 send */

/* One iteration of figure 4.6's loop with worker w: a (tag 1), then the
 * cycle b, c (tag 2); c is the sum of b. */
static void ms_iteration(int w, int k) {
  static double b[MS_B];
  double c = -1;
  FT_Status st;
  for (int i = 0; i < MS_B; i++)
    b[i] = k + i;
  CHECK(ms_send(&k, 1, FT_INT, w, 1) == 1, "ms_send a: %s", ft_errname(ft_error()));
  CHECK(ms_send(b, MS_B, FT_DOUBLE, w, 2) == MS_B, "ms_send b: %s", ft_errname(ft_error()));
  CHECK(ms_rcv(&c, 1, FT_DOUBLE, w, 2, &st) == 1 && c == MS_B * (k + (MS_B - 1) / 2.0),
        "ms_rcv c = %g: %s", c, ft_errname(ft_error()));
}

static void ms_master(int W) {
  int x = 1, two[2];
  FT_Status st;
  expect_err(ms_send(&x, 1, FT_INT, 0, 1), 0, FT_ERR_RANK, "ms_send to rank 0");
  expect_err(ms_send(&x, 1, FT_INT, W + 1, 1), 0, FT_ERR_RANK, "ms_send to W+1");
  expect_err(ms_send(&x, 1, FT_INT, 1, FT_ANY_TAG), 0, FT_ERR_TAG, "ms_send FT_ANY_TAG");
  expect_err(ms_send(&x, -1, FT_INT, 1, 1), 0, FT_ERR_COUNT, "ms_send count -1");
  expect_err(ms_send(NULL, 1, FT_INT, 1, 1), 0, FT_ERR_BUFFER, "ms_send NULL");
  expect_err(ms_irecv(&x, 1, (FT_Datatype)0, 1, 1), 0, FT_ERR_TYPE, "ms_irecv type 0");
  expect_err(ms_recv(&x, 1, FT_INT, 1, -3, &st), 0, FT_ERR_TAG, "ms_recv tag -3");
  expect_err(ms_restore(1), 0, FT_ERR_NOT_FAILED, "ms_restore of a live worker");
  expect_err(ms_irestore(1), 0, FT_ERR_NOT_FAILED, "ms_irestore of a live worker");
  expect_err(ms_irestore(W + 1), 0, FT_ERR_RANK, "ms_irestore past the workers");
  expect_err(ms_restore(0), 0, FT_ERR_RANK, "ms_restore(0)");
  expect_err((int)ms_log_size(W + 1), 0, FT_ERR_RANK, "ms_log_size(W+1)");
  CHECK(ms_log_size(1) == 0 && ft_error() == FT_SUCCESS, "empty log");

  /* The log holds the newest instance of each cycle: the same size after
   * 10 iterations as after 1000. A misuse between two calls of a cycle
   * changes nothing (a bad call with tag 1 would otherwise replace a). */
  ms_iteration(1, 1);
  size_t one = ms_log_size(1);
  expect_err(ms_send(&x, -1, FT_INT, 1, 1), 0, FT_ERR_COUNT, "bad call with tag 1");
  CHECK(ms_log_size(1) == one, "a misuse changed the log: %zu, was %zu", ms_log_size(1), one);
  for (int k = 2; k <= 10; k++)
    ms_iteration(1, k);
  size_t ten = ms_log_size(1);
  for (int k = 11; k <= 1000; k++)
    ms_iteration(1, k);
  size_t thousand = ms_log_size(1);
  CHECK(one == ten && ten == thousand, "log size %zu, %zu, %zu after 1, 10, 1000 iterations",
        one, ten, thousand);
  CHECK(one >= MS_B * sizeof(double), "the log holds b's copy (%zu bytes)", one);
  printf("ms log: worker 1 holds %zu bytes after 1, 10 and 1000 iterations (b is %zu bytes)\n",
         thousand, MS_B * sizeof(double));

  /* FT_ANY_SOURCE receives are logged with the worker that answered, and
   * a truncated receive is not logged at all. */
  size_t before = ms_log_size(2);
  CHECK(ms_send(&x, 1, FT_INT, 2, 7) == 1, "ms_send to 2");
  size_t after_send = ms_log_size(2);
  CHECK(after_send > before, "ms_send logged");
  CHECK(ms_recv(two, 1, FT_INT, FT_ANY_SOURCE, 7, &st) == 0 && ft_error() == FT_ERR_TRUNCATE,
        "truncated ms_recv: %s", ft_errname(ft_error()));
  CHECK(ms_log_size(2) == after_send, "a truncated receive was logged");
  CHECK(ms_recv(two, 2, FT_INT, FT_ANY_SOURCE, 7, &st) == 2 && st.source == 2 && two[1] == 20,
        "ms_recv ANY_SOURCE: %s from %d", ft_errname(ft_error()), st.source);
  CHECK(ms_log_size(2) > after_send, "ANY_SOURCE receive logged for worker 2");
  /* ms_irecv, completed by ft_waitany. */
  CHECK(ms_send(&x, 1, FT_INT, 2, 8) == 1 && ms_irecv(two, 2, FT_INT, 2, 8) == 1, "ms_irecv");
  int r;
  CHECK(ft_waitany(&r) == 2 && two[1] == 20, "waitany after ms_irecv: %d", r);
}

/* Answers tag 2 with the sum of the doubles, tag 7 and 8 with {rank,
 * rank*10}; ignores tag 1. Stops when the master finishes. */
static void ms_worker(int rank) {
  static double b[MS_B];
  FT_Status st;
  int x = 0;
  expect_err(ms_send(&x, 1, FT_INT, 0, 1), 0, FT_ERR_ROLE, "worker ms_send");
  expect_err(ms_recv(&x, 1, FT_INT, 0, 1, &st), 0, FT_ERR_ROLE, "worker ms_recv");
  expect_err(ms_restore(1), 0, FT_ERR_ROLE, "worker ms_restore");
  expect_err(ms_irestore(1), 0, FT_ERR_ROLE, "worker ms_irestore");
  expect_err((int)ms_log_size(1), 0, FT_ERR_ROLE, "worker ms_log_size");
  for (;;) {
    int n = ft_recv(b, MS_B, FT_DOUBLE, 0, FT_ANY_TAG, &st);
    if (n == 0 && ft_error() != FT_SUCCESS)
      return;
    if (st.tag == 2) {
      double c = sum(b, MS_B);
      ft_send(&c, 1, FT_DOUBLE, 0, 2);
    } else if (st.tag == 7 || st.tag == 8) {
      int two[2] = {rank, rank * 10};
      ft_send(two, 2, FT_INT, 0, st.tag);
    }
  }
}

/* --- big: 64 MiB each way -------------------------------------------------- */

#define BIG (8 * 1024 * 1024) /* doubles: 64 MiB */

static double sum(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    s += v[i];
  return s;
}

static void big(int rank) {
  double *v = malloc(BIG * sizeof(double));
  FT_Status st;
  if (rank == 0) {
    for (int i = 0; i < BIG; i++)
      v[i] = i * 0.5;
    double want = sum(v, BIG);
    double t0 = now_s();
    CHECK(ft_send(v, BIG, FT_DOUBLE, 1, 1) == BIG, "send 64 MiB: %s", ft_strerror(ft_error()));
    memset(v, 0, BIG * sizeof(double));
    CHECK(ft_recv(v, BIG, FT_DOUBLE, 1, 2, &st) == BIG, "recv 64 MiB");
    CHECK(sum(v, BIG) == 2 * want, "payload changed");
    printf("64 MiB round trip in %.3f s\n", now_s() - t0);
  } else if (rank == 1) {
    CHECK(ft_recv(v, BIG, FT_DOUBLE, 0, 1, &st) == BIG, "worker recv 64 MiB");
    for (int i = 0; i < BIG; i++)
      v[i] *= 2;
    CHECK(ft_send(v, BIG, FT_DOUBLE, 0, 2) == BIG, "worker send 64 MiB");
  }
  free(v);
}

/* --- busy: a process computing between calls still answers ------------- */

/* A call that waits runs the transport's loop itself; between calls the
 * I/O thread must take it back: a process that computes for longer than
 * FT_TIMEOUT_MS (without calling FTMW) keeps heartbeating, and data sent
 * to it meanwhile is acknowledged at once, so the sender's ft_send does
 * not wait for the computation to end. Worker 1 computes first, then the
 * master. */
#define BUSY_S 2.5
#define BUSY_ACK_S 0.5 /* far below BUSY_S: an ACK that waited shows */

static void compute(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0)
    ;
}

static void busy(int rank) {
  int x = 0;
  FT_Status st;
  if (rank == 0) {
    CHECK(ft_send(&x, 1, FT_INT, 1, 1) == 1, "first send");
    double t0 = now_s();
    CHECK(ft_send(&x, 1, FT_INT, 1, 2) == 1, "send to a busy worker: %s",
          ft_errname(ft_error()));
    double acked = now_s() - t0;
    CHECK(acked < BUSY_ACK_S, "send to a busy worker took %.3f s", acked);
    CHECK(ft_recv(&x, 1, FT_INT, 1, 3, &st) == 1 && x == 3,
          "the worker, busy for %.1f s, is alive: %s", BUSY_S,
          ft_errname(ft_error()));
    compute(BUSY_S); /* the worker sends meanwhile */
    CHECK(ft_recv(&x, 1, FT_INT, 1, 4, &st) == 1, "recv after computing");
    CHECK(ft_recv(&x, 1, FT_INT, 1, 5, &st) == 1 && x == 1,
          "the worker's send to the busy master waited");
    printf("busy: a send to a computing worker was acknowledged in %.1f ms\n",
           acked * 1000);
  } else if (rank == 1) {
    CHECK(ft_recv(&x, 1, FT_INT, 0, 1, &st) == 1, "first recv");
    compute(BUSY_S); /* the master sends meanwhile */
    CHECK(ft_recv(&x, 1, FT_INT, 0, 2, &st) == 1, "recv after computing");
    x = 3;
    CHECK(ft_send(&x, 1, FT_INT, 0, 3) == 1, "reply");
    compute(0.2); /* the master is computing by now */
    double t0 = now_s();
    CHECK(ft_send(&x, 1, FT_INT, 0, 4) == 1, "send to the busy master: %s",
          ft_errname(ft_error()));
    x = now_s() - t0 < BUSY_ACK_S;
    CHECK(ft_send(&x, 1, FT_INT, 0, 5) == 1, "verdict to the master");
  }
}

/* --- wakeups: the I/O thread sleeps while the application calls -------- */

/* A master and worker 1 exchange WAKE_ROUNDS tasks, the worker computing
 * 200 us on each: an application that calls again within the linger
 * (10 ms) reads and writes everything itself, and its I/O thread must not
 * wake for each message (it woke once or twice a round before 2026-11-27:
 * the 32-worker blocking farm lost a fifth of its speed to it). Each side
 * counts its I/O thread's voluntary context switches over the rounds; it
 * may wake about once a linger (100/s) and for heartbeats, given here
 * 250/s of the rounds' time, plus a quarter of the rounds. */
#define WAKE_ROUNDS 2000

static long io_thread_switches(void) {
  char path[320], comm[32], line[128];
  long n = -1;
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    int io = f && fgets(comm, sizeof(comm), f) && strcmp(comm, "ftmw-io\n") == 0;
    if (f)
      fclose(f);
    snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
    f = io ? fopen(path, "r") : NULL;
    while (f && fgets(line, sizeof(line), f))
      if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
        n = atol(line + 24);
    if (f)
      fclose(f);
  }
  if (d)
    closedir(d);
  return n;
}

static void wakeups(int rank) {
  if (rank > 1)
    return;
  int x = 0;
  FT_Status st;
  long before = io_thread_switches();
  double t0 = now_s();
  for (int i = 0; i < WAKE_ROUNDS; i++) {
    if (rank == 0) {
      CHECK(ft_send(&i, 1, FT_INT, 1, 1) == 1, "task %d: %s", i, ft_errname(ft_error()));
      CHECK(ft_recv(&x, 1, FT_INT, 1, 2, &st) == 1 && x == i, "result %d", i);
    } else {
      CHECK(ft_recv(&x, 1, FT_INT, 0, 1, &st) == 1 && x == i, "task %d", i);
      compute(200e-6);
      CHECK(ft_send(&x, 1, FT_INT, 0, 2) == 1, "result %d: %s", i, ft_errname(ft_error()));
    }
  }
  double secs = now_s() - t0;
  long woke = io_thread_switches() - before, bound = WAKE_ROUNDS / 4 + (long)(250 * secs);
  CHECK(before >= 0, "no thread named ftmw-io in this process");
  CHECK(woke <= bound, "rank %d: the I/O thread woke %ld times in %d rounds (%.2f s), over %ld",
        rank, woke, WAKE_ROUNDS, secs, bound);
  printf("wakeups: rank %d: the I/O thread woke %ld times in %d rounds of %.0f us\n",
         rank, woke, WAKE_ROUNDS, secs / WAKE_ROUNDS * 1e6);
}

/* --- hang: SIGSTOP is detected within FT_TIMEOUT_MS + one heartbeat ------ */
/* ...of the master's running time: while its own loop did not run (a
 * loaded machine), it watched nobody, and its deadlines moved on. The
 * master stops the worker itself, so the silence starts no later than its
 * own clock says, and the detection is the library's own moment
 * (failed_at): how soon the application thread then wakes up is the
 * machine's scheduling, printed apart. */

static void hang(int rank) {
  double msg[2];
  FT_Status st;
  if (rank == 1) {
    msg[0] = getpid();
    msg[1] = 0;
    ft_send(msg, 2, FT_DOUBLE, 0, 1);
    /* Waits, heartbeating, until the master stops it (and kills it). */
    ft_recv(msg, 2, FT_DOUBLE, 0, 2, &st);
    return;
  }
  if (rank != 0)
    return;
  CHECK(ft_recv(msg, 2, FT_DOUBLE, 1, 1, &st) == 2, "pid message");
  uint64_t stalled0 = ftmw_transport_stalled_ms(&ftmw_default_ctx);
  double stop_s = now_s();
  CHECK(kill((pid_t)msg[0], SIGSTOP) == 0, "SIGSTOP worker 1");
  int r = ft_recv(msg, 2, FT_DOUBLE, 1, 1, &st);
  double reported_ms = (now_s() - stop_s) * 1000;
  double stalled_ms =
      (double)(ftmw_transport_stalled_ms(&ftmw_default_ctx) - stalled0);
  double detected_ms =
      ((double)ftmw_default_ctx.st.workers[1].failed_at / 1e9 - stop_s) * 1000;
  kill((pid_t)msg[0], SIGKILL);
  const char *to = getenv("FT_TIMEOUT_MS"), *hb = getenv("FT_HEARTBEAT_MS");
  /* A tick may come up to a heartbeat late before it counts as a stall:
   * the master's tick that declares it, or the worker's that sent its
   * last heartbeat before the stop (silence counts from that). */
  double bound = atof(to) + 2 * atof(hb), least = atof(to) - 2 * atof(hb);
  CHECK(r == 0 && ft_error() == FT_ERR_PEER_FAILED && st.source == 1,
        "stopped worker reported: %s", ft_errname(ft_error()));
  CHECK(detected_ms >= least && detected_ms - stalled_ms <= bound,
        "detected after %.0f ms (%.0f of them stalled), want within [%.0f, "
        "%.0f + stalls]", detected_ms, stalled_ms, least, bound);
  CHECK(ft_test(1) == 1 && ft_testany() == 1, "test/testany after hang");
  printf("SIGSTOP detected after %.0f ms (timeout %s ms, heartbeat %s ms; the "
         "master stalled %.0f ms meanwhile), reported after %.0f ms\n",
         detected_ms, to, hb, stalled_ms, reported_ms);
}

/* --- rogue: garbage and wrong secrets are dropped; the job carries on ----- */

static int rogue_connect(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons(ftmw_default_ctx.st.listen_port)};
  inet_pton(AF_INET, ftmw_default_ctx.st.listen_ip, &a.sin_addr);
  struct timeval tv = {60, 0}; /* longer than any limit of rogue_try */
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Sends bytes and checks that the master closes the connection within
 * limit_s seconds. */
static void rogue_try(const char *what, const void *bytes, size_t len,
                      double limit_s) {
  int fd = rogue_connect();
  CHECK(fd >= 0, "%s: connect", what);
  if (fd < 0)
    return;
  ssize_t w = write(fd, bytes, len);
  (void)w;
  char buf[256];
  double t0 = now_s();
  uint64_t stalled0 =
      ftmw_transport_stalled_ms(&ftmw_default_ctx); /* deadlines move on */
  ssize_t n = read(fd, buf, sizeof(buf)); /* 0 (EOF) or -1 (reset): dropped */
  double took = now_s() - t0;
  double stalled_s =
      (double)(ftmw_transport_stalled_ms(&ftmw_default_ctx) - stalled0) / 1000;
  CHECK(n <= 0, "%s: the master answered %zd bytes instead of closing", what, n);
  CHECK(took - stalled_s < limit_s, "%s: not dropped within %.1f s (%.1f s, "
        "%.1f s of them stalled)", what, limit_s, took, stalled_s);
  close(fd);
}

static void rogue(int rank, int W) {
  int x;
  FT_Status st;
  if (rank != 0) {
    CHECK(ft_recv(&x, 1, FT_INT, 0, 1, &st) == 1, "worker recv");
    x += rank;
    CHECK(ft_send(&x, 1, FT_INT, 0, 1) == 1, "worker send");
    return;
  }
  char garbage[300];
  for (size_t i = 0; i < sizeof(garbage); i++)
    garbage[i] = (char)(i * 37 + 11);
  rogue_try("garbage", garbage, sizeof(garbage), 4.5);
  uint8_t frame[FTMW_HDR_SIZE + FTMW_HELLO_SIZE];
  ftmw_hello m = {.role = FTMW_ROLE_WORKER, .id = 1, .epoch = 0, .at = {.pid = 1}};
  memset(m.secret, 0x5a, sizeof(m.secret)); /* wrong secret */
  ftmw_hdr h = {.type = FTMW_FRAME_HELLO, .src = 1, .dst = FTMW_PID_MASTER(0), .len = FTMW_HELLO_SIZE};
  ftmw_wire_encode(frame, &h);
  ftmw_wire_encode_hello(frame + FTMW_HDR_SIZE, &m);
  rogue_try("wrong secret", frame, sizeof(frame), 4.5);
  ftmw_hdr d = {.type = FTMW_FRAME_DATA, .src = 1, .dst = FTMW_PID_MASTER(0), .len = (uint64_t)1 << 32};
  ftmw_wire_encode(frame, &d);
  rogue_try("unauthenticated 4 GiB DATA", frame, FTMW_HDR_SIZE, 4.5);
  /* Silent client: dropped at the handshake deadline, 10 x FT_TIMEOUT_MS
   * (docs/limits.md: joins wait longer). */
  const char *to = getenv("FT_TIMEOUT_MS");
  rogue_try("silent", "", 0, 10 * atof(to ? to : "3000") / 1000 + 2.5);
  for (int w = 1; w <= W; w++) {
    x = 100 * w;
    CHECK(ft_send(&x, 1, FT_INT, w, 1) == 1, "send after rogues");
    CHECK(ft_recv(&x, 1, FT_INT, w, 1, &st) == 1 && x == 101 * w, "recv after rogues");
  }
}

/* --- msfail: ms_restore behind FT_ANY_SOURCE receives and ft_wait ------ */

#define MSF_ROUNDS 4
#define MSF_ALL (3 * MSF_ROUNDS)

static int msf_answer(int w, int task) { return 1000 * w + task; }

/* Run with workers killed (FT_FAULT in tests/CMakeLists.txt). Rounds 1..4:
 * a task to every worker, the answers taken with ms_recv(FT_ANY_SOURCE),
 * which after a reported failure restores and receives again.
 * Rounds 5..8: a task and an ms_irecv per worker, completed by ft_wait.
 * Rounds 9..12: the same, restored by ms_irestore, which leaves the
 * receive posted: ft_wait completes it, or reports the new worker's death
 * (restored again). Each cycle alternates its tag. Every answer must
 * arrive exactly once, from the right worker, whatever dies. */
static int msf_restore(int k, int w) {
  return k > 2 * MSF_ROUNDS ? ms_irestore(w) : ms_restore(w);
}

static void msfail_master(int W) {
  int got[64][MSF_ALL + 1] = {{0}}, res[64];
  FT_Status st;
  for (int k = 1; k <= MSF_ALL; k++) {
    int tag = 10 + (k & 1);
    for (int w = 1; w <= W; w++) {
      int task = k;
      if (ms_send(&task, 1, FT_INT, w, tag) == 0)
        CHECK(msf_restore(k, w) == 1, "restore %d at send: %s", w, ft_errname(ft_error()));
      if (k > MSF_ROUNDS && ms_irecv(&res[w], 1, FT_INT, w, tag) == 0)
        CHECK(msf_restore(k, w) == 1, "restore %d at irecv: %s", w, ft_errname(ft_error()));
    }
    for (int n = 1; n <= W; n++) {
      int w = n, v = -1;
      if (k <= MSF_ROUNDS) {
        /* A failure reported here received nothing: restore, then receive
         * again (the worker's answer, if it owed one, comes from the
         * replayed task; otherwise another worker's). */
        while (ms_recv(&v, 1, FT_INT, FT_ANY_SOURCE, tag, &st) == 0) {
          CHECK(ft_error() == FT_ERR_PEER_FAILED, "ANY_SOURCE: %s", ft_errname(ft_error()));
          if (ft_error() != FT_ERR_PEER_FAILED || ms_restore(st.source) != 1) {
            CHECK(0, "restore %d: %s", st.source, ft_errname(ft_error()));
            return;
          }
        }
        w = st.source;
      } else if (k <= 2 * MSF_ROUNDS) {
        if (ft_wait(w) == 0)
          CHECK(ms_restore(w) == 1, "restore %d at wait: %s", w, ft_errname(ft_error()));
        v = res[w];
      } else {
        int tries = 0;
        while (ft_wait(w) == 0 && ++tries < 4) {
          CHECK(ft_error() == FT_ERR_PEER_FAILED, "wait %d: %s", w, ft_errname(ft_error()));
          /* The receive is posted again, not completed: the next wait. */
          CHECK(ms_irestore(w) == 1, "irestore %d at wait: %s", w, ft_errname(ft_error()));
        }
        CHECK(tries < 4, "round %d: worker %d never answered", k, w);
        v = res[w];
      }
      CHECK(w >= 1 && w <= W && v == msf_answer(w, k), "round %d: %d from %d", k, v, w);
      if (w >= 1 && w <= W)
        got[w][k]++;
    }
    for (int w = 1; w <= W; w++)
      CHECK(got[w][k] == 1, "round %d: worker %d answered %d times", k, w, got[w][k]);
  }
}

static void msfail_worker(int rank) {
  FT_Status st;
  int task;
  while (ft_recv(&task, 1, FT_INT, 0, FT_ANY_TAG, &st) == 1) {
    int a = msf_answer(rank, task);
    if (ft_send(&a, 1, FT_INT, 0, st.tag) != 1)
      return;
  }
}

/* --- isend: non-blocking sends and their requests ------------------------ */

#define NISEND 100
#define ISEND_QUIET_S 4 /* worker 1 makes no call for this long at the end */

static void isend_master(int W) {
  int x = 1, idx;
  FT_Request req = (FT_Request)&x, reqs[NISEND + 1];
  FT_Status st, sts[NISEND + 1];
  expect_err(ft_isend(&x, 1, FT_INT, 0, 0, &req), 0, FT_ERR_RANK, "isend to rank 0");
  CHECK(req == FT_REQUEST_NULL, "no request made by a refused isend");
  expect_err(ft_isend(&x, -1, FT_INT, 1, 0, &req), 0, FT_ERR_COUNT, "isend count -1");
  expect_err(ft_isend(NULL, 1, FT_INT, 1, 0, &req), 0, FT_ERR_BUFFER, "isend NULL buffer");
  expect_err(ft_isend(&x, 1, (FT_Datatype)99, 1, 0, &req), 0, FT_ERR_TYPE, "isend bad type");
  expect_err(ft_isend(&x, 1, FT_INT, 1, -1, &req), 0, FT_ERR_TAG, "isend tag -1");
  expect_err(ft_request_wait(NULL, &st), 0, FT_ERR_NULL_ARG, "wait(NULL)");
  expect_err(ft_request_test(&req, NULL, &st), 0, FT_ERR_NULL_ARG, "test without done");
  expect_err(ft_request_waitall(-1, reqs, NULL), 0, FT_ERR_COUNT, "waitall(-1)");
  expect_err(ft_request_waitall(2, NULL, NULL), 0, FT_ERR_NULL_ARG, "waitall(2, NULL)");
  expect_err(ft_request_waitany(1, reqs, NULL, &st), 0, FT_ERR_NULL_ARG, "waitany no index");
  expect_err(ft_request_wait(&req, &st), 0, FT_SUCCESS, "wait on a null request");
  CHECK(st.source == FT_ANY_SOURCE && st.count == 0, "null request's status");
  reqs[0] = reqs[1] = FT_REQUEST_NULL;
  expect_err(ft_request_waitany(2, reqs, &idx, &st), 0, FT_SUCCESS, "waitany on nulls");
  CHECK(idx == -1, "waitany on nulls: index %d", idx);
  /* To each worker: 0..NISEND-1 in order, sent by ft_isend (with and
   * without a request) and, in the middle, by ft_send. */
  for (int w = 1; w <= W; w++) {
    int n = 0;
    for (int k = 0; k < NISEND; k++) {
      int v = k;
      if (k == NISEND / 2)
        CHECK(ft_send(&v, 1, FT_INT, w, 1) == 1, "ft_send between isends");
      else if (k % 3 == 0)
        CHECK(ft_isend(&v, 1, FT_INT, w, 1, NULL) == 1, "isend without request");
      else
        CHECK(ft_isend(&v, 1, FT_INT, w, 1, &reqs[n++]) == 1, "isend %d to %d", k, w);
      v = -1; /* the data was copied */
    }
    CHECK(ft_request_waitall(n, reqs, sts) == 1, "waitall: %s", ft_errname(ft_error()));
    for (int i = 0; i < n; i++)
      CHECK(reqs[i] == FT_REQUEST_NULL && sts[i].source == w && sts[i].count == 1 &&
                sts[i].error == FT_SUCCESS && sts[i].tag == 1,
            "request %d to %d: source %d count %d", i, w, sts[i].source, sts[i].count);
  }
  for (int w = 1; w <= W; w++) {
    int sum = 0;
    CHECK(ft_recv(&sum, 1, FT_INT, w, 2, &st) == 1 && sum == NISEND * (NISEND - 1) / 2,
          "worker %d got them in order (%d)", w, sum);
  }
  /* test, until done; waitany, each request once. */
  CHECK(ft_isend(&x, 1, FT_INT, 1, 3, &req) == 1, "isend to test");
  int done = 0;
  for (double t0 = now_s(); !done && now_s() - t0 < 10;) {
    int got = ft_request_test(&req, &done, &st);
    CHECK(got == (done ? 1 : 0) && ft_error() == FT_SUCCESS, "test: %d", got);
  }
  CHECK(done && req == FT_REQUEST_NULL && st.source == 1, "test completed it");
  for (int w = 1; w <= W; w++)
    CHECK(ft_isend(&w, 1, FT_INT, w, 3, &reqs[w - 1]) == 1, "isend %d", w);
  unsigned seen = 0;
  for (int i = 0; i < W; i++) {
    CHECK(ft_request_waitany(W, reqs, &idx, &st) == 1 && idx >= 0 && idx < W &&
              !(seen & 1u << idx) && st.source == idx + 1,
          "waitany: index %d source %d", idx, st.source);
    seen |= 1u << idx;
  }
  double sent;
  CHECK(ft_recv(&sent, 1, FT_DOUBLE, 1, 4, &st) == 1, "the held-back frame");
  double lag = now_s() - sent; /* CLOCK_MONOTONIC: one host's clock */
  CHECK(lag < ISEND_QUIET_S / 2.0, "held back %.3f s while its sender made no call", lag);
}

static void isend_worker(int rank) {
  int v, sum = 0, prev = -1;
  FT_Status st;
  for (int k = 0; k < NISEND; k++) {
    CHECK(ft_recv(&v, 1, FT_INT, 0, 1, &st) == 1, "recv %d", k);
    CHECK(v == prev + 1, "got %d after %d: out of order", v, prev);
    prev = v;
    sum += v;
  }
  FT_Request req;
  CHECK(ft_isend(&sum, 1, FT_INT, 0, 2, &req) == 1, "worker isend");
  CHECK(ft_request_wait(&req, &st) == 1 && st.source == 0, "worker wait");
  CHECK(ft_recv(&v, 1, FT_INT, 0, 3, &st) == 1, "tested message");
  if (rank == 1) {
    CHECK(ft_recv(&v, 1, FT_INT, 0, 3, &st) == 1, "tested message");
    /* A frame ft_isend held back goes out without another call: the I/O
     * thread writes it while this thread sleeps. */
    double sent = now_s();
    CHECK(ft_isend(&sent, 1, FT_DOUBLE, 0, 4, NULL) == 1, "isend, then no call");
    usleep(ISEND_QUIET_S * 1000 * 1000);
  }
}

/* --- isendfail: requests to a worker that died ---------------------------- */

/* Whether process pid (on this host) is stopped. */
static int stopped(int pid) {
  char path[64], buf[256];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
  if (f)
    fclose(f);
  buf[n] = '\0';
  const char *e = strrchr(buf, ')');
  return e != NULL && e[1] == ' ' && e[2] == 'T';
}

/* Worker 1 stops itself: the sends to it are written but never
 * acknowledged. The master kills it: every request fails, reported at the
 * wait, and the next ft_isend to it fails at once. */
static void isendfail(int rank, int W) {
  int x = 7, pid;
  FT_Status st[8];
  if (rank == 1) {
    pid = (int)getpid();
    CHECK(ft_send(&pid, 1, FT_INT, 0, 9) == 1, "pid to the master");
    raise(SIGSTOP);
    return;
  }
  if (rank != 0) {
    CHECK(ft_recv(&x, 1, FT_INT, 0, 1, st) == 1, "worker recv");
    return;
  }
  CHECK(ft_recv(&pid, 1, FT_INT, 1, 9, st) == 1, "worker 1's pid");
  for (double t0 = now_s(); !stopped(pid) && now_s() - t0 < 30;)
    usleep(10 * 1000);
  FT_Request reqs[8];
  for (int i = 0; i < 8; i++)
    CHECK(ft_isend(&x, 1, FT_INT, 1, 1, &reqs[i]) == 1, "isend %d to a stopped worker", i);
  kill(pid, SIGKILL);
  expect_err(ft_request_waitall(8, reqs, st), 0, FT_ERR_PEER_FAILED, "waitall");
  for (int i = 0; i < 8; i++)
    CHECK(reqs[i] == FT_REQUEST_NULL && st[i].source == 1 && st[i].count == 0 &&
              st[i].error == FT_ERR_PEER_FAILED,
          "request %d: source %d error %s", i, st[i].source, ft_errname(st[i].error));
  expect_err(ft_isend(&x, 1, FT_INT, 1, 1, &reqs[0]), 0, FT_ERR_PEER_FAILED,
             "isend after the failure");
  for (int w = 2; w <= W; w++)
    CHECK(ft_isend(&x, 1, FT_INT, w, 1, NULL) == 1, "isend to live worker %d", w);
}

/* --- posted: several receives posted per worker ------------------------- */

/* Each live worker w sends PO_N messages, tags 1, 2, 1, 2, ... with
 * values 100 * w + i. */
#define PO_N 4

static int po_value(int w, int i) { return 100 * w + i; }

/* Workers 1..W-1 answer; worker W sends one message and dies. */
static void posted_master(int W) {
  int got[64][PO_N], x = 1, r;
  memset(got, 0xff, sizeof(got));
  /* Worker 1, completed by ft_wait: posted for tags 2, 1, any, any, they
   * take messages 1, 0, 2, 3 (the oldest each one's tag matches once the
   * ones before it have completed). */
  CHECK(ft_irecv(&got[1][0], 1, FT_INT, 1, 2) == 1, "irecv tag 2");
  CHECK(ft_irecv(&got[1][1], 1, FT_INT, 1, 1) == 1, "irecv tag 1");
  CHECK(ft_irecv(&got[1][2], 1, FT_INT, 1, FT_ANY_TAG) == 1, "irecv any");
  CHECK(ft_irecv(&got[1][3], 1, FT_INT, 1, FT_ANY_TAG) == 1, "irecv any");
  expect_err(ms_irecv(&x, 1, FT_INT, 1, 1), 0, FT_ERR_ALREADY_POSTED,
             "ms_irecv behind ft_irecv");
  /* Workers 2..W-1, by ft_waitany: in order per worker, whatever the
   * interleaving across workers. */
  for (int w = 2; w < W; w++)
    for (int i = 0; i < PO_N; i++)
      CHECK(ft_irecv(&got[w][i], 1, FT_INT, w, FT_ANY_TAG) == 1, "irecv %d.%d", w, i);
  /* Worker W: three posted, one message comes, then its failure. */
  for (int i = 0; i < 3; i++)
    CHECK(ft_irecv(&got[W][i], 1, FT_INT, W, FT_ANY_TAG) == 1, "irecv %d.%d", W, i);
  for (int w = 1; w <= W; w++)
    CHECK(ft_send(&x, 1, FT_INT, w, 1) == 1, "go to %d", w);
  const int order[PO_N] = {1, 0, 2, 3};
  for (int i = 0; i < PO_N; i++)
    CHECK(ft_wait(1) == 1 && got[1][i] == po_value(1, order[i]),
          "worker 1, receive %d: %d", i, got[1][i]);
  expect_err(ft_wait(1), 0, FT_ERR_NOT_POSTED, "wait after the last");
  int next[64] = {0}, failed = 0;
  for (;;) {
    int w = ft_waitany(&r);
    if (w < 0 && r == 0) {
      CHECK(ft_error() == FT_ERR_NONE_POSTED, "waitany at the end: %s", ft_errname(ft_error()));
      break;
    }
    if (w < 0) {
      CHECK(r == W && ft_error() == FT_ERR_PEER_FAILED && next[W] == 1 && !failed,
            "waitany reported %d: %s after %d", r, ft_errname(ft_error()), next[W]);
      failed = 1;
      continue;
    }
    CHECK(w >= 2 && w <= W && next[w] < PO_N && got[w][next[w]] == po_value(w, next[w]),
          "waitany: worker %d receive %d: %d", w, next[w], w >= 2 ? got[w][next[w]] : -1);
    if (w >= 2 && w <= W)
      next[w]++;
  }
  for (int w = 2; w < W; w++)
    CHECK(next[w] == PO_N, "worker %d: %d of %d", w, next[w], PO_N);
  CHECK(failed, "worker %d's failure reported", W);
  /* Its other two receives were cancelled with the report. */
  expect_err(ft_wait(W), 0, FT_ERR_NOT_POSTED, "wait on the dead worker");
  expect_err(ft_irecv(&x, 1, FT_INT, W, 1), 0, FT_ERR_PEER_FAILED, "irecv from the dead worker");
  /* ft_irecv behind an ms_irecv is allowed, and both complete. */
  CHECK(ms_irecv(&got[1][0], 1, FT_INT, 1, 3) == 1, "ms_irecv: %s", ft_errname(ft_error()));
  CHECK(ft_irecv(&got[1][1], 1, FT_INT, 1, 3) == 1, "irecv behind ms_irecv");
  CHECK(ft_send(&x, 1, FT_INT, 1, 2) == 1, "second go");
  CHECK(ft_wait(1) == 1 && ft_wait(1) == 1 && got[1][0] == 1 && got[1][1] == 2,
        "ms_irecv then ft_irecv: %d %d", got[1][0], got[1][1]);
}

static void posted_worker(int rank, int W) {
  int x;
  FT_Status st;
  CHECK(ft_recv(&x, 1, FT_INT, 0, 1, &st) == 1, "go");
  for (int i = 0; i < (rank == W ? 1 : PO_N); i++) {
    int v = po_value(rank, i);
    CHECK(ft_send(&v, 1, FT_INT, 0, 1 + i % 2) == 1, "send %d", i);
  }
  if (rank == W)
    raise(SIGKILL);
  if (rank == 1) {
    CHECK(ft_recv(&x, 1, FT_INT, 0, 2, &st) == 1, "second go");
    for (int v = 1; v <= 2; v++)
      CHECK(ft_send(&v, 1, FT_INT, 0, 3) == 1, "send %d", v);
  }
}

/* --- deadfin: a worker dies; the job still finalizes with status 0 ------- */

static void deadfin(int rank, int W) {
  int x = 7;
  FT_Status st;
  if (rank == 1)
    raise(SIGKILL);
  if (rank != 0) {
    CHECK(ft_recv(&x, 1, FT_INT, 0, 1, &st) == 1, "worker recv");
    return;
  }
  expect_err(ft_recv(&x, 1, FT_INT, 1, 1, &st), 0, FT_ERR_PEER_FAILED, "recv from dead worker");
  expect_err(ft_send(&x, 1, FT_INT, 1, 1), 0, FT_ERR_PEER_FAILED, "send to dead worker");
  for (int w = 2; w <= W; w++)
    CHECK(ft_send(&x, 1, FT_INT, w, 1) == 1, "send to live worker %d", w);
  /* ANY_SOURCE never blocks on a dead worker: nothing else will come. */
  int r = ft_recv(&x, 1, FT_INT, FT_ANY_SOURCE, 1, &st);
  CHECK(r == 0 && ft_error() == FT_ERR_PEER_FAILED && st.source == 1,
        "ANY_SOURCE with only a dead sender: %s source %d", ft_errname(ft_error()), st.source);
}

/* --- orphan: the master dies; workers busy outside FTMW must still exit -- */

static void orphan(int rank, int W) {
  int x = 1;
  FT_Status st;
  if (rank == 0) {
    for (int w = 1; w <= W; w++)
      ft_send(&x, 1, FT_INT, w, 1);
    raise(SIGKILL);
  }
  ft_recv(&x, 1, FT_INT, 0, 1, &st);
  for (;;) /* "computing for hours": never calls FTMW again */
    pause();
}


/* --- farm: the farm layer's API, its misuse codes and odd tasks --------------- */

enum { FARM_SIZES = 6, FARM_MORE = 5 };
static const size_t farm_size[FARM_SIZES] = {0, 1, 7, 1000, 65536, 200000};

/* Output: the input reversed. Task 3 fails with code 7; task 5's first
 * copy breaks the protocol (a plain ft_send to the master) and waits: its
 * worker is stopped and restored, and the second copy does the task. */
static int farm_fn(ft_farm_task *t, void *ctx) {
  (void)ctx;
  size_t n;
  const unsigned char *in = ft_farm_input(t, &n);
  if (ft_farm_task_id(t) == 3)
    return 7;
  if (ft_farm_task_id(t) == 5 && ft_farm_attempt(t) == 1) {
    int x = 1;
    ft_send(&x, 1, FT_INT, 0, 1);
    for (;;) /* until the master's FENCE ends this process */
      pause();
  }
  unsigned char *out = malloc(n ? n : 1);
  for (size_t i = 0; i < n; i++)
    out[i] = in[n - 1 - i];
  int ok = ft_farm_reply(t, out, n);
  free(out);
  return ok ? 0 : 5;
}

typedef struct {
  int64_t seen[FARM_SIZES + FARM_MORE];
  ft_farm *f;
  int more;
} farm_check;

static void farm_input(int64_t id, unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    b[i] = (unsigned char)(id * 31 + (int64_t)i * 7);
}

static int farm_got(const ft_farm_result *r, void *ctx) {
  farm_check *c = ctx;
  CHECK(r->id >= 0 && r->id < FARM_SIZES + FARM_MORE && c->seen[r->id]++ == 0,
        "task %lld delivered again or unknown", (long long)r->id);
  if (r->id == 3) {
    CHECK(r->status == FT_FARM_TASK_ERROR && r->code == 7 && r->data == NULL,
          "task 3: status %d code %d", r->status, r->code);
  } else {
    size_t n = r->id < FARM_SIZES ? farm_size[r->id] : 100;
    unsigned char *want = malloc(n ? n : 1);
    farm_input(r->id, want, n);
    const unsigned char *got = r->data;
    int same = r->status == FT_FARM_OK && r->len == n;
    for (size_t i = 0; same && i < n; i++)
      same = got[i] == want[n - 1 - i];
    CHECK(same, "task %lld: status %d, %zu bytes, not its input reversed",
          (long long)r->id, r->status, r->len);
    free(want);
  }
  if (!c->more) { /* results may submit more tasks */
    c->more = 1;
    unsigned char b[100];
    for (int64_t id = FARM_SIZES; id < FARM_SIZES + FARM_MORE; id++) {
      farm_input(id, b, sizeof(b));
      CHECK(ft_farm_submit(c->f, b, sizeof(b)) == id, "submit from the callback");
    }
  }
  return 0;
}

/* The second farm's outputs: the worker's rank, then the input. */
static int farm_rank;
static int farm_tagged(ft_farm_task *t, void *ctx) {
  (void)ctx;
  size_t n;
  const unsigned char *in = ft_farm_input(t, &n);
  unsigned char out[64];
  if (n > sizeof(out) - 1)
    return 22;
  out[0] = (unsigned char)farm_rank;
  memcpy(out + 1, in, n);
  return ft_farm_reply(t, out, n + 1) ? 0 : 5;
}

/* A comparator that ignores the first byte (the rank). */
static int farm_compare(const void *a, size_t alen, const void *b, size_t blen,
                        void *ctx) {
  ++*(int *)ctx;
  return alen != blen || alen < 1 ||
         memcmp((const char *)a + 1, (const char *)b + 1, alen - 1) != 0;
}

/* The late farm's one task, run twice: the first copy fails at once, so
 * the task is done (FT_FARM_TASK_ERROR) and the farm destroyed while the
 * second copy still runs; its reply comes during the next farm, which
 * must ignore it. */
static int farm_late_fn(ft_farm_task *t, void *ctx) {
  (void)ctx;
  if (ft_farm_attempt(t) == 1)
    return 9;
  usleep(300000);
  return ft_farm_reply(t, "late", 4) ? 0 : 5;
}

static void farm_late(void) {
  ft_farm_options o;
  ft_farm_options_init(&o);
  o.duplicate = 1;
  ft_farm *f = ft_farm_create(&o);
  CHECK(f != NULL && ft_farm_submit(f, "x", 1) == 0, "the late farm");
  ft_farm_result r;
  CHECK(ft_farm_next(f, &r) == 1 && r.status == FT_FARM_TASK_ERROR && r.code == 9,
        "the late farm's task: status %d code %d", r.status, r.code);
  CHECK(ft_farm_destroy(f) == 1, "destroy the late farm");
}

/* Every task run twice, compared by farm_compare: the outputs differ in
 * their first byte, the comparator says they agree. */
static void farm_compared(void) {
  ft_farm_options o;
  ft_farm_options_init(&o);
  int calls = 0;
  o.duplicate = 1;
  o.compare = farm_compare;
  o.compare_ctx = &calls;
  ft_farm *f = ft_farm_create(&o);
  CHECK(f != NULL, "create the compared farm: %s", ft_errname(ft_error()));
  for (int i = 0; i < 10; i++)
    CHECK(ft_farm_submit(f, &i, sizeof(i)) == i, "submit %d", i);
  ft_farm_result r;
  int n = 0;
  while (ft_farm_next(f, &r) == 1) {
    int x;
    CHECK(r.status == FT_FARM_OK && !r.mismatch && r.len == 1 + sizeof(x) &&
              (memcpy(&x, (const char *)r.data + 1, sizeof(x)), x == r.id),
          "compared task %lld: status %d mismatch %d", (long long)r.id, r.status,
          r.mismatch);
    n++;
  }
  ft_farm_stats s;
  ft_farm_stats_get(f, &s);
  CHECK(n == 10 && calls == 10 && s.duplicated == 10 && s.mismatches == 0 &&
            s.dispatched == 20, "%d results, %d comparisons, %lld duplicated, "
        "%lld mismatches, %lld dispatched", n, calls, (long long)s.duplicated,
        (long long)s.mismatches, (long long)s.dispatched);
  CHECK(ft_farm_destroy(f) == 1, "destroy the compared farm");
}

/* Out of memory for a task (its address space capped 256 MiB above what
 * it uses, a task of 1 GiB): FT_ERR_NOMEM, nothing queued (the next id
 * is still 0), and the farm goes on. Not under a sanitizer, whose
 * allocator maps far more than that and fails otherwise. */
static void farm_submit_no_memory(ft_farm *f) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)f;
#else
  long pages = 0;
  FILE *statm = fopen("/proc/self/statm", "r");
  int read_ok = statm && fscanf(statm, "%ld", &pages) == 1;
  if (statm)
    fclose(statm);
  CHECK(read_ok, "/proc/self/statm");
  struct rlimit old, cap;
  int capped = read_ok && getrlimit(RLIMIT_AS, &old) == 0;
  if (capped) {
    cap = old;
    cap.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (256u << 20);
    capped = setrlimit(RLIMIT_AS, &cap) == 0;
  }
  CHECK(capped, "capping the address space");
  if (!capped) /* a submit of 1 GiB uncapped would read past never_read */
    return;
  static const char never_read = 0; /* the copy fails before reading it */
  int64_t id = ft_farm_submit(f, &never_read, (size_t)1 << 30);
  CHECK(setrlimit(RLIMIT_AS, &old) == 0, "setrlimit back"); /* not FTMW's */
  expect_err((int)id, -1, FT_ERR_NOMEM, "submit 1 GiB, the address space capped");
  ft_farm_stats s;
  ft_farm_stats_get(f, &s);
  CHECK(s.submitted == 0, "out of memory, %lld queued", (long long)s.submitted);
#endif
}

static void farm_master(void) {
  ft_farm_options o;
  ft_farm_options_init(&o);
  CHECK(o.depth == 2 && o.max_attempts == 3 && o.restore == 1, "defaults");
  o.depth = 0;
  CHECK(ft_farm_create(&o) == NULL && ft_error() == FT_ERR_OPTION, "depth 0");
  ft_farm_options_init(&o);
  o.duplicate = 1.5;
  CHECK(ft_farm_create(&o) == NULL && ft_error() == FT_ERR_OPTION, "duplicate 1.5");
  ft_farm_options_init(&o);
  o.backup_factor = 0.5;
  CHECK(ft_farm_create(&o) == NULL && ft_error() == FT_ERR_OPTION, "backup 0.5");
  expect_err((int)ft_farm_submit(NULL, "x", 1), -1, FT_ERR_NULL_ARG, "submit to NULL");
  /* No backup copies: task 5's first copy hangs on purpose, and a backup
   * of it could finish the farm before its worker's broken message is
   * read (a worker that waits for a CPU that long under load). */
  ft_farm_options_init(&o);
  o.backup_factor = 0;
  ft_farm *f = ft_farm_create(&o);
  CHECK(f != NULL, "create: %s", ft_errname(ft_error()));
  ft_farm_result r;
  expect_err(ft_farm_next(f, NULL), -1, FT_ERR_NULL_ARG, "next into NULL");
  expect_err(ft_farm_next(f, &r), 0, FT_SUCCESS, "next with nothing submitted");
  expect_err((int)ft_farm_submit(f, NULL, 3), -1, FT_ERR_BUFFER, "submit NULL, 3");
  farm_submit_no_memory(f);
  expect_err((int)ft_farm_run(f, NULL, NULL), -1, FT_ERR_NULL_ARG, "run without fn");
  farm_check c = {.f = f};
  for (int64_t id = 0; id < FARM_SIZES; id++) {
    unsigned char *b = malloc(farm_size[id] ? farm_size[id] : 1);
    farm_input(id, b, farm_size[id]);
    CHECK(ft_farm_submit(f, b, farm_size[id]) == id, "submit %lld", (long long)id);
    free(b);
  }
  int64_t n = ft_farm_run(f, farm_got, &c);
  CHECK(n == FARM_SIZES + FARM_MORE, "run delivered %lld", (long long)n);
  for (int i = 0; i < FARM_SIZES + FARM_MORE; i++)
    CHECK(c.seen[i] == 1, "task %d delivered %lld times", i, (long long)c.seen[i]);
  ft_farm_stats s;
  ft_farm_stats_get(f, &s);
  CHECK(s.submitted == n && s.delivered == n && s.worker_failures == 1 &&
            s.restores == 1, "stats: %lld submitted, %lld delivered, %lld failures, "
        "%lld restores", (long long)s.submitted, (long long)s.delivered,
        (long long)s.worker_failures, (long long)s.restores);
  CHECK(ft_farm_destroy(f) == 1 && ft_farm_destroy(NULL) == 0, "destroy");
  farm_late();
  farm_compared();
}

static void farm_worker(int rank) {
  farm_rank = rank;
  CHECK(ft_farm_create(NULL) == NULL && ft_error() == FT_ERR_ROLE, "create in a worker");
  expect_err(ft_farm_reply(NULL, "x", 1), 0, FT_ERR_NULL_ARG, "reply to NULL");
  expect_err(ft_farm_work(NULL, NULL), 0, FT_ERR_NULL_ARG, "work without fn");
  CHECK(ft_farm_work(farm_fn, NULL) == 1, "work: %s", ft_errname(ft_error()));
  CHECK(ft_farm_work(farm_late_fn, NULL) == 1, "work on the late farm: %s",
        ft_errname(ft_error()));
  CHECK(ft_farm_work(farm_tagged, NULL) == 1, "work on the compared farm: %s",
        ft_errname(ft_error()));
}

int main(int argc, char **argv) {
  int rank, W;
  /* These programs check the thesis' return convention itself: every call
   * that names a failed worker returns its failure, again and again, so
   * they ask for it (FT_ERRORS=checked would stop them at the second). */
  setenv("FT_ERRORS", "return", 0);
  if (ft_init(&argc, &argv, &rank, &W) < 0)
    return 1;
  const char *mode = argc > 1 ? argv[1] : "api";
  if (strcmp(mode, "api") == 0)
    rank == 0 ? api_master(W) : api_worker(rank);
  else if (strcmp(mode, "isend") == 0)
    rank == 0 ? isend_master(W) : isend_worker(rank);
  else if (strcmp(mode, "posted") == 0)
    rank == 0 ? posted_master(W) : posted_worker(rank, W);
  else if (strcmp(mode, "isendfail") == 0)
    isendfail(rank, W);
  else if (strcmp(mode, "ms") == 0)
    rank == 0 ? ms_master(W) : ms_worker(rank);
  else if (strcmp(mode, "msfail") == 0)
    rank == 0 ? msfail_master(W) : msfail_worker(rank);
  else if (strcmp(mode, "big") == 0)
    big(rank);
  else if (strcmp(mode, "busy") == 0)
    busy(rank);
  else if (strcmp(mode, "wakeups") == 0)
    wakeups(rank);
  else if (strcmp(mode, "hang") == 0)
    hang(rank);
  else if (strcmp(mode, "rogue") == 0)
    rogue(rank, W);
  else if (strcmp(mode, "deadfin") == 0)
    deadfin(rank, W);
  else if (strcmp(mode, "orphan") == 0)
    orphan(rank, W);
  else if (strcmp(mode, "farm") == 0)
    rank == 0 ? farm_master() : farm_worker(rank);
  else
    CHECK(0, "unknown mode %s", mode);
  return finish(rank, mode);
}
