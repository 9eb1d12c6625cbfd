#!/bin/sh
# README's first command: installs what is missing, builds FTMW with Open MPI
# and runs the task farm twice, once cleanly and once with two workers
# killed mid-run; the checksums must match.
set -eu
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build -DFTMW_MPI=openmpi -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "== 4 workers, no failure"
build/ftmwrun -w 4 build/examples/farm --tasks 400 2>&1 | grep -v PMIX
echo "== 4 workers; worker 2 killed after its 10th task, worker 3 before its 20th"
FT_FAULT="recv.exit:10@2,recv.enter:20@3" build/ftmwrun -w 4 build/examples/farm --tasks 400 2>&1 | grep -v PMIX
