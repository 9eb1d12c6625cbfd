/* Death notices (see death.h). */

#include "ftmw_impl.h"
#include "peer.h"
#include "death.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int static_rank(ftmw_ctx *cx, int kind, int id) {
  switch (kind) {
  case FTMW_ROLE_WORKER:
    return id;
  case FTMW_ROLE_MASTER: return id == 0 ? 0 : cx->job.W + id;
  default: return 1 + cx->job.W + cx->job.M + id;
  }
}

int ftmw_death_name_static(ftmw_ctx *cx, int kind, int id, uint32_t epoch,
                           char *name, size_t len) {
  if (epoch != 0)
    return 0;
  int n = snprintf(name, len, "rank.%d", static_rank(cx, kind, id));
  return n > 0 && (size_t)n < len;
}

void ftmw_death_name_spawn(ftmw_ctx *cx, int kind, int id, uint32_t epoch,
                           char *name, size_t len) {
  unsigned k = __atomic_add_fetch(&cx->spawn_names, 1, __ATOMIC_RELAXED);
  snprintf(name, len, "%s.%d.%u.m%d.%u", ftmw_role_name(kind), id, epoch,
           cx->job.id, k);
}

int ftmw_death_notice(const char *name, char *why, size_t len, int *shim) {
  const char *dir = getenv("FTMW_DEATH_DIR");
  char path[PATH_MAX], line[64];
  if (shim)
    *shim = 0;
  if (!dir || !*dir ||
      snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
    return 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  int got = fgets(why, (int)len, f) != NULL;
  if (got && shim && fgets(line, sizeof(line), f) && sscanf(line, "shim %d", shim) != 1)
    *shim = 0;
  fclose(f);
  if (got)
    why[strcspn(why, "\n")] = '\0';
  return got;
}

void ftmw_death_declare_locked(ftmw_ctx *cx, ftmw_peer *p, const char *notice) {
  char why[200];
  snprintf(why, sizeof(why), "died before connecting (%s)", notice);
  ftmw_peer_failed_locked(cx, p, 1, why);
  ftmw_log("%s %d %s", ftmw_role_name(p->kind), p->id, why);
}
