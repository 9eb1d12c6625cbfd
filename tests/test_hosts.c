/* Hostfile parsing, placement and blacklist (ftmw/hosts.c). */
#include <criterion/criterion.h>
#include <string.h>

#include "ftmw_impl.h"

Test(hosts, parse_and_place, .timeout = 5) {
  ftmw_hosts h;
  char err[200];
  cr_assert_eq(ftmw_hosts_parse("# cluster\nn1 slots=2\n\n n2 # second\nn3\n", &h, err, sizeof(err)), 0, "%s", err);
  cr_assert_eq(h.n, 3);
  cr_assert_eq(h.v[0].slots, 2);
  int want[] = {0, 0, 1, 2, 0, 0};
  for (int i = 0; i < 6; i++)
    cr_assert_eq(ftmw_hosts_place(&h, i), want[i], "process %d", i);
  ftmw_hosts_free(&h);
}

Test(hosts, parse_errors_name_the_line, .timeout = 5) {
  ftmw_hosts h;
  char err[200];
  cr_assert_eq(ftmw_hosts_parse("n1\nn2 slots=x\n", &h, err, sizeof(err)), -1);
  cr_assert(strstr(err, "line 2") != NULL, "%s", err);
  cr_assert_eq(ftmw_hosts_parse("n1 cpus=3\n", &h, err, sizeof(err)), -1);
  cr_assert_eq(ftmw_hosts_parse("n1 slots=1 extra\n", &h, err, sizeof(err)), -1);
  cr_assert_eq(ftmw_hosts_parse("bad/host\n", &h, err, sizeof(err)), -1);
  cr_assert_eq(ftmw_hosts_parse("# nothing\n\n", &h, err, sizeof(err)), -1);
  cr_assert(strstr(err, "no host") != NULL);
  cr_assert_eq(ftmw_hosts_load("/nonexistent/hosts", &h, err, sizeof(err)), -1);
}

Test(hosts, blacklist_a_name_the_file_does_not_list, .timeout = 5) {
  ftmw_hosts h;
  char err[200];
  cr_assert_eq(ftmw_hosts_parse("localhost slots=4\n", &h, err, sizeof(err)), 0);
  cr_assert_eq(ftmw_hosts_blacklist(&h, "node7.cluster"), 0);
  cr_assert(ftmw_hosts_is_failed(&h, "node7.cluster"));
  cr_assert(!ftmw_hosts_is_failed(&h, "localhost"));
  cr_assert_eq(ftmw_hosts_pick(&h), 0); /* the listed host is still usable */
  cr_assert_eq(ftmw_hosts_place(&h, 4), 0); /* a blacklisted name takes no slot */
  cr_assert_eq(ftmw_hosts_blacklist(&h, "localhost"), 0);
  cr_assert_eq(h.n, 2); /* no duplicate entry */
  cr_assert_eq(ftmw_hosts_pick(&h), -1);
  ftmw_hosts_free(&h);
}

Test(hosts, blacklist_and_pick_until_exhausted, .timeout = 5) {
  ftmw_hosts h;
  char err[200];
  cr_assert_eq(ftmw_hosts_parse("a\nb\nc\n", &h, err, sizeof(err)), 0);
  ftmw_hosts_place(&h, 0); /* a */
  ftmw_hosts_place(&h, 1); /* b */
  cr_assert_eq(ftmw_hosts_fail(&h, "a"), 1);
  cr_assert(ftmw_hosts_is_failed(&h, "a"));
  cr_assert_eq(ftmw_hosts_pick(&h), 2); /* c: unused beats b */
  cr_assert_eq(ftmw_hosts_fail(&h, "c"), 1);
  cr_assert_eq(ftmw_hosts_pick(&h), 1);
  cr_assert_eq(ftmw_hosts_fail(&h, "b"), 1);
  cr_assert_eq(ftmw_hosts_pick(&h), -1);
  ftmw_hosts_free(&h);
}
