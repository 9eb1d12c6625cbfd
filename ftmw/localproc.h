/* What this host's kernel says of a process running on it: the second
 * opinion the failure detector asks before it declares a silent peer on
 * this host failed (link.c, tick_cb). Reads /proc only; the caller
 * keeps what one look saw for the next (ftmw_proc_sample). */
#ifndef FTMW_LOCALPROC_H
#define FTMW_LOCALPROC_H

#include <stdint.h>

#include "wire.h" /* ftmw_place */

/* The name of every FTMW process's I/O thread: a process without it is
 * not an FTMW process, and its state says nothing of a peer. */
#define FTMW_IO_THREAD_NAME "ftmw-io"

enum ftmw_proc_verdict {
  FTMW_PROC_UNKNOWN = 0, /* no /proc, not an FTMW process, unreadable */
  FTMW_PROC_GONE,    /* no such process, another one with its pid, only
                        ended or exiting threads left, or dumping core */
  FTMW_PROC_STOPPED, /* a thread stopped (SIGSTOP) or traced */
  FTMW_PROC_ASLEEP,  /* every thread waits on something */
  FTMW_PROC_BUSY,    /* a thread runnable; no earlier look to compare with */
  FTMW_PROC_RUNNING, /* runnable threads, and each was given a CPU at least
                        half of the time since the last look */
  FTMW_PROC_STARVED  /* a thread runnable at both looks but on a CPU less
                        than half of the time between them (it waited for
                        one), or in a disk wait */
};

/* What one look saw of the runnable threads, for the next look. */
#define FTMW_PROC_THREADS_MAX 32
typedef struct {
  uint64_t at_ms; /* when (caller's clock); 0: no look yet */
  int n;
  struct {
    int tid;
    uint64_t cpu_ns; /* time on a CPU so far (schedstat) */
  } t[FTMW_PROC_THREADS_MAX];
} ftmw_proc_sample;

/* Looks at the process pid of the directory proc (normally "/proc"; tests
 * give a fake one), started at start (ftmw_place.start; 0: not checked).
 * now_ms is the caller's clock. Runnable threads are compared with *s,
 * the caller's previous look at this process, which is replaced when it
 * is at least FTMW_PROC_LOOK_MIN_MS old (or empty). */
#define FTMW_PROC_LOOK_MIN_MS 50
int ftmw_proc_look(const char *proc, int pid, uint64_t start, uint64_t now_ms,
                   ftmw_proc_sample *s);

const char *ftmw_proc_verdict_name(int verdict);

/* This process's place: its pid, the given host name, its kernel id and
 * start time (zeros where /proc cannot tell). */
void ftmw_proc_self(ftmw_place *out, const char *host);

/* Whether the process at peer can be looked up in the /proc of the one at
 * self: the same kernel boot and pid namespace (known: not all zeros), and
 * another pid. The host names do not matter: "hosts" made of network
 * namespaces of one machine (tools/ftmw-cluster) share its kernel and
 * CPUs, and one starved there is spared as on one host. */
int ftmw_proc_is_local(const ftmw_place *peer, const ftmw_place *self);

/* The calling thread's scheduler statistics from /proc/thread-self/schedstat:
 * nanoseconds on a CPU and waiting runnable for one (charged when the wait
 * ends). Returns 0 (and leaves them) where they cannot be read. */
int ftmw_proc_thread_sched(uint64_t *cpu_ns, uint64_t *runq_ns);

#endif
