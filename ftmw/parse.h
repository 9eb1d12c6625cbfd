/* Strict integer parsing, for settings read from the environment. */
#ifndef FTMW_PARSE_H
#define FTMW_PARSE_H

/* Strict decimal integer in [lo, hi]: no sign games, no trailing bytes.
 * Returns 0 with *out set, or -1. */
int ftmw_parse_int(const char *s, long lo, long hi, long *out);

#endif
