/* A datatype's bytes. FTMW carries bytes, and every process of a job
 * shares one data representation (one architecture, one MPI): a
 * contiguous datatype travels as it lies in memory, any other packed by
 * MPI (PMPI_Pack, which is local). */
#include "layer.h"

#include <stdlib.h>
#include <string.h>

/* A predefined type without gaps: its bytes are its elements, in order.
 * A derived type is packed even when it looks contiguous: its typemap
 * may list the bytes in another order than memory's. */
int ldata_contiguous(MPI_Datatype type) {
  int size, ni, na, nt, combiner;
  MPI_Aint lb, extent, tlb, textent;
  if (PMPI_Type_get_envelope(type, &ni, &na, &nt, &combiner) != MPI_SUCCESS ||
      combiner != MPI_COMBINER_NAMED)
    return 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(type, &tlb, &textent) != MPI_SUCCESS)
    return 0;
  return tlb == 0 && textent == size && extent == size;
}

/* The type's size, or an error (a bad type, an uncommitted one). */
static int type_size(const char *call, int count, MPI_Datatype type,
                     size_t *size) {
  int s;
  if (count < 0)
    return layer_error(MPI_ERR_COUNT, call, "negative count %d", count);
  if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &s) != MPI_SUCCESS)
    return layer_error(MPI_ERR_TYPE, call, "invalid datatype");
  *size = (size_t)s;
  return MPI_SUCCESS;
}

int ldata_out(const char *call, const void *buf, int count, MPI_Datatype type,
              ldata *d) {
  size_t size = 0;
  d->own = NULL;
  d->base = buf;
  d->len = 0;
  int rc = type_size(call, count, type, &size);
  if (rc != MPI_SUCCESS)
    return rc;
  d->len = size * (size_t)count;
  if (d->len == 0 || ldata_contiguous(type))
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
  int rc = type_size(call, count, type, &size);
  *room = rc == MPI_SUCCESS ? size * (size_t)count : 0;
  return rc;
}

int ldata_in(const void *bytes, size_t len, void *buf, int count,
             MPI_Datatype type) {
  int size;
  PMPI_Type_size(type, &size);
  if (len > (size_t)size * (size_t)count)
    return MPI_ERR_TRUNCATE;
  if (len == 0)
    return MPI_SUCCESS;
  if (ldata_contiguous(type)) {
    memcpy(buf, bytes, len);
    return MPI_SUCCESS;
  }
  /* Whole elements only, as MPI_Get_count counts them. */
  int at = 0;
  PMPI_Unpack(bytes, (int)len, &at, buf, (int)(len / (size_t)size), type,
              MPI_COMM_SELF);
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
  PMPI_Status_set_elements(s, MPI_BYTE, (int)len);
  PMPI_Status_set_cancelled(s, 0);
}
