/* Strict integer parsing (see parse.h). */
#include "parse.h"

#include <errno.h>
#include <stdlib.h>

int ftmw_parse_int(const char *s, long lo, long hi, long *out) {
  if (s == NULL || *s == '\0')
    return -1;
  for (const char *p = s; *p; p++)
    if ((*p < '0' || *p > '9') && !(p == s && *p == '-'))
      return -1;
  errno = 0;
  char *end;
  long v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}
