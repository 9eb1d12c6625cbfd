/* The same ping-pong over a raw TCP loopback socket between two processes
 * (TCP_NODELAY, blocking I/O): the baseline for FTMW's transport.
 * Prints "tcp SIZE MEDIAN MIN MAX" lines: round trips in microseconds over
 * batches. Usage: pingpong_tcp [--quick] */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

#define BATCHES 15

static int xfer(int fd, char *buf, size_t n, int sending) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = sending ? write(fd, buf + done, n - done) : read(fd, buf + done, n - done);
    if (r <= 0)
      return -1;
    done += (size_t)r;
  }
  return 0;
}

static int run(int fd, int pinger, int quick) {
  char *buf = malloc(bench_sizes[BENCH_NSIZES - 1]);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  for (size_t s = 0; s < BENCH_NSIZES; s++) {
    size_t n = bench_sizes[s];
    int iters = bench_iters(n, quick), per = iters / BATCHES > 0 ? iters / BATCHES : 1;
    double batch[BATCHES];
    for (int b = -1; b < BATCHES; b++) {
      double t0 = bench_now();
      for (int i = 0; i < per; i++) {
        int rc = pinger ? (xfer(fd, buf, n, 1) || xfer(fd, buf, n, 0))
                        : (xfer(fd, buf, n, 0) || xfer(fd, buf, n, 1));
        if (rc)
          return 1;
      }
      if (b >= 0)
        batch[b] = (bench_now() - t0) / per * 1e6;
    }
    if (pinger) {
      char label[32];
      snprintf(label, sizeof(label), "tcp %zu", n);
      bench_report(label, batch, BATCHES);
    }
  }
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  socklen_t len = sizeof(a);
  if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
      getsockname(ls, (struct sockaddr *)&a, &len))
    return perror("pingpong_tcp"), 1;
  pid_t child = fork();
  if (child == 0) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
      _exit(1);
    _exit(run(fd, 0, quick));
  }
  int fd = accept(ls, NULL, NULL);
  int rc = fd < 0 || run(fd, 1, quick);
  close(fd);
  int status;
  waitpid(child, &status, 0);
  return rc || !WIFEXITED(status) || WEXITSTATUS(status);
}
