#!/bin/sh
# The plain-MPI twin prints the same result lines as the FTMW program: the
# twin runs under the mpiexec line ftmwrun would use with TWIN-OPTIONS
# (--dry-run; give it --static and as many workers), the program under
# ftmwrun with FTMWRUN-OPTIONS. FT_FAULT, if set, reaches both (the twin
# ignores it). EXPECT, if set, is a regex the program's output must match.
# Usage: twin_same.sh FTMWRUN "FTMWRUN-OPTIONS" "TWIN-OPTIONS" RESULT-REGEX
#                     TWIN PROGRAM [ARGS...]
set -u
ftmwrun=$1 opts=$2 twin_opts=$3 result=$4 twin=$5 prog=$6
shift 6
# shellcheck disable=SC2086
line=$("$ftmwrun" --dry-run $twin_opts "$twin" "$@") || exit 1
# What ftmwrun sets for the line it runs: Open MPI refuses root without it.
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
twin_out=$(eval "$line" 2>&1) || { echo "$twin_out"; echo "FAIL: the twin failed"; exit 1; }
# shellcheck disable=SC2086
out=$("$ftmwrun" $opts "$prog" "$@" 2>&1) || { echo "$out"; echo "FAIL: $prog failed"; exit 1; }
want=$(echo "$twin_out" | grep -E "$result")
got=$(echo "$out" | grep -E "$result")
echo "$got"
[ -n "$want" ] && [ "$want" = "$got" ] || { echo "FAIL: twin printed '$want'"; exit 1; }
if [ -n "${EXPECT:-}" ]; then
  echo "$out" | grep -q -E "$EXPECT" || { echo "FAIL: no line matching '$EXPECT'"; exit 1; }
fi
echo PASS
