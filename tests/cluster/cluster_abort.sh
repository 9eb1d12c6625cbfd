#!/bin/bash
# ft_abort across the hosts of a virtual cluster (tools/ftmw-cluster): a
# worker on one host ends the job; ftmwrun (on h0) exits with its status,
# and no process of the job is left on any host. The job: the primary on
# h1, workers on h2..h3 (and a replica with -m 1). Exits 77 (skipped)
# where network namespaces cannot be made.
# Usage: cluster_abort.sh FTMWRUN JOB_CALLS "FTMWRUN-OPTIONS"
set -u
ftmwrun=$1 prog=$2 opts=$3
here=$(cd "$(dirname "$0")" && pwd)
N=4 . "$here/cluster_up.sh"
printf 'h1 slots=1\nh2 slots=2\nh3 slots=2\n' > "$tmp/hosts"
# shellcheck disable=SC2086
FT_TRACE=$tmp/trace timeout 120 "$cluster" exec h0 "$ftmwrun" $opts --hostfile "$tmp/hosts" \
  --agent "$here/../../tools/ftmw-cluster-rsh" --iface eth0 \
  "$prog" abort_worker > "$tmp/out" 2> "$tmp/err"
rc=$?
grep -v PMIX "$tmp/err" | grep -v '^ *$' | head -30
[ "$rc" -eq 7 ] || { echo "FAIL: exit status $rc, want 7"; exit 1; }
hosts=$(grep '"event":"abort"' "$tmp/trace" | grep -o '"host":"h[0-9]"' | sort -u | tr '\n' ' ')
echo "== the processes that ended the job ran on: $hosts"
[ "$(echo "$hosts" | wc -w)" -ge 2 ] || { echo "FAIL: the job did not span hosts"; exit 1; }
for h in h1 h2 h3; do
  for _ in $(seq 20); do
    [ -z "$(procs_on "$h" | grep job_calls)" ] && break
    sleep 0.5
  done
  left=$(procs_on "$h" | grep job_calls)
  [ -z "$left" ] || { echo "FAIL: left on $h: $left"; exit 1; }
done
echo "abort across hosts: status 7, nothing left"
