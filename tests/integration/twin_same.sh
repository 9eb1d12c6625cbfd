#!/bin/sh
# The plain-MPI twin prints the same result lines as the FTMW program: the
# twin runs under the exact mpiexec line ftmwrun would use (--dry-run).
# Usage: twin_same.sh FTMWRUN "FTMWRUN-OPTIONS" RESULT-REGEX TWIN PROGRAM [ARGS...]
set -u
ftmwrun=$1 opts=$2 result=$3 twin=$4 prog=$5
shift 5
# shellcheck disable=SC2086
line=$("$ftmwrun" --dry-run $opts "$twin" "$@") || exit 1
# What ftmwrun sets for the line it runs: Open MPI refuses root without it.
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
twin_out=$(eval "$line" 2>&1) || { echo "$twin_out"; echo "FAIL: the twin failed"; exit 1; }
# shellcheck disable=SC2086
out=$("$ftmwrun" $opts "$prog" "$@" 2>&1) || { echo "$out"; echo "FAIL: $prog failed"; exit 1; }
want=$(echo "$twin_out" | grep -E "$result")
got=$(echo "$out" | grep -E "$result")
echo "$got"
[ -n "$want" ] && [ "$want" = "$got" ] || { echo "FAIL: twin printed '$want'"; exit 1; }
echo PASS
