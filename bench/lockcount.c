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
 * start-up's locks cancel out).
 *
 * Where: with LOCKCOUNT_SITES=DIR, each rank also writes DIR/sites.R.PID,
 * one line a call site ("COUNT OBJECT OFFSET": the caller of the function
 * that locked, uv_mutex_lock's caller for FTMW's locks), found by
 * backtrace(3); addr2line -f -e OBJECT OFFSET names it in a build with
 * debug information. The same difference of two runs, site by site, says
 * what a task costs where. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_long acquired;

/* The call sites, an open-addressed table of return addresses. */
#define SITES 4096
static void *_Atomic site_addr[SITES];
static atomic_long site_count[SITES];
static __thread int in_backtrace; /* backtrace may lock: not counted */

static void count_site(void) {
  void *frames[3];
  in_backtrace = 1;
  int n = backtrace(frames, 3); /* this, the locking function, its caller */
  in_backtrace = 0;
  if (n < 3)
    return;
  void *key = frames[2];
  unsigned h = (unsigned)(((unsigned long)key >> 4) % SITES);
  for (unsigned i = 0; i < SITES; i++) {
    unsigned j = (h + i) % SITES;
    void *cur = atomic_load_explicit(&site_addr[j], memory_order_relaxed);
    if (cur == NULL &&
        atomic_compare_exchange_strong(&site_addr[j], &cur, key))
      cur = key;
    if (cur == key) {
      atomic_fetch_add_explicit(&site_count[j], 1, memory_order_relaxed);
      return;
    }
  }
}

static int sites_wanted(void) {
  static int wanted = -1;
  if (wanted < 0)
    wanted = getenv("LOCKCOUNT_SITES") != NULL;
  return wanted;
}

int pthread_mutex_lock(pthread_mutex_t *m) {
  static int (*real)(pthread_mutex_t *);
  if (real == NULL)
    real = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
  if (in_backtrace)
    return real(m);
  atomic_fetch_add_explicit(&acquired, 1, memory_order_relaxed);
  if (sites_wanted())
    count_site();
  return real(m);
}

static void write_sites(const char *dir, const char *rank) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/sites.%s.%d", dir, rank, (int)getpid());
  FILE *f = fopen(path, "w");
  if (f == NULL)
    return;
  for (unsigned i = 0; i < SITES; i++) {
    void *a = atomic_load(&site_addr[i]);
    Dl_info d;
    if (a == NULL || !dladdr(a, &d) || d.dli_fname == NULL)
      continue;
    fprintf(f, "%ld %s 0x%lx\n", (long)atomic_load(&site_count[i]),
            d.dli_fname, (unsigned long)((char *)a - (char *)d.dli_fbase));
  }
  fclose(f);
}

__attribute__((destructor)) static void report(void) {
  const char *rank = getenv("PMI_RANK");
  if (rank == NULL)
    return;
  fprintf(stderr, "lockcount rank %s: %ld\n", rank, (long)acquired);
  const char *dir = getenv("LOCKCOUNT_SITES");
  if (dir != NULL && *dir)
    write_sites(dir, rank);
}
