/* Fault injection (see fault.h). */
#include "fault.h"
#include "bounds.h"
#include "coverage.h"
#include "parse.h"
#include "trace.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

static const char *const point_names[] = {
#define FTMW_FPN_GEN(id, name) name,
    FTMW_FAULT_POINTS(FTMW_FPN_GEN)
#undef FTMW_FPN_GEN
};

static atomic_int armed;
static long want[FTMW_FAULT_NPOINTS]; /* 0: no rule for this point */
static atomic_long hits[FTMW_FAULT_NPOINTS];

static int parse_rule(char *s, ftmw_fault_rule *r, char *err, size_t errlen) {
  memset(r, 0, sizeof(*r));
  r->nth = 1;
  r->who = FTMW_FAULT_ANY;
  r->epoch = 0;
  char *at = strchr(s, '@');
  if (at) {
    *at++ = '\0';
    char *slash = strchr(at, '/');
    if (slash) {
      *slash++ = '\0';
      if (strcmp(slash, "*") == 0)
        r->epoch = FTMW_FAULT_ANY;
      else if (ftmw_parse_int(slash, 0, 1000000, &r->epoch) != 0) {
        snprintf(err, errlen, "bad epoch \"%s\"", slash);
        return -1;
      }
    }
    if (at[0] == 'm') {
      r->master = 1;
      at++;
    }
    if (strcmp(at, "*") != 0 &&
        ftmw_parse_int(at, r->master ? 0 : 1, FTMW_MAX_WORKERS, &r->who) != 0) {
      snprintf(err, errlen, "bad process \"%s\" (a rank, mK or *)", at);
      return -1;
    }
  }
  char *colon = strchr(s, ':');
  if (colon) {
    *colon++ = '\0';
    if (ftmw_parse_int(colon, 1, 1000000000L, &r->nth) != 0) {
      snprintf(err, errlen, "bad count \"%s\"", colon);
      return -1;
    }
  }
  for (int p = 0; p < FTMW_FAULT_NPOINTS; p++)
    if (strcmp(s, point_names[p]) == 0) {
      r->point = p;
      return 0;
    }
  snprintf(err, errlen, "unknown point \"%s\"", s);
  return -1;
}

int ftmw_fault_parse(const char *s, ftmw_fault_spec *out, char *err,
                     size_t errlen) {
  char buf[FTMW_FAULT_MAX];
  out->n = 0;
  if (strlen(s) >= sizeof(buf)) {
    snprintf(err, errlen, "too long");
    return -1;
  }
  strcpy(buf, s);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    if (out->n == FTMW_FAULT_MAX_RULES) {
      snprintf(err, errlen, "more than %d rules", FTMW_FAULT_MAX_RULES);
      return -1;
    }
    if (parse_rule(t, &out->rule[out->n], err, errlen) != 0)
      return -1;
    out->n++;
  }
  if (out->n == 0) {
    snprintf(err, errlen, "empty");
    return -1;
  }
  return 0;
}

void ftmw_fault_arm(const char *spec, int is_master, int id, uint32_t epoch) {
  ftmw_fault_spec fs;
  char err[160];
  atomic_store(&armed, 0);
  memset(want, 0, sizeof(want));
  if (spec == NULL || spec[0] == '\0' ||
      ftmw_fault_parse(spec, &fs, err, sizeof(err)) != 0)
    return;
  int any = 0;
  for (int i = 0; i < fs.n; i++) {
    const ftmw_fault_rule *r = &fs.rule[i];
    int who_ok = r->who == FTMW_FAULT_ANY ? 1 : (r->master == is_master && r->who == id);
    int ep_ok = r->epoch == FTMW_FAULT_ANY || r->epoch == (long)epoch;
    if (who_ok && ep_ok) {
      want[r->point] = r->nth;
      any = 1;
    }
  }
  for (int p = 0; p < FTMW_FAULT_NPOINTS; p++)
    atomic_store(&hits[p], 0);
  atomic_store(&armed, any);
}

int ftmw_fault_fires(int point) {
  if (!atomic_load_explicit(&armed, memory_order_relaxed) || want[point] == 0)
    return 0;
  if (atomic_fetch_add(&hits[point], 1) + 1 != want[point])
    return 0;
  ftmw_trace("fault_injected", "\"point\":\"%s\"", point_names[point]);
  return 1;
}

void ftmw_fault_hit(int point) {
  if (ftmw_fault_fires(point)) {
    ftmw_coverage_dump();
    raise(SIGKILL);
  }
}

/* ftmw_fault_starve: STARVE_HOGS threads spin for ms on the CPU the
 * caller runs on, where it spins too. (Nothing here needs privileges: no
 * priority is changed, and the affinity is given back.) */
#define STARVE_HOGS 3

typedef struct {
  int cpu;
  uint64_t end_ns;
} hog_arg;

static void pin(pthread_t t, int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  (void)pthread_setaffinity_np(t, sizeof(one), &one);
}

static void hog(void *arg) {
  const hog_arg *a = arg;
  pin(pthread_self(), a->cpu);
  while (uv_hrtime() < a->end_ns)
    ;
}

void ftmw_fault_starve(uint64_t ms) {
  pthread_t self = pthread_self();
  cpu_set_t was;
  if (pthread_getaffinity_np(self, sizeof(was), &was) != 0) {
    ftmw_log("tick.starve: cannot read this thread's CPUs; not starved");
    return;
  }
  int cpu = sched_getcpu();
  if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &was))
    for (cpu = 0; cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &was); cpu++)
      ;
  hog_arg a = {.cpu = cpu, .end_ns = uv_hrtime() + ms * 1000000u};
  uv_thread_t h[STARVE_HOGS];
  int n = 0;
  while (n < STARVE_HOGS && uv_thread_create(&h[n], hog, &a) == 0)
    n++;
  if (n < STARVE_HOGS)
    ftmw_log("tick.starve: %d of %d hog threads started", n, STARVE_HOGS);
  pin(self, cpu);
  while (uv_hrtime() < a.end_ns)
    ;
  (void)pthread_setaffinity_np(self, sizeof(was), &was);
  for (int i = 0; i < n; i++)
    uv_thread_join(&h[i]);
}
