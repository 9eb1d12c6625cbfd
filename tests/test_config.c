/* Environment parsing (ftmw/config.c) and fault specs (ftmw/fault.c). */
#include <criterion/criterion.h>
#include <string.h>

#include "ftmw_impl.h"

static const char *const *env_table;

static const char *table_get(const char *name) {
  for (const char *const *e = env_table; e && e[0]; e += 2)
    if (strcmp(e[0], name) == 0)
      return e[1];
  return NULL;
}

static int parse(const char *const *table, ftmw_config *c, char *err) {
  env_table = table;
  return ftmw_config_parse(c, table_get, err, 320);
}

Test(config, defaults, .timeout = 5) {
  ftmw_config c;
  char err[320];
  const char *const t[] = {NULL};
  cr_assert_eq(parse(t, &c, err), 0);
  cr_assert_eq(c.workers, -1);
  cr_assert_eq(c.masters, 0);
  cr_assert_eq(c.heartbeat_ms, FTMW_DEFAULT_HEARTBEAT_MS);
  cr_assert_eq(c.timeout_ms, FTMW_DEFAULT_TIMEOUT_MS);
  cr_assert_eq(c.spawn_timeout_ms, FTMW_DEFAULT_SPAWN_TIMEOUT_MS);
  cr_assert_eq(c.eager_limit, FTMW_DEFAULT_EAGER_LIMIT);
  cr_assert_eq(c.errors_return, 0); /* FT_ERRORS=checked */
  cr_assert_eq(c.term_grace_ms, FTMW_DEFAULT_TERM_GRACE_MS);
  cr_assert(c.max_message >= ((uint64_t)1 << 30));
}

Test(config, valid_values, .timeout = 5) {
  ftmw_config c;
  char err[320];
  const char *const t[] = {"FT_NUM_SLAVES", "16", "FT_HEARTBEAT_MS", "50",
                           "FT_TIMEOUT_MS", "100", "FT_FAULT", "recv.ack:2@3/1",
                           "FT_TRACE_DATA", "100", "FT_SPAWN_TIMEOUT_MS", "2500",
                           "FT_IFACE", "eth0.12", "FT_EAGER_LIMIT", "0",
                           "FT_ERRORS", "return", "FT_TERM_GRACE_MS", "0",
                           NULL};
  cr_assert_eq(parse(t, &c, err), 0, "%s", err);
  cr_assert_eq(c.workers, 16);
  cr_assert_eq(c.spawn_timeout_ms, 2500);
  cr_assert_eq(c.trace_data, 100);
  cr_assert_eq(c.eager_limit, 0);
  cr_assert_eq(c.errors_return, 1);
  cr_assert_eq(c.term_grace_ms, 0); /* SIGTERM's default action */
  cr_assert_str_eq(c.fault, "recv.ack:2@3/1");
  cr_assert_str_eq(c.iface, "eth0.12");
}

