/* The MPI layer's state, how it reports an error and stops the job, and
 * a master's standard output with replicas. */
#include "layer.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct layer_state layer;

static void say(const char *call, const char *fmt, va_list ap) {
  char line[512];
  int n = snprintf(line, sizeof(line), "ftmw-mpi: %s: ", call);
  if (n < 0 || (size_t)n >= sizeof(line))
    n = 0;
  vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
  fprintf(stderr, "%s\n", line);
  fflush(stderr);
}

static void output_at_exit(void);

void layer_stop(int status, const char *call, const char *fmt, ...) {
  output_at_exit(); /* ft_abort ends the process without exit handlers */
  va_list ap;
  va_start(ap, fmt);
  say(call, fmt, ap);
  va_end(ap);
  ft_abort(status);
}

int layer_error(int code, const char *call, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  say(call, fmt, ap);
  va_end(ap);
  if (!layer.errors_return)
    layer_stop(LAYER_EXIT_MISUSE, call,
               "the job stops (MPI_ERRORS_ARE_FATAL; MPI_ERRORS_RETURN on "
               "MPI_COMM_WORLD would return the error)");
  return code;
}

void ftmw_mpi_unsupported(const char *call) {
  layer_stop(LAYER_EXIT_UNSUPPORTED, call,
             "not supported by FTMW's MPI layer, which provides what "
             "master-worker programs use on MPI_COMM_WORLD "
             "(docs/mpi-layer.md): the job stops");
}

int layer_check(const char *call, MPI_Comm comm, int self_ok) {
  layer_output();
  if (!layer.up || layer.done)
    return layer_error(MPI_ERR_OTHER, call,
                       layer.done ? "called after MPI_Finalize"
                                  : "called before MPI_Init");
  if (comm == MPI_COMM_WORLD || (self_ok && comm == MPI_COMM_SELF))
    return MPI_SUCCESS;
  if (comm == MPI_COMM_NULL)
    return layer_error(MPI_ERR_COMM, call, "MPI_COMM_NULL");
  layer_stop(LAYER_EXIT_UNSUPPORTED, call,
             "communicators other than MPI_COMM_WORLD%s are not supported "
             "by FTMW's MPI layer: the job stops",
             self_ok ? " and MPI_COMM_SELF" : "");
}

/* --- a master's standard output, with replicas ----------------------------- */

/* Every master runs the program and prints; the line must appear once.
 * Each master's stdout goes to a memory file, and at each MPI call that
 * follows some output the masters ask who is primary (ft_is_primary, a
 * decision every master follows at the same call): the primary copies
 * what was written since the previous such call to the real stdout, the
 * others drop it. A line thus appears once, or twice when the primary
 * dies after copying it and before its next call: never lost (the rule
 * of docs/replicas.md for ft_is_primary). Whether output came is the
 * same in every master, whose programs make the same calls. */
static int real_stdout = -1, captured = -1, last_primary;

void layer_output_capture(void) {
  fflush(stdout);
  int fd = memfd_create("ftmw-mpi-stdout", MFD_CLOEXEC);
  int out = fd < 0 ? -1 : dup(STDOUT_FILENO);
  if (out < 0 || dup2(fd, STDOUT_FILENO) < 0) {
    fprintf(stderr, "ftmw-mpi: cannot capture this master's output: each "
                    "master replica prints it\n");
    if (fd >= 0)
      close(fd);
    if (out >= 0)
      close(out);
    return;
  }
  real_stdout = out;
  captured = fd;
  atexit(output_at_exit);
}

/* Copies or drops what was written since the last call (primary: the
 * last word of the masters on who is primary). */
static void pass_on(int primary) {
  off_t n = lseek(captured, 0, SEEK_CUR), at = 0;
  char buf[65536];
  while (primary && at < n) {
    ssize_t got = pread(captured, buf, sizeof(buf), at);
    if (got <= 0)
      break;
    for (ssize_t done = 0; done < got;) {
      ssize_t w = write(real_stdout, buf + done, (size_t)(got - done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        break;
      done += w;
    }
    at += got;
  }
  if (ftruncate(captured, 0) != 0 || lseek(captured, 0, SEEK_SET) != 0)
    fprintf(stderr, "ftmw-mpi: cannot reset this master's output file\n");
}

void layer_output(void) {
  if (captured < 0)
    return;
  fflush(stdout);
  if (lseek(captured, 0, SEEK_CUR) <= 0)
    return;
  last_primary = ft_is_primary();
  pass_on(last_primary);
}

/* What the program prints after MPI_Finalize: the master that was
 * primary there prints it. */
static void output_at_exit(void) {
  if (captured < 0)
    return;
  fflush(stdout);
  pass_on(last_primary);
}

void layer_output_final(void) {
  if (captured >= 0) /* every master asks: the last word before the end */
    last_primary = ft_is_primary();
  layer_output();
}
