/* The error table (expanded from FT_ERRNO_MAP) and the per-thread result
 * of the last call. */
#include "error.h"

#include "ftmw.h"
#include "leave.h"

#include <stdlib.h>

static _Thread_local int last_error = FT_ERR_NOT_INITIALIZED;
/* Failures reported to the program, and their count when it last read a
 * failure (ft_error): see ftmw_note_report. */
static _Thread_local unsigned long reports, reports_read;
static int init_failed; /* ft_init returned -1 */

void ftmw_init_failed(void) { init_failed = 1; }

int ftmw_fail(int code) {
  /* A program that went on after its ft_init failed would run with no
   * job, each call failing at once (one printed "Worker -1" in a loop,
   * 64 MB a minute): it is stopped at its first call instead. */
  if (code == FT_ERR_NOT_INITIALIZED && init_failed)
    ftmw_leave(FTMW_LEAVE_INIT_FAILED, 1,
               "an FTMW call after ft_init failed (ft_init returned -1, for "
               "the reason above)");
  last_error = code;
  return 0;
}

void ftmw_ok(void) { last_error = FT_SUCCESS; }

int ft_error(void) {
  if (last_error != FT_SUCCESS)
    reports_read = reports;
  return last_error;
}

int ftmw_last_error(void) { return last_error; }

unsigned long ftmw_note_report(void) { return ++reports; }

int ftmw_report_read(unsigned long n) { return reports_read >= n; }

const char *ft_strerror(int code) {
  switch (code) {
#define FT_STRERROR_GEN(name, msg)                                             \
  case FT_##name:                                                              \
    return msg;
    FT_ERRNO_MAP(FT_STRERROR_GEN)
#undef FT_STRERROR_GEN
  default:
    return "unknown error";
  }
}

const char *ft_errname(int code) {
  switch (code) {
#define FT_ERRNAME_GEN(name, msg)                                              \
  case FT_##name:                                                              \
    return "FT_" #name;
    FT_ERRNO_MAP(FT_ERRNAME_GEN)
#undef FT_ERRNAME_GEN
  default:
    return "FT_UNKNOWN";
  }
}

size_t ft_type_size(FT_Datatype type) {
  switch (type) {
  case FT_CHAR: return sizeof(char);
  case FT_BYTE: return 1;
  case FT_SHORT: return sizeof(short);
  case FT_INT: return sizeof(int);
  case FT_UNSIGNED: return sizeof(unsigned);
  case FT_LONG: return sizeof(long);
  case FT_UNSIGNED_LONG: return sizeof(unsigned long);
  case FT_LONG_LONG: return sizeof(long long);
  case FT_FLOAT: return sizeof(float);
  case FT_DOUBLE: return sizeof(double);
  }
  return 0;
}