/* Each bad value is refused with a message naming its variable. */
Test(config, invalid_values_name_the_variable, .timeout = 5) {
  static const char *const cases[][3] = {
      {"FT_NUM_SLAVES", "0", "FT_NUM_SLAVES"},
      {"FT_NUM_SLAVES", "4x", "FT_NUM_SLAVES"},
      {"FT_NUM_SLAVES", "", "FT_NUM_SLAVES"},
      {"FT_NUM_SLAVES", "99999999999999999999", "FT_NUM_SLAVES"},
      {"FT_NUM_MASTERS", "-1", "FT_NUM_MASTERS"},
      {"FT_SPARES", "two", "FT_SPARES"},
      {"FT_HEARTBEAT_MS", "0", "FT_HEARTBEAT_MS"},
      {"FT_TIMEOUT_MS", "1", "FT_TIMEOUT_MS"},
      {"FT_TRACE_DATA", "-1", "FT_TRACE_DATA"},
      {"FT_TRACE_DATA", "every", "FT_TRACE_DATA"},
      {"FT_SPAWN_TIMEOUT_MS", "99", "FT_SPAWN_TIMEOUT_MS"},
      {"FT_SPAWN_TIMEOUT_MS", "3600001", "FT_SPAWN_TIMEOUT_MS"},
      {"FT_TIMEOUT_MS", "300", "FT_TIMEOUT_MS"}, /* < 2 x default heartbeat */
      {"FT_EAGER_LIMIT", "-1", "FT_EAGER_LIMIT"},
      {"FT_EAGER_LIMIT", "64k", "FT_EAGER_LIMIT"},
      {"FT_EAGER_LIMIT", "67108865", "FT_EAGER_LIMIT"}, /* over 64 MiB */
      {"FT_TERM_GRACE_MS", "-1", "FT_TERM_GRACE_MS"},
      {"FT_TERM_GRACE_MS", "10s", "FT_TERM_GRACE_MS"},
      {"FT_TERM_GRACE_MS", "3600001", "FT_TERM_GRACE_MS"},
      {"FT_HOSTFILE", "", "FT_HOSTFILE"},
      {"FT_TRACE", "", "FT_TRACE"},
      {"FT_FAULT", "nowhere", "FT_FAULT"},
      {"FT_FAULT", "recv.ack:0", "FT_FAULT"},
      {"FT_FAULT", "recv.ack@x", "FT_FAULT"},
      {"FT_NUM_MASTERS", "8", "FT_NUM_MASTERS"}, /* at most 7 replicas */
      {"FT_IFACE", "", "FT_IFACE"},
      {"FT_IFACE", "eth0; rm", "FT_IFACE"},
      {"FT_IFACE", "a-name-of-16-chr", "FT_IFACE"}, /* IFNAMSIZ is 16 */
      {"FT_ERRORS", "fatal", "FT_ERRORS"},
      {"FT_ERRORS", "", "FT_ERRORS"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    ftmw_config c;
    char err[320] = "";
    const char *const t[] = {cases[i][0], cases[i][1], NULL};
    cr_assert_eq(parse(t, &c, err), -1, "%s=%s accepted", cases[i][0], cases[i][1]);
    cr_assert(strstr(err, cases[i][2]) != NULL, "message \"%s\" does not name %s", err, cases[i][2]);
  }
}

Test(fault, parse_rules, .timeout = 5) {
  ftmw_fault_spec s;
  char err[160];
  cr_assert_eq(ftmw_fault_parse("recv.enter:3@2,send.exit@m0/*,init", &s, err, sizeof(err)), 0, "%s", err);
  cr_assert_eq(s.n, 3);
  cr_assert_eq(s.rule[0].point, FTMW_FAULT_RECV_ENTER);
  cr_assert_eq(s.rule[0].nth, 3);
  cr_assert_eq(s.rule[0].who, 2);
  cr_assert_eq(s.rule[0].epoch, 0);
  cr_assert_eq(s.rule[1].master, 1);
  cr_assert_eq(s.rule[1].who, 0);
  cr_assert_eq(s.rule[1].epoch, FTMW_FAULT_ANY);
  cr_assert_eq(s.rule[2].who, FTMW_FAULT_ANY);
  cr_assert_eq(ftmw_fault_parse("", &s, err, sizeof(err)), -1);
  cr_assert_eq(ftmw_fault_parse("a,b,c,d,e,f,g,h,i", &s, err, sizeof(err)), -1);
}

/* A fault that is not a death (spawn.stall) fires once, at the Nth hit,
 * in the process its rule names only. */
Test(fault, fires_at_the_nth_hit_of_its_process, .timeout = 5) {
  ftmw_fault_arm("spawn.stall:2@m0", 1, 0, 0);
  cr_assert_eq(ftmw_fault_fires(FTMW_FAULT_SPAWN_STALL), 0);
  cr_assert_eq(ftmw_fault_fires(FTMW_FAULT_SPAWN_STALL), 1);
  cr_assert_eq(ftmw_fault_fires(FTMW_FAULT_SPAWN_STALL), 0);
  cr_assert_eq(ftmw_fault_fires(FTMW_FAULT_RECV_ENTER), 0);
  ftmw_fault_arm("spawn.stall:1@m0", 1, 1, 0); /* master 1: not named */
  cr_assert_eq(ftmw_fault_fires(FTMW_FAULT_SPAWN_STALL), 0);
  ftmw_fault_arm("spawn.stall:1@m0", 0, 0, 0); /* worker 0: not a master */
  cr_assert_eq(ftmw_fault_fires(FTMW_FAULT_SPAWN_STALL), 0);
}

Test(error, table_is_complete, .timeout = 5) {
  for (int e = 0; e < FT_ERRNO_COUNT; e++) {
    cr_assert_str_neq(ft_strerror(e), "unknown error", "code %d", e);
    cr_assert(strncmp(ft_errname(e), "FT_", 3) == 0);
  }
  cr_assert_str_eq(ft_errname(FT_ERR_PEER_FAILED), "FT_ERR_PEER_FAILED");
  cr_assert_str_eq(ft_strerror(-1), "unknown error");
  cr_assert_str_eq(ft_errname(FT_ERRNO_COUNT), "FT_UNKNOWN");
  cr_assert_eq(ft_type_size(FT_DOUBLE), sizeof(double));
  cr_assert_eq(ft_type_size((FT_Datatype)0), 0);
}

/* Every call before ft_init fails cleanly with FT_ERR_NOT_INITIALIZED. */
Test(error, calls_before_init, .timeout = 5) {
  int x = 0, r = 0;
  cr_assert_eq(ft_send(&x, 1, FT_INT, 1, 0), 0);
  cr_assert_eq(ft_error(), FT_ERR_NOT_INITIALIZED);
  cr_assert_eq(ft_recv(&x, 1, FT_INT, 0, 0, NULL), 0);
  cr_assert_eq(ft_error(), FT_ERR_NOT_INITIALIZED);
  cr_assert_eq(ft_waitany(&r), -1);
  cr_assert_eq(ft_error(), FT_ERR_NOT_INITIALIZED);
  cr_assert_eq(ft_restore(1), 0);
  cr_assert_eq(ft_error(), FT_ERR_NOT_INITIALIZED);
  cr_assert_eq(ft_finalize(), 0);
  cr_assert_eq(ft_is_primary(), 0);
}
