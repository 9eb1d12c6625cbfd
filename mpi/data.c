/* A datatype's bytes. FTMW carries bytes, and every process of a job
 * shares one data representation (one architecture, one MPI): a
 * contiguous datatype travels as it lies in memory, any other packed by
 * MPI (PMPI_Pack, which is local). */
#include "layer.h"

#include <stdlib.h>
#include <string.h>

/* What a type is: its size, and whether its bytes are its elements, in
 * order (a predefined type without gaps). A derived type is packed even
 * when it looks contiguous: its typemap may list the bytes in another
 * order than memory's. Predefined types are asked about at every call
 * and never freed: the answer for the last few is kept. */
typedef struct type_info {
  MPI_Datatype type;
  int size, contiguous;
} type_info;

static type_info named[8];
static int named_next;

static int info(MPI_Datatype type, type_info *out) {
  for (int i = 0; i < (int)(sizeof(named) / sizeof(named[0])); i++)
    if (named[i].size > 0 && named[i].type == type) {
      *out = named[i];
      return MPI_SUCCESS;
    }
  int ni, na, nt, combiner;
  MPI_Aint lb, extent, tlb, textent;
  if (PMPI_Type_size(type, &out->size) != MPI_SUCCESS ||
      PMPI_Type_get_envelope(type, &ni, &na, &nt, &combiner) != MPI_SUCCESS ||
      PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(type, &tlb, &textent) != MPI_SUCCESS)
    return MPI_ERR_TYPE;
  out->type = type;
  out->contiguous = combiner == MPI_COMBINER_NAMED && tlb == 0 &&
                    textent == out->size && extent == out->size;
  if (combiner == MPI_COMBINER_NAMED && out->size > 0) {
    named[named_next] = *out;
    named_next = (named_next + 1) % (int)(sizeof(named) / sizeof(named[0]));
  }
  return MPI_SUCCESS;
}

int ldata_contiguous(MPI_Datatype type) {
  type_info t;
  return info(type, &t) == MPI_SUCCESS && t.contiguous;
}

/* The type's size, or an error (a bad type, an uncommitted one). */
static int type_size(const char *call, int count, MPI_Datatype type,
                     size_t *size, int *contiguous) {
  type_info t;
  if (count < 0)
    return layer_error(MPI_ERR_COUNT, call, "negative count %d", count);
  if (type == MPI_DATATYPE_NULL || info(type, &t) != MPI_SUCCESS)
    return layer_error(MPI_ERR_TYPE, call, "invalid datatype");
  *size = (size_t)t.size;
  if (contiguous)
    *contiguous = t.contiguous;
  return MPI_SUCCESS;
}

int ldata_out(const char *call, const void *buf, int count, MPI_Datatype type,
              ldata *d) {
  size_t size = 0;
  int contiguous = 0;
  d->own = NULL;
  d->base = buf;
  d->len = 0;
  int rc = type_size(call, count, type, &size, &contiguous);
  if (rc != MPI_SUCCESS)
    return rc;
  d->len = size * (size_t)count;
  if (d->len == 0 || contiguous)
    return MPI_SUCCESS;
  int packed, at = 0;
  if (PMPI_Pack_size(count, type, MPI_COMM_SELF, &packed) != MPI_SUCCESS)
    return layer_error(MPI_ERR_TYPE, call, "cannot pack the datatype");
  if ((d->own = malloc(packed ? (size_t)packed : 1)) == NULL)
    return layer_error(MPI_ERR_NO_MEM, call, "out of memory (%d bytes)", packed);
  if (PMPI_Pack(buf, count, type, d->own, packed, &at, MPI_COMM_SELF) !=
      MPI_SUCCESS) {
    ldata_free(d);
    return layer_error(MPI_ERR_TYPE, call, "cannot pack the datatype");
  }
  d->base = d->own;
  d->len = (size_t)at;
  return MPI_SUCCESS;
}

void ldata_free(ldata *d) {
  free(d->own);
  d->own = NULL;
}

int ldata_room(const char *call, int count, MPI_Datatype type, size_t *room) {
  size_t size = 0;
  int rc = type_size(call, count, type, &size, NULL);
  *room = rc == MPI_SUCCESS ? size * (size_t)count : 0;
  return rc;
}

