/* Counts the mutex acquisitions of each process of a job (issue 35: "count
 * lock acquisitions per blocking send and per farm task"), all of them:
 * FTMW's (st.lock, the loop's owner), libuv's and the MPI library's. A
 * preloaded library, built by hand (it is no part of FTMW):
 *   cc -shared -fPIC -O2 -o /tmp/lockcount.so bench/lockcount.c -ldl
 * and run under MPICH, which passes LD_PRELOAD on to every rank:
 *   LD_PRELOAD=/tmp/lockcount.so ftmwrun --mpi mpich --static -w 4 \
 *       bench/tasks_ft -n N -u 0
 * Each rank prints "lockcount rank R: N" at exit. Per task: the
 * difference between two runs of N1 and N2 tasks, over N2 - N1 (the
 * start-up's locks cancel out). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_long acquired;

int pthread_mutex_lock(pthread_mutex_t *m) {
  static int (*real)(pthread_mutex_t *);
  if (real == NULL)
    real = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
  atomic_fetch_add_explicit(&acquired, 1, memory_order_relaxed);
  return real(m);
}

__attribute__((destructor)) static void report(void) {
  const char *rank = getenv("PMI_RANK");
  if (rank != NULL)
    fprintf(stderr, "lockcount rank %s: %ld\n", rank, (long)acquired);
}
