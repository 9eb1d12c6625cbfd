/* Environment parsing (see config.h). */
#include "config.h"
#include "fault.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads an optional integer variable; returns -1 after writing err. */
static int int_var(ftmw_getenv_fn get, const char *name, long lo, long hi,
                   long dflt, int *out, char *err, size_t errlen) {
  const char *s = get(name);
  long v = dflt;
  if (s != NULL && ftmw_parse_int(s, lo, hi, &v) != 0) {
    snprintf(err, errlen, "%s=\"%s\" is invalid: expected an integer from %ld to %ld",
             name, s, lo, hi);
    return -1;
  }
  *out = (int)v;
  return 0;
}

static int path_var(ftmw_getenv_fn get, const char *name, char *dst,
                    size_t dstlen, char *err, size_t errlen) {
  const char *s = get(name);
  dst[0] = '\0';
  if (s == NULL)
    return 0;
  if (*s == '\0' || strlen(s) >= dstlen) {
    snprintf(err, errlen, "%s is invalid: expected a path of 1 to %zu bytes",
             name, dstlen - 1);
    return -1;
  }
  memcpy(dst, s, strlen(s) + 1);
  return 0;
}

int ftmw_config_parse(ftmw_config *c, ftmw_getenv_fn get, char *err,
                      size_t errlen) {
  memset(c, 0, sizeof(*c));
  c->max_message = FTMW_MAX_MESSAGE;
  if (int_var(get, "FT_NUM_SLAVES", 1, FTMW_MAX_WORKERS, -1, &c->workers, err,
              errlen) ||
      int_var(get, "FT_NUM_MASTERS", 0, FTMW_MAX_MASTERS - 1, 0, &c->masters,
              err, errlen) ||
      int_var(get, "FT_SPARES", 0, FTMW_MAX_SPARES, -1, &c->spares, err,
              errlen) ||
      int_var(get, "FT_HEARTBEAT_MS", 1, 60000, FTMW_DEFAULT_HEARTBEAT_MS,
              &c->heartbeat_ms, err, errlen) ||
      int_var(get, "FT_TIMEOUT_MS", 2, 3600000, FTMW_DEFAULT_TIMEOUT_MS,
              &c->timeout_ms, err, errlen) ||
      int_var(get, "FT_TRACE_DATA", 0, 1000000000, 0, &c->trace_data, err,
              errlen) ||
      int_var(get, "FT_SPAWN_TIMEOUT_MS", 100, 3600000,
              FTMW_DEFAULT_SPAWN_TIMEOUT_MS, &c->spawn_timeout_ms, err,
              errlen) ||
      int_var(get, "FT_EAGER_LIMIT", 0, FTMW_MAX_EAGER_LIMIT,
              FTMW_DEFAULT_EAGER_LIMIT, &c->eager_limit, err, errlen) ||
      int_var(get, "FT_TERM_GRACE_MS", 0, 3600000, FTMW_DEFAULT_TERM_GRACE_MS,
              &c->term_grace_ms, err, errlen))
    return -1;
  if (c->timeout_ms < 2 * c->heartbeat_ms) {
    snprintf(err, errlen,
             "FT_TIMEOUT_MS=%d is invalid: it must be at least twice "
             "FT_HEARTBEAT_MS (%d), or a healthy idle peer would be suspected",
             c->timeout_ms, c->heartbeat_ms);
    return -1;
  }
  if (path_var(get, "FT_HOSTFILE", c->hostfile, sizeof(c->hostfile), err,
               errlen) ||
      path_var(get, "FT_TRACE", c->trace, sizeof(c->trace), err, errlen))
    return -1;
  const char *i = get("FT_IFACE");
  if (i != NULL) {
    size_t n = strlen(i);
    int ok = n > 0 && n < sizeof(c->iface);
    for (size_t k = 0; ok && k < n; k++)
      ok = isalnum((unsigned char)i[k]) || strchr("._-@:", i[k]) != NULL;
    if (!ok) {
      snprintf(err, errlen,
               "FT_IFACE=\"%s\" is invalid: expected a network interface "
               "name (1 to %zu of A-Z a-z 0-9 . _ - @ :)",
               i, sizeof(c->iface) - 1);
      return -1;
    }
    memcpy(c->iface, i, n + 1);
  }
  const char *e = get("FT_ERRORS");
  if (e != NULL) {
    if (strcmp(e, "return") != 0 && strcmp(e, "checked") != 0) {
      snprintf(err, errlen, "FT_ERRORS=\"%s\" is invalid: expected \"checked\" "
               "(a failure the program ignores stops the job) or \"return\"", e);
      return -1;
    }
    c->errors_return = strcmp(e, "return") == 0;
  }
  const char *f = get("FT_FAULT");
  if (f != NULL) {
    if (strlen(f) >= sizeof(c->fault)) {
      snprintf(err, errlen, "FT_FAULT is invalid: longer than %zu bytes",
               sizeof(c->fault) - 1);
      return -1;
    }
    memcpy(c->fault, f, strlen(f) + 1);
    ftmw_fault_spec spec;
    char ferr[160];
    if (ftmw_fault_parse(c->fault, &spec, ferr, sizeof(ferr)) != 0) {
      snprintf(err, errlen, "FT_FAULT=\"%s\" is invalid: %s", f, ferr);
      return -1;
    }
  }
  return 0;
}
