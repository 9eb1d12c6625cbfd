/* The error table (expanded from FT_ERRNO_MAP) and the per-thread result
 * of the last call. */
#include "ftmw_impl.h"

static _Thread_local int last_error = FT_ERR_NOT_INITIALIZED;

int ftmw_fail(int code) {
  last_error = code;
  return 0;
}

void ftmw_ok(void) { last_error = FT_SUCCESS; }

int ft_error(void) { return last_error; }

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
