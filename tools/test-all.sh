#!/bin/bash
# README's second command (and CI's): installs what is missing, then builds
# and tests FTMW with Open MPI and with MPICH (their cluster tests in the
# background meanwhile), runs the unit tests and a set of job tests under
# the address and undefined-behaviour sanitizers and a set under
# ThreadSanitizer, the chaos harness's short mode, then fuzzes the frame
# decoder with libFuzzer for a bounded time. Ends with one summary line.
set -u
cd "$(dirname "$0")/.." || exit 1
tools/install-deps.sh || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
passed=0 failed=0
# count FILE: adds a ctest summary's counts (none found: one failure).
count() {
  local p
  p=$(sed -n 's/.* tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2 \1/p' "$1")
  # shellcheck disable=SC2086
  set -- $p
  passed=$((passed + ${1:-0} - ${2:-0})); failed=$((failed + ${2:-1}))
}
# build_suite NAME CMAKE-ARGS...: configures and builds build-test/NAME;
# a failure counts once, is shown, and returns 1.
build_suite() {
  local name=$1; shift
  echo "=== build $name"
  if ! cmake -S . -B "build-test/$name" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"build-test/$name.log" 2>&1 ||
     ! cmake --build "build-test/$name" -j"$(nproc)" >>"build-test/$name.log" 2>&1; then
    tail -30 "build-test/$name.log"; failed=$((failed + 1)); return 1
  fi
}
# test_suite NAME LABEL CTEST-ARGS...: ctest in build-test/NAME, its output
# also in build-test/LABEL.ctest, counted. -j6: two tests at a time (each
# counts 3 processors: tests/CMakeLists.txt), beside the cluster tests
# while they run.
test_suite() {
  local name=$1 label=$2; shift 2
  echo "=== $label"
  (cd "build-test/$name" && ctest --output-on-failure -j6 "$@") | tee "build-test/$label.ctest"
  count "build-test/$label.ctest"
}
mkdir -p build-test
# The job tests' matrix, chosen to keep CI near 25 minutes on 2 cores:
# every job test runs once in each MPI and launch mode (Open MPI spawn and
# MPICH static in release builds), and under ASan and UBSan the fewest
# that execute every line and branch the whole set does
# (tests/asan-jobs.txt, from tools/cover-select); ThreadSanitizer runs a
# chosen set once each, in the mode where each matters.
built=
build_suite openmpi -DFTMW_MPI=openmpi && built="$built openmpi"
build_suite mpich -DFTMW_MPI=mpich && built="$built mpich"
# The cluster tests (network namespaces, Slurm) spend most of their time
# waiting for a timeout or a takeover: both builds' run in the background,
# two at a time, beside the other suites' job tests; their output is shown
# at the end. Two ctest runs share each build's cache of reference runs
# (integration/reference.sh): it is emptied here, once, and neither runs
# the fixture that empties it (-FS ref_cache), which would pull it from
# under the other's tests.
for name in $built; do rm -rf "build-test/$name/tests/ref-cache"; done
(
  for name in $built; do
    (cd "build-test/$name" && ctest --output-on-failure -j2 -L cluster -FS ref_cache) > "build-test/$name-cluster.ctest" 2>&1
  done
) &
clusters=$!
trap 'pkill -P "$clusters" 2>/dev/null; kill "$clusters" 2>/dev/null' EXIT
for name in $built; do
  if [ "$name" = openmpi ]; then
    test_suite openmpi openmpi -LE cluster -FS ref_cache -E '^job\.openmpi\.(static\.|ref_cache_clear$)'
  else
    test_suite mpich mpich -LE cluster -FS ref_cache -E '^job\.mpich\.ref_cache_clear$'
  fi
done
# Leak checks are off: MPI libraries keep memory until exit by design.
# (mpirun_deadlock_ended runs only ftmwrun and a stand-in mpirun.)
asan_jobs=$(grep -v '^#' tests/asan-jobs.txt | sed 's/[.]/\\./g' | paste -sd'|')
asan_n=$(grep -vc '^#' tests/asan-jobs.txt)
if build_suite asan-ubsan -DFTMW_MPI=openmpi -DFTMW_SANITIZE=address,undefined -DFTMW_BUILD_BENCH=OFF; then
  asan_re="^(unit|docs|cli)\\.|^(job\\.openmpi\\.ref_cache_clear|$asan_jobs)\$"
  # A renamed or removed test would silently leave the set.
  found=$(cd build-test/asan-ubsan && ctest -N -R "$asan_re" | grep -c ' job\.openmpi\.[a-z]*\.')
  if [ "$found" -ne "$asan_n" ]; then
    echo "asan-ubsan: tests/asan-jobs.txt names $asan_n job tests, the build has $found of them: run tools/cover-select (its header says how)"
    failed=$((failed + 1))
  fi
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    test_suite asan-ubsan asan-ubsan -R "$asan_re" -E mpirun_deadlock_ended
fi
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
build_suite tsan -DFTMW_MPI=openmpi -DFTMW_SANITIZE=thread -DFTMW_BUILD_BENCH=OFF &&
  TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp report_signal_unsafe=0 report_thread_leaks=0 log_path=$tsan_logs/report" \
  test_suite tsan tsan -L job -R "^job\.openmpi\.(ref_cache_clear|static\.($tsan_static)|spawn\.($tsan_spawn))\$"
reports=$(find "$tsan_logs" -type f | wc -l)
if [ "$reports" -gt 0 ]; then
  head -c 20000 "$tsan_logs"/*
  echo "tsan: $reports process(es) reported a data race (above)"
  failed=$((failed + reports))
fi
wait "$clusters"
for name in $built; do
  echo "=== $name-cluster"
  cat "build-test/$name-cluster.ctest"
  count "build-test/$name-cluster.ctest"
done
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
CC=clang build_suite fuzz -DFTMW_FUZZ=ON -DFTMW_BUILD_TESTS=OFF -DFTMW_BUILD_EXAMPLES=OFF -DFTMW_BUILD_BENCH=OFF \
  -DFTMW_FUZZ_SECONDS=60 && test_suite fuzz fuzz
echo "ftmw: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
