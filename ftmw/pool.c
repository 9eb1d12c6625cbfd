/* Fixed-size records from slabs (pool.h). */
#include "pool.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SLAB_FIRST ((size_t)64 << 10)
#define SLAB_MAX ((size_t)4 << 20)
#define ALIGN 16 /* as malloc's */

typedef struct slab {
  struct slab *next;
  size_t len;
} slab;

#define SLAB_HDR ((sizeof(slab) + ALIGN - 1) / ALIGN * ALIGN)

void ftmw_pool_init(ftmw_pool *p, size_t size) {
  memset(p, 0, sizeof(*p));
  if (size < sizeof(void *))
    size = sizeof(void *);
  p->size = (size + ALIGN - 1) / ALIGN * ALIGN;
  p->next_slab = SLAB_FIRST;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
/* Under a sanitizer each record is its own allocation, so that a record
 * used after it was given back is reported. */
void *ftmw_pool_get(ftmw_pool *p) { return calloc(1, p->size); }
void ftmw_pool_put(ftmw_pool *p, void *r) {
  (void)p;
  free(r);
}
#else
/* Maps a new slab, its pages populated; 0, or -1 out of memory. */
static int grow(ftmw_pool *p) {
  size_t len = p->next_slab;
  while (len < SLAB_HDR + p->size)
    len *= 2;
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (m == MAP_FAILED)
    return -1;
  slab *s = m;
  s->len = len;
  s->next = p->slabs;
  p->slabs = s;
  p->at = (char *)m + SLAB_HDR;
  p->end = (char *)m + len;
  if (p->next_slab < SLAB_MAX)
    p->next_slab *= 2;
  return 0;
}

void *ftmw_pool_get(ftmw_pool *p) {
  void *r = p->free;
  if (r != NULL) {
    memcpy(&p->free, r, sizeof(void *));
    memset(r, 0, p->size);
    return r;
  }
  if ((size_t)(p->end - p->at) < p->size && grow(p) < 0)
    return NULL;
  r = p->at; /* never handed out: still zero, as mapped */
  p->at += p->size;
  return r;
}

void ftmw_pool_put(ftmw_pool *p, void *r) {
  if (r == NULL)
    return;
  memcpy(r, &p->free, sizeof(void *));
  p->free = r;
}
#endif

void ftmw_pool_destroy(ftmw_pool *p) {
  for (slab *s = p->slabs; s != NULL;) {
    slab *next = s->next;
    munmap(s, s->len);
    s = next;
  }
  memset(p, 0, sizeof(*p));
}
