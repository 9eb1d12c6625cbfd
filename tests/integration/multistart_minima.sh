#!/bin/sh
# multistart finds the known global minima: Rastrigin and Ackley 0 at the
# origin, Rosenbrock 0 at (1,...,1), in 10 dimensions.
# Usage: multistart_minima.sh FTMWRUN MULTISTART FTMWRUN-OPTIONS...
set -u
ftmwrun=$1 prog=$2; shift 2
opts="$*"
check() { # FUNCTION STARTS X* TOL-F TOL-X
  # shellcheck disable=SC2086
  out=$("$ftmwrun" $opts "$prog" -f "$1" -n "$2" 2>&1) || { echo "$out"; echo "FAIL: $1 run failed"; exit 1; }
  echo "$out" | grep -E '^(best|local)'
  echo "$out" | awk -v fn="$1" -v xs="$3" -v tf="$4" -v tx="$5" '
    BEGIN { dx = 0 }
    /^best f =/ { f = $4; seen_f = 1 }
    /^best x =/ { for (i = 4; i <= NF; i++) { d = $i - xs; if (d < 0) d = -d; if (d > dx) dx = d }; seen_x = 1 }
    END {
      if (!seen_f || !seen_x) { print "FAIL: " fn ": no result"; exit 1 }
      if (f > tf) { print "FAIL: " fn ": f = " f ", want <= " tf; exit 1 }
      if (dx > tx) { print "FAIL: " fn ": x is " dx " from " xs ", want <= " tx; exit 1 }
      print fn ": f = " f ", |x - x*| = " dx ": ok"
    }' || exit 1
}
check rastrigin 256 0 1e-6 1e-4
check ackley 16 0 1e-6 1e-4
check rosenbrock 8 1 1e-8 1e-3
echo PASS
