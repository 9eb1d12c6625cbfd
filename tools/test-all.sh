#!/bin/bash
# README's second command (and CI's): installs what is missing, then builds
# and tests FTMW with Open MPI, with MPICH, and with Open MPI under the
# address and undefined-behaviour sanitizers, runs a set of job tests under
# ThreadSanitizer, the chaos harness's short mode, then fuzzes the frame
# decoder with libFuzzer for a bounded time. Ends with one summary line.
set -u
cd "$(dirname "$0")/.." || exit 1
tools/install-deps.sh || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
passed=0 failed=0
run_suite() { # name cmake-args... (CTEST_ARGS: which tests, all if unset)
  local name=$1; shift
  echo "=== $name"
  if ! cmake -S . -B "build-test/$name" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"build-test/$name.log" 2>&1 ||
     ! cmake --build "build-test/$name" -j"$(nproc)" >>"build-test/$name.log" 2>&1; then
    tail -30 "build-test/$name.log"; failed=$((failed + 1)); return
  fi
  # -j8: two tests at a time, and two cluster tests beside them (each test
  # counts 3 processors, a cluster test 1: tests/CMakeLists.txt).
  # shellcheck disable=SC2086
  (cd "build-test/$name" && ctest --output-on-failure -j8 ${CTEST_ARGS:-}) | tee "build-test/$name.ctest"
  local p
  p=$(sed -n 's/.* tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2 \1/p' "build-test/$name.ctest")
  set -- $p
  passed=$((passed + ${1:-0} - ${2:-0})); failed=$((failed + ${2:-1}))
}
mkdir -p build-test
# The job tests' matrix, chosen to keep CI near 25 minutes on 2 cores:
# every job test runs once in each MPI and launch mode (Open MPI spawn and
# MPICH static in release builds, Open MPI static under ASan and UBSan);
# the sanitizers see spawn mode through the tests where it differs (spawns,
# respawns, stalled spawns, orphans, hosts running out), and ThreadSanitizer
# runs a chosen set once each, in the mode where each matters.
CTEST_ARGS="-E ^job\.openmpi\.static\." run_suite openmpi -DFTMW_MPI=openmpi
run_suite mpich -DFTMW_MPI=mpich
# Leak checks are off: MPI libraries keep memory until exit by design.
# (mpirun_deadlock_ended runs only ftmwrun and a stand-in mpirun.)
asan_spawn="api|ms_api|calls|farm_api|abort_master|orphans_exit|init_death_restored|isend_to_dead_worker|\
farm_two_kills|farm_pipelined_two_kills|farm_posted_two_kills|msfarm_two_kills|farmlayer_kills|multistart_farm_kills|\
ms_restore_paths_recv\.exit_2_2_recv\.exit_6_3|out_of_hosts|replica_dies_starting|restore_spawn_stalled|\
restore_queued_spawn_stalled|sixteen_workers|farm_replicas1_restores|multistart_replicas2_restores|\
layer_calls_two_workers|layer_calls_init_death|pause_worker_fenced"
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  CTEST_ARGS="-R ^(unit|docs|cli)\.|^job\.openmpi\.(ref_cache_clear\$|static\.|spawn\.($asan_spawn)\$) -E mpirun_deadlock_ended" \
  run_suite asan-ubsan -DFTMW_MPI=openmpi -DFTMW_SANITIZE=address,undefined -DFTMW_BUILD_BENCH=OFF
# Both threads of every process run the transport's loop in turn: the job
# tests that cover calls, computing between calls, kills, restores and
# replicas run under ThreadSanitizer (Criterion's unit tests cannot). A
# report does not change a job's exit status (its processes end through
# MPI and ftmwrun), so every process that wrote one counts as a failure.
# Threads left running on purpose (an abandoned spawn) are not reported.
tsan_static="api|isend_api|posted_api|ms_api|big64MiB|busy_between_calls|sigstop_detected|farm_kill_recv\.ack|\
pause_whole_job|pause_primary_fenced|starved_master0_spared|farm_api|farmlayer_time_limit|calls|msbcast|abort_master|\
calls_replicas2_primary_dies|replicas1_primary_dies_after_send|replicas2_worker_dies_acked_some_replicas|\
farmlayer_replicas1_primary_killed|term_calls|term_calls_replicas1|term_multistart|io_wakeups"
tsan_spawn="farm_pipelined_two_kills|farm_posted_two_kills|farm_replicas2_posted_restores|farm_two_kills|\
farm_replicas1_restores|multistart_replicas2_restores|orphans_exit|pause_worker_fenced|ported_pmandel_two_workers|\
restore_queued_spawn_stalled|layer_calls_two_workers|init_death_restored"
tsan_logs=$PWD/build-test/tsan-reports
rm -rf "$tsan_logs"; mkdir -p "$tsan_logs"
TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp report_signal_unsafe=0 report_thread_leaks=0 log_path=$tsan_logs/report" \
CTEST_ARGS="-L job -R ^job\.openmpi\.(ref_cache_clear|static\.($tsan_static)|spawn\.($tsan_spawn))\$" \
  run_suite tsan -DFTMW_MPI=openmpi -DFTMW_SANITIZE=thread -DFTMW_BUILD_BENCH=OFF
reports=$(find "$tsan_logs" -type f | wc -l)
if [ "$reports" -gt 0 ]; then
  head -c 20000 "$tsan_logs"/*
  echo "tsan: $reports process(es) reported a data race (above)"
  failed=$((failed + reports))
fi
# The chaos harness's short mode: random jobs on both MPIs with random
# kills and pauses, two CPU hogs beside them (tests/chaos/README.md). Each
# run counts as a test; its seed is printed for a replay.
echo "=== chaos"
if [ -x build-test/openmpi/ftmwrun ] && [ -x build-test/mpich/ftmwrun ]; then
  tests/chaos/chaos.sh --openmpi build-test/openmpi --mpich build-test/mpich \
    --runs "${CHAOS_RUNS:-8}" --hogs 2 --out build-test/chaos | tee build-test/chaos.log
  # shellcheck disable=SC2046
  set -- $(sed -n 's/^chaos: [0-9]* runs, \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' build-test/chaos.log)
  passed=$((passed + ${1:-0})); failed=$((failed + ${2:-1}))
else
  echo "chaos: no Open MPI or MPICH build to run"; failed=$((failed + 1))
fi
CC=clang run_suite fuzz -DFTMW_FUZZ=ON -DFTMW_BUILD_TESTS=OFF -DFTMW_BUILD_EXAMPLES=OFF -DFTMW_BUILD_BENCH=OFF \
  -DFTMW_FUZZ_SECONDS=60
echo "ftmw: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
