#!/bin/sh
# ft_abort ends the whole job: ftmwrun exits with the status given to
# ft_abort, well before the test's limit (every other process waits in a
# receive that never completes), each process says why it left, and no
# process of the job is left running. Each ended MPI on its way out
# (under MPICH, told hydra so: ftmw/pmi.h), as the trace shows.
# Usage: abort_job.sh FTMWRUN "FTMWRUN-OPTIONS" WANT_STATUS PROGRAM MODE
set -u
ftmwrun=$1 opts=$2 want=$3 prog=$4 mode=$5
. "$(dirname "$0")/workdir.sh"
start=$(date +%s)
# shellcheck disable=SC2086
FT_TRACE="$tmp/trace" "$ftmwrun" $opts "$prog" "$mode" > "$tmp/out" 2> "$tmp/err"
rc=$?
took=$(($(date +%s) - start))
cat "$tmp/out" "$tmp/err" | grep -v PMIX
[ "$rc" -eq "$want" ] || { echo "FAIL: exit status $rc, want $want"; exit 1; }
# Starting takes a few seconds under load; ending must not add the 2 s
# wait of a process that cannot be reached, let alone a timeout.
[ "$took" -le 30 ] || { echo "FAIL: the job took ${took}s to end"; exit 1; }
grep -q "called ft_abort($want): ending the job" "$tmp/err" ||
  { echo "FAIL: no message from the process that called ft_abort"; exit 1; }
grep -q "ended the job (ft_abort($want))" "$tmp/err" ||
  { echo "FAIL: no process said it was told to end"; exit 1; }
if grep -q "did not close within" "$tmp/err"; then
  echo "FAIL: a process waited for one that never read its ABORT"; exit 1
fi
# Every process of the job has exited (this script's session holds them).
sid=$(ps -o sid= -p $$ | tr -d ' ')
n=0
# (this script's own command line names them too)
while pgrep -s "$sid" -f "$prog $mode" | grep -v -x "$$" > "$tmp/left" &&
  [ $n -lt 10 ]; do
  sleep 0.5; n=$((n + 1))
done
if [ -s "$tmp/left" ]; then
  echo "FAIL: processes left running:"; ps -o pid,args -p "$(tr '\n' ',' < "$tmp/left" | sed 's/,$//')"
  exit 1
fi
"$(dirname "$0")/no_protocol_errors.sh" "$tmp/trace" || exit 1
echo "abort: status $rc in ${took}s"
