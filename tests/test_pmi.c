/* PMI-1's finalize (pmi.h), against a proxy played on the other end of a
 * socket pair: acknowledged, answered in pieces, not answered (bounded),
 * answered wrongly, gone (no SIGPIPE), and no PMI socket at all. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pmi.h"

static int sv[2]; /* sv[0] the process's, sv[1] the proxy's */

static void pair(void) {
  cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

static void unpair(void) {
  close(sv[0]);
  if (sv[1] >= 0)
    close(sv[1]);
}

/* What the process sent the proxy. */
static void sent_finalize(void) {
  char b[64] = {0};
  cr_assert_eq(recv(sv[1], b, sizeof(b) - 1, MSG_DONTWAIT), 13);
  cr_assert_str_eq(b, "cmd=finalize\n");
}

static void proxy_says(const char *s) {
  cr_assert_eq(send(sv[1], s, strlen(s), 0), (ssize_t)strlen(s));
}

static double ms_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) * 1e3 +
         (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

TestSuite(pmi, .init = pair, .fini = unpair, .timeout = 30);

Test(pmi, acknowledged) {
  proxy_says("cmd=finalize_ack\n");
  cr_assert_eq(ftmw_pmi_finalize_fd(sv[0], 1000), 1);
  sent_finalize();
}

/* Only the acknowledgement is taken: what follows stays in the socket. */
Test(pmi, takes_the_line_only) {
  proxy_says("cmd=finalize_ack\nmore");
  cr_assert_eq(ftmw_pmi_finalize_fd(sv[0], 1000), 1);
  char b[8] = {0};
  cr_assert_eq(recv(sv[0], b, sizeof(b) - 1, MSG_DONTWAIT), 4);
  cr_assert_str_eq(b, "more");
}

static void *late_half(void *arg) {
  (void)arg;
  struct timespec d = {0, 100 * 1000000};
  nanosleep(&d, NULL);
  proxy_says("ack\n");
  return NULL;
}

Test(pmi, answered_in_pieces) {
  proxy_says("cmd=finalize_");
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, late_half, NULL), 0);
  cr_assert_eq(ftmw_pmi_finalize_fd(sv[0], 5000), 1);
  pthread_join(t, NULL);
}

Test(pmi, not_answered_is_bounded) {
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  cr_assert_eq(ftmw_pmi_finalize_fd(sv[0], 200), -1);
  double ms = ms_since(&t0);
  cr_assert(ms >= 190 && ms < 5000, "returned after %.0f ms", ms);
  sent_finalize();
}

Test(pmi, wrong_answer) {
  proxy_says("cmd=barrier_out\n");
  cr_assert_eq(ftmw_pmi_finalize_fd(sv[0], 1000), -1);
}

Test(pmi, proxy_closed_before_answering) {
  proxy_says("cmd=fin");
  shutdown(sv[1], SHUT_WR);
  cr_assert_eq(ftmw_pmi_finalize_fd(sv[0], 1000), -1);
}

/* A proxy gone: EPIPE, and the process lives on (the default action of
 * SIGPIPE would end this test as a crash). */
Test(pmi, proxy_gone_no_sigpipe) {
  signal(SIGPIPE, SIG_DFL);
  close(sv[1]);
  sv[1] = -1;
  cr_assert_eq(ftmw_pmi_finalize_fd(sv[0], 1000), -1);
}

Test(pmi, not_a_socket) {
  int p[2];
  cr_assert_eq(pipe(p), 0);
  cr_assert_eq(ftmw_pmi_finalize_fd(p[1], 100), -1);
  close(p[0]);
  close(p[1]);
}

Test(pmi, from_the_environment) {
  unsetenv("PMI_FD");
  cr_assert_eq(ftmw_pmi_finalize(100), 0);
  setenv("PMI_FD", "", 1);
  cr_assert_eq(ftmw_pmi_finalize(100), 0);
  setenv("PMI_FD", "6x", 1);
  cr_assert_eq(ftmw_pmi_finalize(100), 0);
  setenv("PMI_FD", "-1", 1);
  cr_assert_eq(ftmw_pmi_finalize(100), 0);
  setenv("PMI_FD", "99999999999999999999", 1);
  cr_assert_eq(ftmw_pmi_finalize(100), 0);
  char s[16];
  snprintf(s, sizeof(s), "%d", sv[0]);
  setenv("PMI_FD", s, 1);
  proxy_says("cmd=finalize_ack\n");
  cr_assert_eq(ftmw_pmi_finalize(1000), 1);
  sent_finalize();
}
