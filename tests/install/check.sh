#!/bin/sh
# Installs the build into a temporary prefix, builds a program outside the
# tree with pkg-config, with ftmwcc and with find_package, and runs each
# with the installed ftmwrun.
# Usage: check.sh BUILD_DIR MPI
set -eu
build=$1 mpi=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
libdir=$(ls -d "$tmp"/prefix/lib*/pkgconfig | head -1)
export PKG_CONFIG_PATH=$libdir
# shellcheck disable=SC2046
"mpicc.$mpi" "$here/hello.c" -o "$tmp/hello_pc" $(pkg-config --cflags --libs ftmw)
"$tmp/prefix/bin/ftmwcc" -O2 "$here/hello.c" -o "$tmp/hello_cc"
cmake -S "$here" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DMPI_C_COMPILER="mpicc.$mpi" > /dev/null
cmake --build "$tmp/consumer" > /dev/null
for prog in "$tmp/hello_pc" "$tmp/hello_cc" "$tmp/consumer/hello_cmake"; do
  out=$("$tmp/prefix/bin/ftmwrun" --mpi "$mpi" -w 2 "$prog" 2>&1)
  echo "$out" | grep -q "installed ftmw works with 2 workers" || { echo "FAIL: $prog: $out"; exit 1; }
done
# The MPI layer: an MPI program linked with it (pkg-config, find_package)
# runs under ftmwrun; a plain one under ftmwrun --transparent.
calls=$here/../mpi/calls.c
# shellcheck disable=SC2046
"mpicc.$mpi" -w "$calls" -o "$tmp/calls_pc" $(pkg-config --libs ftmw-mpi)
"mpicc.$mpi" -w "$calls" -o "$tmp/calls_plain"
"$tmp/prefix/bin/ftmwcc" --mpi-layer -w "$calls" -o "$tmp/calls_cc"
# With a spare: MPI_COMM_WORLD has 3 ranks under the layer, 4 without.
for run in "$tmp/calls_pc" "$tmp/calls_cc" "$tmp/consumer/calls_cmake" "--transparent $tmp/calls_plain"; do
  # shellcheck disable=SC2086
  out=$("$tmp/prefix/bin/ftmwrun" --mpi "$mpi" -w 2 -s 1 $run 2>&1) ||
    { echo "FAIL: $run exited $?: $out"; exit 1; }
  echo "$out" | grep -q "^size 3," && echo "$out" | grep -q "^done$" ||
    { echo "FAIL: $run (not under the layer?): $out"; exit 1; }
done
echo "PASS: pkg-config, ftmwcc and find_package consumers, of ftmw and of ftmw-mpi, run with the installed ftmwrun"