int ldata_in(const void *bytes, size_t len, void *buf, int count,
             MPI_Datatype type) {
  type_info t;
  if (info(type, &t) != MPI_SUCCESS)
    return MPI_ERR_TYPE;
  int size = t.size;
  if (len > (size_t)size * (size_t)count)
    return MPI_ERR_TRUNCATE;
  if (len == 0)
    return MPI_SUCCESS;
  if (t.contiguous) {
    memcpy(buf, bytes, len);
    return MPI_SUCCESS;
  }
  /* Whole elements only, as MPI_Get_count counts them. */
  int at = 0;
  PMPI_Unpack(bytes, (int)len, &at, buf, (int)(len / (size_t)size), type,
              MPI_COMM_SELF);
  return MPI_SUCCESS;
}

/* The count (in bytes) and the cancelled flag of a status, written as
 * MPI's PMPI_Status_set_elements(s, MPI_BYTE, len) and
 * PMPI_Status_set_cancelled(s, 0) would: directly in the fields this MPI
 * keeps them in, which saves two calls into MPI at every receive. */
static void status_direct(MPI_Status *s, int len) {
#if defined(OPEN_MPI)
  s->_ucount = (size_t)len;
  s->_cancelled = 0;
#elif defined(MPICH_NUMVERSION)
  s->count_lo = len;
  s->count_hi_and_cancelled = 0;
#else
  (void)s;
  (void)len;
#endif
}

/* Whether status_direct writes what MPI's calls write, checked once
 * against them (a layout this file does not know goes through them). */
static int direct_ok(void) {
  static int ok = -1;
  if (ok >= 0)
    return ok;
  MPI_Status a, b;
  memset(&a, 0xa5, sizeof(a));
  memcpy(&b, &a, sizeof(b));
  ok = PMPI_Status_set_elements(&a, MPI_BYTE, 0x1234567) == MPI_SUCCESS &&
       PMPI_Status_set_cancelled(&a, 0) == MPI_SUCCESS;
  status_direct(&b, 0x1234567);
  ok = ok && memcmp(&a, &b, sizeof(a)) == 0;
  return ok;
}

/* The count status_direct wrote into *len; 0 if s holds one it cannot
 * have written (MPICH: over 2^31 - 1, set by the program itself). */
static int status_len(const MPI_Status *s, size_t *len) {
#if defined(OPEN_MPI)
  *len = s->_ucount;
  return 1;
#elif defined(MPICH_NUMVERSION)
  *len = (size_t)(unsigned)s->count_lo;
  return s->count_lo >= 0 && (s->count_hi_and_cancelled >> 1) == 0;
#else
  (void)s;
  *len = 0;
  return 0;
#endif
}

/* MPI's own, but most programs ask it at every receive, of a status the
 * layer filled: answered here, without a call into MPI, for a
 * predefined type without gaps (others: MPI's answer, from the same
 * count). */
LAYER_API int MPI_Get_count(const MPI_Status *s, MPI_Datatype type,
                            int *count) {
  type_info t;
  size_t len;
  if (s == MPI_STATUS_IGNORE || count == NULL || type == MPI_DATATYPE_NULL ||
      !direct_ok() || info(type, &t) != MPI_SUCCESS || !t.contiguous ||
      t.size <= 0 || !status_len(s, &len))
    return PMPI_Get_count(s, type, count);
  *count = len % (size_t)t.size ? MPI_UNDEFINED : (int)(len / (size_t)t.size);
  return MPI_SUCCESS;
}

void ldata_status(MPI_Status *s, int source, int tag, size_t len, int err) {
  if (s == MPI_STATUS_IGNORE)
    return;
  s->MPI_SOURCE = source;
  s->MPI_TAG = tag;
  s->MPI_ERROR = err;
  /* The count in bytes: MPI_Get_count and MPI_Get_elements (MPI's own)
   * divide it by the type asked. */
  if (direct_ok()) {
    status_direct(s, (int)len);
    return;
  }
  PMPI_Status_set_elements(s, MPI_BYTE, (int)len);
  PMPI_Status_set_cancelled(s, 0);
}
