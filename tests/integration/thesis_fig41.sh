#!/bin/sh
# The thesis' figure 4.1 program runs unchanged: every worker prints its
# line, and the job's status is the 1 its main() returns.
# Usage: thesis_fig41.sh FTMWRUN FIG4_1 FTMWRUN-OPTIONS...
set -u
ftmwrun=$1 prog=$2; shift 2
out=$("$ftmwrun" "$@" "$prog" 2>&1); rc=$?
echo "$out" | grep -v PMIX
for w in 1 2 3; do
  echo "$out" | grep -q "^I am Worker - $w!$" || { echo "FAIL: no line from worker $w"; exit 1; }
done
[ "$rc" -eq 1 ] || { echo "FAIL: exit status $rc, want the program's 1"; exit 1; }
echo "PASS"
