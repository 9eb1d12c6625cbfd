/* PMI-1's finalize, for a process that ends without MPI_Finalize (pmi.h). */
#include "pmi.h"

#include "loop.h" /* ftmw_now_ms */

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static const char request[] = "cmd=finalize\n";
static const char ack[] = "cmd=finalize_ack\n";

int ftmw_pmi_finalize_fd(int fd, int timeout_ms) {
  size_t off = 0;
  while (off < sizeof(request) - 1) { /* MSG_NOSIGNAL: a gone proxy is EPIPE */
    ssize_t n =
        send(fd, request + off, sizeof(request) - 1 - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    off += (size_t)n;
  }
  /* The answer, a line; read a byte at a time so as to take nothing past
   * it (the proxy sends nothing else, but the socket is MPI's). */
  char got[sizeof(ack)];
  size_t len = 0;
  int64_t end = (int64_t)ftmw_now_ms() + timeout_ms;
  while (len < sizeof(ack) - 1) {
    int64_t left = end - (int64_t)ftmw_now_ms();
    if (left <= 0)
      return -1;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = poll(&p, 1, (int)left);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return -1;
    ssize_t n = recv(fd, got + len, 1, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0)
      return -1;
    if (got[len] != ack[len])
      return -1;
    len++;
  }
  return 1;
}

int ftmw_pmi_finalize(int timeout_ms) {
  const char *s = getenv("PMI_FD");
  if (s == NULL || *s == '\0')
    return 0;
  char *e;
  errno = 0;
  long fd = strtol(s, &e, 10);
  if (errno != 0 || *e != '\0' || fd < 0 || fd > INT_MAX)
    return 0;
  return ftmw_pmi_finalize_fd((int)fd, timeout_ms);
}
