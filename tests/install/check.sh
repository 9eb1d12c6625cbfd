#!/bin/sh
# Installs the build into a temporary prefix, builds a program outside the
# tree with pkg-config and with find_package, and runs both with the
# installed ftmwrun.
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
cmake -S "$here" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DMPI_C_COMPILER="mpicc.$mpi" > /dev/null
cmake --build "$tmp/consumer" > /dev/null
for prog in "$tmp/hello_pc" "$tmp/consumer/hello_cmake"; do
  out=$("$tmp/prefix/bin/ftmwrun" --mpi "$mpi" -w 2 "$prog" 2>&1)
  echo "$out" | grep -q "installed ftmw works with 2 workers" || { echo "FAIL: $prog: $out"; exit 1; }
done
echo "PASS: pkg-config and find_package consumers run with the installed ftmwrun"
