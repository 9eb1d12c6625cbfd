/* What this host's kernel says of a process running on it: the second
 * opinion the failure detector asks before it declares a silent peer on
 * this host failed (transport.c, tick_cb). Reads /proc only; no state. */
#ifndef FTMW_LOCALPROC_H
#define FTMW_LOCALPROC_H

#include <stdint.h>

#include "wire.h" /* FTMW_KERNEL_ID_SIZE */

/* The name of every FTMW process's I/O thread, which also tells an FTMW
 * process apart from another one that took its pid (a pid namespace of its
 * own, a pid reused). */
#define FTMW_IO_THREAD_NAME "ftmw-io"

enum ftmw_proc_verdict {
  FTMW_PROC_UNKNOWN = 0, /* no /proc, not an FTMW process, unreadable */
  FTMW_PROC_GONE,        /* no such process, or only zombie threads left */
  FTMW_PROC_STOPPED,     /* a thread stopped (SIGSTOP) or traced */
  FTMW_PROC_ASLEEP,      /* every thread waits on something */
  FTMW_PROC_STARVED      /* a thread is runnable, or in a disk wait */
};

/* Looks at process pid of the directory proc (normally "/proc"; tests give
 * a fake one). A thread named FTMW_IO_THREAD_NAME must be there, or the
 * answer is FTMW_PROC_UNKNOWN (FTMW_PROC_GONE if the process is gone). */
int ftmw_proc_look(const char *proc, int pid);

const char *ftmw_proc_verdict_name(int verdict);

/* The calling thread's scheduler statistics from /proc/thread-self/schedstat:
 * nanoseconds on a CPU and waiting runnable for one. Returns 0 (and leaves
 * them) where they cannot be read. */
int ftmw_proc_thread_sched(uint64_t *cpu_ns, uint64_t *runq_ns);

/* This process's kernel id (wire.h): where its pid means this process.
 * All zeros where /proc cannot tell. */
void ftmw_proc_kernel_id(uint8_t out[FTMW_KERNEL_ID_SIZE]);

/* Whether a peer with kernel id k (from its HELLO or WELCOME) can be looked
 * up in this process's /proc: the same kernel boot and pid namespace, and
 * known (not all zeros). */
int ftmw_proc_same_kernel(const uint8_t k[FTMW_KERNEL_ID_SIZE],
                          const uint8_t mine[FTMW_KERNEL_ID_SIZE]);

#endif
