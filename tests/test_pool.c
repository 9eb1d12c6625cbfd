/* Fixed-size records from slabs (ftmw/pool.c): records come zeroed, do
 * not overlap, are reused once given back, and span several slabs. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "pool.h"

#define N 20000 /* 20000 x 176 bytes: past the first slabs (64, 128 KiB..) */

Test(pool, records_zeroed_distinct_aligned) {
  ftmw_pool p;
  ftmw_pool_init(&p, 170); /* rounded up to 176 */
  static unsigned char *r[N];
  for (int i = 0; i < N; i++) {
    r[i] = ftmw_pool_get(&p);
    cr_assert_not_null(r[i]);
    cr_assert_eq((uintptr_t)r[i] % 16, 0, "record %d not aligned", i);
    for (int k = 0; k < 170; k++)
      cr_assert_eq(r[i][k], 0, "record %d byte %d not zero", i, k);
    memset(r[i], i & 0xff, 170); /* a record that overlapped would show */
  }
  for (int i = 0; i < N; i++)
    for (int k = 0; k < 170; k += 17)
      cr_assert_eq(r[i][k], i & 0xff, "record %d overwritten", i);
  ftmw_pool_destroy(&p);
}

Test(pool, given_back_reused_and_zeroed) {
  ftmw_pool p;
  ftmw_pool_init(&p, 48);
  unsigned char *a = ftmw_pool_get(&p), *b = ftmw_pool_get(&p);
  memset(a, 0xaa, 48);
  memset(b, 0xbb, 48);
  ftmw_pool_put(&p, a);
  ftmw_pool_put(&p, NULL); /* nothing */
  unsigned char *c = ftmw_pool_get(&p);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  cr_assert_eq(c, a, "the record given back is the next one out");
#endif
  for (int k = 0; k < 48; k++)
    cr_assert_eq(c[k], 0);
  cr_assert_eq(b[47], 0xbb);
  ftmw_pool_put(&p, b);
  ftmw_pool_put(&p, c);
  ftmw_pool_destroy(&p);
}

Test(pool, tiny_and_large_records) {
  ftmw_pool p;
  ftmw_pool_init(&p, 1); /* a record holds at least the free-list link */
  void *x = ftmw_pool_get(&p), *y = ftmw_pool_get(&p);
  cr_assert((char *)y - (char *)x >= (long)sizeof(void *) ||
            (char *)x - (char *)y >= (long)sizeof(void *));
  ftmw_pool_destroy(&p);
  ftmw_pool_init(&p, (size_t)5 << 20); /* past the largest slab */
  unsigned char *big = ftmw_pool_get(&p);
  cr_assert_not_null(big);
  big[((size_t)5 << 20) - 1] = 1;
  ftmw_pool_destroy(&p);
}
