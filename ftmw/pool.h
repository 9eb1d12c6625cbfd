/* Fixed-size records from slabs: a layer that holds many small records
 * (the farm: a task and a copy per task submitted) takes them here
 * instead of one malloc each. A slab's pages are populated when it is
 * mapped (one system call), not faulted in one by one as the records are
 * first written: on a virtual machine a page's first touch is costly
 * (here 12 µs faulted alone; 5 µs populated, the hypervisor's part),
 * more than the rest of a task's handling. Freed records are reused, the
 * last freed first. Not thread-safe: one thread per pool. */
#ifndef FTMW_POOL_H
#define FTMW_POOL_H

#include <stddef.h>

typedef struct ftmw_pool {
  size_t size;      /* a record's size, rounded up */
  size_t next_slab; /* the next slab's size */
  void *free;       /* freed records, linked through their first bytes */
  char *at, *end;   /* the current slab's records not yet handed out */
  void *slabs;      /* every slab, linked through its first bytes */
} ftmw_pool;

/* An empty pool of records of size bytes. */
void ftmw_pool_init(ftmw_pool *p, size_t size);

/* A record, zeroed, or NULL out of memory. */
void *ftmw_pool_get(ftmw_pool *p);

/* Gives record r (NULL: nothing) back to p. */
void ftmw_pool_put(ftmw_pool *p, void *r);

/* Unmaps every slab: every record of p is gone. */
void ftmw_pool_destroy(ftmw_pool *p);

#endif
