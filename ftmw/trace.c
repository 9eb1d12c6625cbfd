/* Trace events and stderr lines (see trace.h). */
#include "trace.h"
#include "identity.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <unistd.h>
#include <uv.h>

static int trace_fd = -1;
static int trace_tried; /* opened once: a failure is logged once */

void ftmw_trace_open(const char *path) {
  if (path == NULL || path[0] == '\0' || trace_tried)
    return;
  trace_tried = 1;
  trace_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (trace_fd < 0)
    ftmw_log("cannot open FT_TRACE file \"%s\"; tracing is off", path);
}

void ftmw_trace_close(void) {
  if (trace_fd >= 0)
    close(trace_fd);
  trace_fd = -1;
}

int ftmw_trace_enabled(void) { return trace_fd >= 0; }

void ftmw_trace(const char *event, const char *fields, ...) {
  if (trace_fd < 0)
    return;
  char line[1024];
  struct timeval tv;
  gettimeofday(&tv, NULL);
  ftmw_identity s;
  ftmw_identity_get(&s);
  int n = snprintf(line, sizeof(line),
                   "{\"wall\":%ld.%06ld,\"mono\":%.6f,\"role\":\"%s\","
                   "\"rank\":%d,\"id\":%d,\"epoch\":%u,\"host\":\"%s\",\"pid\":%d,"
                   "\"event\":\"%s\"",
                   (long)tv.tv_sec, (long)tv.tv_usec, uv_hrtime() / 1e9, s.role,
                   s.rank, s.id, s.epoch, s.host, (int)getpid(), event);
  if (fields != NULL && n > 0 && (size_t)n < sizeof(line) - 3) {
    va_list ap;
    va_start(ap, fields);
    line[n++] = ',';
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 2, fields, ap);
    va_end(ap);
    n = m < 0 ? n - 1 : n + m;
  }
  if (n < 0 || (size_t)n > sizeof(line) - 3)
    n = (int)sizeof(line) - 3;
  line[n++] = '}';
  line[n++] = '\n';
  ssize_t w = write(trace_fd, line, (size_t)n);
  (void)w;
}

void ftmw_log(const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n > sizeof(line) - 2)
    n = (int)sizeof(line) - 2;
  line[n++] = '\n';
  /* One write, so that lines of concurrent processes do not interleave. */
  char out[540];
  int m = snprintf(out, sizeof(out), "ftmw: %.*s", n, line);
  ssize_t w = write(STDERR_FILENO, out, (size_t)(m < (int)sizeof(out) ? m : (int)sizeof(out) - 1));
  (void)w;
}
