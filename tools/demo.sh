#!/bin/sh
# README's first command: installs what is missing, builds FTMW with Open MPI
# and runs the multistart optimizer twice with 4 workers, once cleanly and
# once with two workers killed mid-run (one during a local search, one
# just before sending a result). The failures and restores show on stderr;
# the optimum must be the same, bit for bit.
set -eu
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build -DFTMW_MPI=openmpi -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
run() { build/ftmwrun -w 4 build/examples/multistart -f rastrigin -n 128 -D 100 2>&1 | grep -v PMIX; }
echo "== multistart, 4 workers, no failure"
clean=$(run); echo "$clean"
echo
echo "== the same, worker 2 killed during its 3rd search, worker 3 before sending its 6th result"
killed=$(FT_FAULT="recv.exit:4@2,send.enter:6@3" run); echo "$killed"
echo
best() { echo "$1" | grep '^best'; }
if [ -n "$(best "$clean")" ] && [ "$(best "$clean")" = "$(best "$killed")" ]; then
  echo "demo: same optimum with and without killed workers"
else
  echo "demo: the optima differ" >&2
  exit 1
fi
