#!/bin/bash
# README's second command (and CI's): installs what is missing, then builds
# and tests FTMW with Open MPI, with MPICH, and with Open MPI under the
# address and undefined-behaviour sanitizers, then fuzzes the frame decoder
# with libFuzzer for a bounded time. Ends with one summary line.
set -u
cd "$(dirname "$0")/.."
tools/install-deps.sh || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
passed=0 failed=0
run_suite() { # name cmake-args...
  local name=$1; shift
  echo "=== $name"
  if ! cmake -S . -B "build-test/$name" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"build-test/$name.log" 2>&1 ||
     ! cmake --build "build-test/$name" -j"$(nproc)" >>"build-test/$name.log" 2>&1; then
    tail -30 "build-test/$name.log"; failed=$((failed + 1)); return
  fi
  (cd "build-test/$name" && ctest --output-on-failure -j2) | tee "build-test/$name.ctest"
  local p
  p=$(sed -n 's/.* tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2 \1/p' "build-test/$name.ctest")
  set -- $p
  passed=$((passed + ${1:-0} - ${2:-0})); failed=$((failed + ${2:-1}))
}
mkdir -p build-test
run_suite openmpi -DFTMW_MPI=openmpi
run_suite mpich -DFTMW_MPI=mpich
# Leak checks are off: MPI libraries keep memory until exit by design.
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  run_suite asan-ubsan -DFTMW_MPI=openmpi -DFTMW_SANITIZE=address,undefined -DFTMW_BUILD_BENCH=OFF
CC=clang run_suite fuzz -DFTMW_FUZZ=ON -DFTMW_BUILD_TESTS=OFF -DFTMW_BUILD_EXAMPLES=OFF -DFTMW_BUILD_BENCH=OFF \
  -DFTMW_FUZZ_SECONDS=60
echo "ftmw: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
