#!/bin/sh
# The master dies while its workers compute outside FTMW: every worker must
# exit on its own (the I/O thread's orphan timer) within FT_TIMEOUT_MS plus
# a heartbeat or two, and none may be left running.
# Usage: orphan.sh FTMWRUN JOB_API FTMWRUN-OPTIONS...
set -u
ftmwrun=$1 job=$2; shift 2
trace=$(mktemp); trap 'rm -f "$trace"' EXIT
export FT_TRACE=$trace FT_HEARTBEAT_MS=100 FT_TIMEOUT_MS=600
t0=$(date +%s%N)
"$ftmwrun" "$@" "$job" orphan > /dev/null 2>&1
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$rc" -ne 0 ] || { echo "FAIL: the job exited 0 although its master was killed"; exit 1; }
pids=$(grep '"role":"worker"' "$trace" | grep '"event":"launch"' | sed 's/.*"pid":\([0-9]*\).*/\1/')
nw=$(echo "$pids" | grep -c .)
exits=$(grep -c '"event":"orphan_exit"' "$trace")
[ "$nw" -ge 1 ] && [ "$exits" -eq "$nw" ] || { echo "FAIL: $nw workers, $exits orphan exits"; exit 1; }
for p in $pids; do
  if kill -0 "$p" 2>/dev/null; then echo "FAIL: worker pid $p still running"; kill -9 "$p"; exit 1; fi
done
echo "PASS: $nw orphaned workers exited by themselves; job over in $ms ms"
