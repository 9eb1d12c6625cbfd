/* Death notices (see death.h). */

#include "ftmw_impl.h"
#include "death.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define job ftmw_job

static int static_rank(int kind, int id) {
  switch (kind) {
  case FTMW_ROLE_WORKER:
    return id;
  case FTMW_ROLE_MASTER:
    return id == 0 ? 0 : job.W + id;
  default:
    return 1 + job.W + job.M + id;
  }
}

int ftmw_death_name(int kind, int id, uint32_t epoch, char *name, size_t len) {
  int n;
  if (job.mode == FTMW_MODE_SPAWN) /* one process per incarnation */
    n = snprintf(name, len, "%s.%d.%u", ftmw_role_name(kind), id, epoch);
  else if (epoch == 0) /* the rank launched with the job */
    n = snprintf(name, len, "rank.%d", static_rank(kind, id));
  else /* a spare that became this peer: its notice is a spare's rank's */
    return 0;
  return n > 0 && (size_t)n < len;
}

int ftmw_death_notice(const char *name, char *why, size_t len) {
  const char *dir = getenv("FTMW_DEATH_DIR");
  char path[PATH_MAX];
  if (!dir || !*dir ||
      snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
    return 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  int got = fgets(why, (int)len, f) != NULL;
  fclose(f);
  if (got)
    why[strcspn(why, "\n")] = '\0';
  return got;
}

void ftmw_death_declare_locked(ftmw_peer *p, const char *notice) {
  char why[200];
  snprintf(why, sizeof(why), "died before connecting (%s)", notice);
  ftmw_peer_failed_locked(p, 1, why);
  ftmw_log("%s %d %s", ftmw_role_name(p->kind), p->id, why);
}
