#!/bin/bash
# Stops processes of a running farm job with SIGSTOP for PAUSE_MS, then
# resumes them, and checks what the failure detector made of it:
#   WHO "all": every process of the job at once (a machine that froze, or
#     was starved): nobody may be declared failed, since nobody was
#     running to notice; the job ends with no failure at all.
#   WHO "worker R" or "master K": that process alone, for longer than
#     FT_TIMEOUT_MS: it is declared failed, fenced (FENCE from a master),
#     and exits by itself once resumed; the farm's answer is the
#     fault-free one, every task once, printed by every surviving master.
# Each master prints (farm --every-master): the result lines must match
# WANT (" && "-separated regexes) once per surviving master.
# TASKS (environment, default 400) is the farm's number of tasks, each of
# 20 ms.
# Usage: pause_job.sh FTMWRUN FARM "FTMWRUN-OPTIONS" MASTERS WHO PAUSE_MS WANT
set -u
ftmwrun=$1 farm=$2 opts=$3 masters=$4 who=$5 pause_ms=$6 want=$7
. "$(dirname "$0")/workdir.sh"
# shellcheck disable=SC2016
workdir_exit='kill -CONT $pids 2>/dev/null'
pids=
args=(--tasks "${TASKS:-400}" --work-us 20000 --every-master)
# The fault-free answer.
"$(dirname "$0")/reference.sh" "$tmp/ref" "$ftmwrun" "--static -w 3" "$farm" "${args[@]}" || exit 1
ref=$(grep '^checksum' "$tmp/ref")
trace=$tmp/trace
# shellcheck disable=SC2086
FT_TRACE=$trace "$ftmwrun" $opts -m "$masters" "$farm" "${args[@]}" > "$tmp/out" 2> "$tmp/err" &
job=$!
# Every process has joined once the primary traced the connections of its
# workers, replicas and spares.
count() { echo "$opts" | sed -n "s/.*$1 \\([0-9]*\\).*/\\1/p"; }
want_joined=$(( $(count -w) + masters + $(count -s | grep . || echo 0) ))
for _ in $(seq 200); do
  n=$(grep '"id":0,' "$trace" 2>/dev/null | grep -c '"event":"connect"')
  [ "$n" -ge "$want_joined" ] && break
  sleep 0.05
done
pid_of() { # role id: the pid of that process, first incarnation
  grep "\"role\":\"$1\".*\"id\":$2,\"epoch\":0," "$trace" | head -1 |
    sed 's/.*"pid":\([0-9]*\).*/\1/'
}
if [ "$who" = all ]; then
  pids=$( (pid_of master 0; grep '"id":0,' "$trace" | grep '"event":"connect"' |
          sed 's/.*"peer_pid":\([0-9]*\).*/\1/') | sort -u | tr '\n' ' ')
else
  pids=$(pid_of $who)
fi
[ -n "$pids" ] || { echo "FAIL: no pid for '$who' in the trace"; kill "$job"; exit 1; }
sleep 0.3
echo "stopping $who (pids $pids) for $pause_ms ms"
# shellcheck disable=SC2086
kill -STOP $pids
sleep "$(echo "$pause_ms" | awk '{print $1 / 1000}')"
# shellcheck disable=SC2086
kill -CONT $pids
wait "$job"
rc=$?
cat "$tmp/out"; grep -v PMIX "$tmp/err"
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
"$(dirname "$0")/no_protocol_errors.sh" "$trace" || exit 1
detected=$(grep '"event":"failure_detected"' "$trace")
live=$((masters + 1))
if [ "$who" = all ]; then
  [ -z "$detected" ] || { echo "$detected"; echo "FAIL: a process was declared failed"; exit 1; }
else
  [ "${who%% *}" = master ] && live=$masters
  grep -q '"event":"fenced"' "$trace" || { echo "FAIL: $who was not fenced"; exit 1; }
  other=$(echo "$detected" | grep -v "\"peer\":\"$who\",\"peer_epoch\":0,")
  [ -z "$other" ] || { echo "$other"; echo "FAIL: another process was declared failed"; exit 1; }
fi
echo "$want" | sed 's/ && /\n/g' | while read -r re; do
  n=$(grep -c -x -E "$re" "$tmp/out")
  [ "$n" -eq "$live" ] || { echo "FAIL: '$re' printed $n times, want $live"; exit 1; }
done || exit 1
[ "$(grep -c '^checksum' "$tmp/out")" -eq "$live" ] &&
  [ "$(grep '^checksum' "$tmp/out" | sort -u)" = "$ref" ] ||
  { echo "FAIL: checksums, want '$ref' from each of $live masters"; exit 1; }
sleep 0.5
for p in $pids; do
  if kill -0 "$p" 2>/dev/null; then echo "FAIL: pid $p still running"; kill -9 "$p"; exit 1; fi
done
echo PASS
