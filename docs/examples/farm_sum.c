/* docs/farm.md's example: a sum of squares cut into tasks, on the farm
 * layer. Each task sums the squares of a range; a worker saves its
 * progress now and then, so that a task whose worker dies resumes there.
 * Run: ftmwrun -w 4 farm_sum */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ftmw_farm.h"

typedef struct {
  uint64_t from, to;
} range;

typedef struct {
  uint64_t next, sum;
} progress;

static int sum_squares(ft_farm_task *t, void *ctx) {
  (void)ctx;
  size_t n;
  const range *r = ft_farm_input(t, &n);
  if (n != sizeof(*r))
    return 1; /* not a range: the master gets FT_FARM_TASK_ERROR */
  progress p = {r->from, 0};
  const progress *saved = ft_farm_resumed(t, &n);
  if (saved != NULL && n == sizeof(p))
    p = *saved; /* a worker died in this task: go on from its checkpoint */
  for (; p.next < r->to; p.next++) {
    if (p.next % 1000000 == 0 && !ft_farm_checkpoint(t, &p, sizeof(p)))
      return 2; /* every master is gone */
    p.sum += p.next * p.next;
  }
  return ft_farm_reply(t, &p.sum, sizeof(p.sum)) ? 0 : 2;
}

int main(int argc, char **argv) {
  int rank, workers;
  if (ft_init(&argc, &argv, &rank, &workers) < 0)
    return 1;
  if (rank != 0) { /* a worker, started at launch or by a restore */
    ft_farm_work(sum_squares, NULL);
    ft_finalize();
    return 0;
  }
  ft_farm_options o;
  ft_farm_options_init(&o);
  o.duplicate = 0.1; /* one task in ten also runs on another worker */
  ft_farm *f = ft_farm_create(&o);
  if (f == NULL) {
    fprintf(stderr, "farm_sum: %s\n", ft_strerror(ft_error()));
    return 1;
  }
  for (uint64_t i = 0; i < 64; i++) {
    range r = {i * 4000000, (i + 1) * 4000000};
    ft_farm_submit(f, &r, sizeof(r));
  }
  uint64_t total = 0;
  int rc = 0;
  ft_farm_result res;
  while (ft_farm_next(f, &res) == 1) {
    if (res.status != FT_FARM_OK) {
      fprintf(stderr, "task %lld: status %d\n", (long long)res.id, res.status);
      rc = 1;
      continue;
    }
    uint64_t s;
    memcpy(&s, res.data, sizeof(s));
    total += s; /* modulo 2^64 */
  }
  if (ft_is_primary())
    printf("sum of squares below 256000000: %llu (mod 2^64)\n",
           (unsigned long long)total);
  ft_farm_destroy(f);
  ft_finalize();
  return rc;
}
