/* Hostfile parsing and host choice (see hosts.h). */
#include "hosts.h"
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_host(ftmw_hosts *h, const char *name, size_t len, int slots) {
  ftmw_host *v = realloc(h->v, (size_t)(h->n + 1) * sizeof(*v));
  if (v == NULL)
    return -1;
  h->v = v;
  memset(&v[h->n], 0, sizeof(v[h->n]));
  memcpy(v[h->n].name, name, len);
  v[h->n].slots = slots;
  h->n++;
  return 0;
}

/* Parses one line (without its newline). */
static int parse_line(ftmw_hosts *h, char *line, int lineno, char *err,
                      size_t errlen) {
  char *hash = strchr(line, '#');
  if (hash)
    *hash = '\0';
  char *tok[3];
  int nt = 0;
  for (char *save = NULL, *t = strtok_r(line, " \t\r", &save); t;
       t = strtok_r(NULL, " \t\r", &save)) {
    if (nt == 2) {
      snprintf(err, errlen, "line %d: too many fields", lineno);
      return -1;
    }
    tok[nt++] = t;
  }
  if (nt == 0)
    return 0;
  size_t len = strlen(tok[0]);
  if (len >= FTMW_HOSTNAME_MAX) {
    snprintf(err, errlen, "line %d: host name longer than %d bytes", lineno,
             FTMW_HOSTNAME_MAX - 1);
    return -1;
  }
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)tok[0][i];
    if (!isalnum(c) && c != '-' && c != '.' && c != '_' && c != ':') {
      snprintf(err, errlen, "line %d: invalid character in host name \"%s\"",
               lineno, tok[0]);
      return -1;
    }
  }
  long slots = 1;
  if (nt == 2) {
    const char *p = tok[1];
    if (strncmp(p, "slots=", 6) == 0)
      p += 6;
    else if (strncmp(p, "max_slots=", 10) == 0)
      p += 10;
    else {
      snprintf(err, errlen, "line %d: expected slots=N, got \"%s\"", lineno,
               tok[1]);
      return -1;
    }
    if (ftmw_parse_int(p, 1, 4096, &slots) != 0) {
      snprintf(err, errlen, "line %d: slots must be an integer from 1 to 4096",
               lineno);
      return -1;
    }
  }
  if (add_host(h, tok[0], len, (int)slots) != 0) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  return 0;
}

int ftmw_hosts_parse(const char *text, ftmw_hosts *out, char *err,
                     size_t errlen) {
  out->v = NULL;
  out->n = 0;
  char *copy = strdup(text);
  if (copy == NULL) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  int lineno = 0, rc = 0;
  for (char *line = copy, *next; line && rc == 0; line = next) {
    next = strchr(line, '\n');
    if (next)
      *next++ = '\0';
    lineno++;
    rc = parse_line(out, line, lineno, err, errlen);
  }
  free(copy);
  if (rc == 0 && out->n == 0) {
    snprintf(err, errlen, "no host listed");
    rc = -1;
  }
  if (rc != 0)
    ftmw_hosts_free(out);
  return rc;
}

int ftmw_hosts_load(const char *path, ftmw_hosts *out, char *err,
                    size_t errlen) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    snprintf(err, errlen, "cannot open \"%s\": %s", path, strerror(errno));
    return -1;
  }
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (len + 1 == cap) {
      char *nb = cap < (1u << 24) ? realloc(buf, cap *= 2) : NULL;
      if (nb == NULL) {
        free(buf);
        buf = NULL;
      } else
        buf = nb;
    }
  }
  fclose(f);
  if (buf == NULL) {
    snprintf(err, errlen, "\"%s\": too large or out of memory", path);
    return -1;
  }
  buf[len] = '\0';
  char sub[200];
  int rc = ftmw_hosts_parse(buf, out, sub, sizeof(sub));
  free(buf);
  if (rc != 0)
    snprintf(err, errlen, "\"%s\": %s", path, sub);
  return rc;
}

void ftmw_hosts_free(ftmw_hosts *h) {
  free(h->v);
  h->v = NULL;
  h->n = 0;
}

int ftmw_hosts_place(ftmw_hosts *h, int i) {
  if (h->n == 0)
    return -1;
  int total = 0;
  for (int k = 0; k < h->n; k++)
    total += h->v[k].slots;
  int pos = i % total;
  for (int k = 0; k < h->n; k++) {
    if (pos < h->v[k].slots) {
      h->v[k].load++;
      return k;
    }
    pos -= h->v[k].slots;
  }
  return -1;
}

int ftmw_hosts_fail(ftmw_hosts *h, const char *name) {
  int n = 0;
  for (int k = 0; k < h->n; k++)
    if (strcmp(h->v[k].name, name) == 0 && !h->v[k].failed) {
      h->v[k].failed = 1;
      n++;
    }
  return n;
}

int ftmw_hosts_blacklist(ftmw_hosts *h, const char *name) {
  if (ftmw_hosts_fail(h, name) > 0 || ftmw_hosts_is_failed(h, name))
    return 0;
  size_t len = strnlen(name, FTMW_HOSTNAME_MAX - 1);
  if (add_host(h, name, len, 0) != 0) /* slots 0: never placed on */
    return -1;
  h->v[h->n - 1].failed = 1;
  return 0;
}

int ftmw_hosts_is_failed(const ftmw_hosts *h, const char *name) {
  for (int k = 0; k < h->n; k++)
    if (h->v[k].failed && strcmp(h->v[k].name, name) == 0)
      return 1;
  return 0;
}

int ftmw_hosts_pick(ftmw_hosts *h) {
  int best = -1;
  for (int k = 0; k < h->n; k++)
    if (!h->v[k].failed && (best < 0 || h->v[k].load < h->v[best].load))
      best = k;
  if (best >= 0)
    h->v[best].load++;
  return best;
}
