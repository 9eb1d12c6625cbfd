#!/bin/bash
# A job across the hosts of a virtual cluster (tools/ftmw-cluster), broken
# in one way, must print the fault-free answer once and exit 0: the farm
# its checksum, with every task once; multistart (and multistart_farm, the
# same search through the farm layer) its optimum. The
# cluster: h0 runs ftmwrun (the login node), the job runs on h1 (the
# primary, alone) and h2..h4 (two slots each); this script makes it under
# its own name and removes it at exit.
# SCENARIO:
#   spread       no fault: the workers run on at least 2 hosts
#   crash        host h2 stops (link cut, processes killed: a power loss):
#                its workers are declared failed and restored elsewhere,
#                h2 is blacklisted
#   kill         every process of h2 is killed (connections closed)
#   cut_worker   h2 is cut off: its workers are declared failed, no sooner
#                than FT_TIMEOUT_MS; they are stopped, h2 heals, they are
#                resumed: fenced, they must exit and nothing of theirs counts
#   cut_primary  h1 (the primary) is cut off: it steps down, the replica
#                takes over
#   cut_replica  the replica's host is cut off: it steps down
#   split        (-m 2) the hosts split in two: h1 (the primary) and h2
#                (two workers) apart from h3 (two workers) and h4 (the
#                two replicas); h0 reaches both. The primary, which
#                reaches 1 master of 3, steps down; a replica takes over
#                and the farm finishes without h2's workers (no spares),
#                its answer printed once
#   scancel      (SLURM) the job is cancelled mid-run: ftmwrun ends, and
#                no process of the job is left on any host
#   timelimit    (SLURM=sbatch, multistart) the job asks for 1 minute and
#                runs for longer: at the limit Slurm sends SIGTERM to every
#                process; the master prints the best of the searches done
#                ("of M (stopped by SIGTERM)") once and calls ft_finalize
#                within its grace, ftmwrun exits 3 (multistart's status),
#                and no process of the job is left on any host
#   no_host      the hostfile runs out: in static mode without spares,
#                h2's workers cannot be restored; in spawn mode (hosts h1
#                and h2 only, h1 blacklisted by one worker's death first)
#                neither can. The other workers finish the job (farm only)
# With SLURM=salloc or SLURM=sbatch the hosts run a real Slurm (ftmw-cluster
# up --slurm, h1..h4 of 2 CPUs each) and the job runs in an allocation of
# the 4 nodes, 2 CPUs each (--no-kill), ftmwrun taking the hosts and the agent from it
# (no hostfile, no --agent). After a crash the job must also outlive
# Slurm's own verdict on the node (about 15 s later: TASKS or STARTS long enough).
# Exits 77 (skipped) where network namespaces cannot be made, or, with
# SLURM, where Slurm is not installed.
# Usage: [SLURM=salloc|sbatch] cluster_job.sh FTMWRUN PROGRAM SCENARIO "FTMWRUN-OPTIONS"
#   PROGRAM: the farm, multistart or multistart_farm example
set -u
ftmwrun=$1 prog=$2 scenario=$3 opts=$4
here=$(cd "$(dirname "$0")" && pwd)
slurm=${SLURM:-}
case $slurm in
  '') ;;
  salloc | sbatch) command -v slurmctld > /dev/null || { echo "cluster_job.sh: Slurm is not installed"; exit 77; } ;;
  *) echo "cluster_job.sh: SLURM is salloc or sbatch, not '$slurm'"; exit 2 ;;
esac
N=5 UP_OPTS=${slurm:+--slurm} . "$here/cluster_up.sh"
export FT_TIMEOUT_MS=1000 FT_HEARTBEAT_MS=200
tasks=${TASKS:-1200}
case $(basename "$prog") in
  farm) args="--tasks $tasks --work-us 20000" ref_args="--tasks $tasks --work-us 0" answer='^checksum' ;;
  multistart | multistart_farm) args="-n ${STARTS:-64} -D 200" ref_args="-n ${STARTS:-64} -D 0"
    answer='^(function|best|local searches)'
    [ "$scenario" != timelimit ] || args="-n 100000 -D 200" ;;
  *) echo "cluster_job.sh: no program '$prog'"; exit 2 ;;
esac
spawn_no_host=; case $scenario,$opts in no_host,*--static*) ;; no_host,*) spawn_no_host=1 ;; esac
if [ -n "$spawn_no_host" ]; then
  printf 'h1 slots=2\nh2 slots=2\n' > "$tmp/hosts"
else
  printf 'h1 slots=1\nh2 slots=2\nh3 slots=2\nh4 slots=2\n' > "$tmp/hosts"
fi
# shellcheck disable=SC2086
"$here/../integration/reference.sh" "$tmp/ref" "$ftmwrun" "--static -w 2" "$prog" $ref_args || exit 1
ref=$(grep -E "$answer" "$tmp/ref")

trace=$tmp/trace
# shellcheck disable=SC2086
case $slurm in
  '')
    FT_TRACE=$trace "$cluster" exec h0 "$ftmwrun" $opts --hostfile "$tmp/hosts" \
      --agent "$here/../../tools/ftmw-cluster-rsh" --iface eth0 \
      "$prog" $args > "$tmp/out" 2> "$tmp/err" & ;;
  salloc)
    FT_TRACE=$trace "$cluster" exec h0 salloc -N 4 --ntasks-per-node=2 --no-kill \
      "$ftmwrun" $opts --iface eth0 "$prog" $args > "$tmp/out" 2> "$tmp/err" & ;;
  sbatch)
    # The batch script runs on h1, and its output goes to files.
    # The batch shell has Slurm's SIGTERM too: it waits for ftmwrun and
    # records its status.
    limit=; [ "$scenario" = timelimit ] && limit=--time=1
    FT_TRACE=$trace "$cluster" exec h0 sbatch --wait -N 4 --ntasks-per-node=2 --no-kill $limit \
      -o "$tmp/out" -e "$tmp/err" --wrap "trap 'echo batch script: SIGTERM >&2' TERM; $ftmwrun $opts --iface eth0 $prog $args; rc=\$?; echo \$rc > $tmp/rc; echo batch script: ftmwrun exited \$rc >&2" \
      > "$tmp/sbatch" 2>&1 & ;;
esac
job=$!
# The job runs once the primary has heard from every worker and replica.
want=$(($(echo "$opts" | sed -n 's/.*-w \([0-9]*\).*/\1/p') + $(echo "$opts" | sed -n 's/.*-m \([0-9]*\).*/\1/p' | grep . || echo 0)))
for _ in $(seq 300); do
  [ "$(grep '"role":"master","rank":[0-9]*,"id":0,' "$trace" 2>/dev/null | grep -c '"event":"connect"')" -ge "$want" ] && break
  kill -0 $job 2>/dev/null || break
  sleep 0.1
done
sleep 1
now() { date +%s.%N; }
# Nothing of the job on any host, 20 s after WHAT ended it: the program,
# the shim, MPI's daemons.
nothing_left() {
  pat="$(basename "$prog")|ftmw-shim|orted|hydra_pmi_proxy|slurmstepd"
  for _ in $(seq 100); do
    left=$(procs_on h1 h2 h3 h4 | grep -E "$pat")
    [ -z "$left" ] && return
    sleep 0.2
  done
  echo "FAIL: left 20 s after $1: $left"; exit 1
}
# Milliseconds from wall time T to the first trace line matching RE.
ms_to() { grep -E "$2" "$trace" | head -1 | sed -n 's/^{"wall":\([0-9.]*\),.*/\1/p' |
            awk -v t="$1" 'NF { printf "%.0f", ($1 - t) * 1000 }'; }
case $scenario in
  spread) ;;
  crash | kill) t=$(now); "$cluster" "$scenario" h2 ;;
  no_host)
    if [ -n "$spawn_no_host" ]; then
      # Workers 1 and 2 run on h1 (beside the primary), 3 on h2: worker 1's
      # death blacklists h1 and restores it on h2, the last host.
      w1=$(grep '"role":"worker","rank":1,' "$trace" | head -1 | sed -n 's/.*"host":"h1","pid":\([0-9]*\),.*/\1/p')
      [ -n "$w1" ] || { echo "FAIL: worker 1 is not on h1"; exit 1; }
      kill -9 "$w1"
      for _ in $(seq 100); do grep -q 'worker 1 restored' "$tmp/err" && break; sleep 0.1; done
    fi
    t=$(now); "$cluster" crash h2 ;;
  cut_worker)
    t=$(now); "$cluster" cut h2
    for _ in $(seq 100); do
      grep -q '"id":0,.*"event":"failure_detected","peer":"worker' "$trace" && break
      sleep 0.1
    done
    d=$(ms_to "$t" '"id":0,.*"event":"failure_detected","peer":"worker')
    echo "== h2 cut: its first worker declared failed by the primary after ${d:-?} ms"
    [ -n "$d" ] && [ "$d" -ge "$FT_TIMEOUT_MS" ] ||
      { echo "FAIL: a worker of the cut host was not declared failed, or sooner than FT_TIMEOUT_MS"; exit 1; }
    # The cut host's processes sleep through the heal: resumed, they find
    # themselves fenced.
    old=$("$cluster" pids h2 | tr '\n' ' ')
    # shellcheck disable=SC2086
    kill -STOP $old 2>/dev/null
    sleep 0.5; "$cluster" heal h2; sleep 0.5
    # shellcheck disable=SC2086
    kill -CONT $old 2>/dev/null ;;
  split)
    # The replicas (ranks W+1, W+2: masters 1 and 2) are on h4.
    for k in 1 2; do
      grep -q "\"role\":\"master\",\"rank\":[0-9]*,\"id\":$k,\"epoch\":0,\"host\":\"h4\"" "$trace" ||
        { echo "FAIL: master $k is not on h4"; "$cluster" pids h4; exit 1; }
    done
    t=$(now); "$cluster" split h1,h2 h3,h4
    echo "== split: h1 (the primary) and h2 | h3 and h4 (the replicas)" ;;
  cut_primary | cut_replica)
    h=h1; [ "$scenario" = cut_replica ] && h=$(grep -o '"role":"master","rank":[0-9]*,"id":1,"epoch":0,"host":"h[0-9]"' "$trace" | head -1 | sed 's/.*"host":"\(h[0-9]\)"/\1/')
    [ -n "$h" ] || { echo "FAIL: no trace of the replica's host"; exit 1; }
    t=$(now); "$cluster" cut "$h"
    echo "== $h cut (the $( [ $h = h1 ] && echo primary || echo replica )'s host)" ;;
  scancel)
    [ -n "$slurm" ] || { echo "cluster_job.sh: scancel needs SLURM"; exit 2; }
    id=$("$cluster" exec h0 squeue -h -o %i)
    [ -n "$id" ] || { echo "FAIL: no job in Slurm's queue"; exit 1; }
    "$cluster" exec h0 scancel "$id" || { echo "FAIL: scancel $id"; exit 1; }
    timeout 60 tail --pid=$job -f /dev/null
    kill -0 $job 2>/dev/null && { echo "FAIL: the job still runs 60 s after scancel"; exit 1; }
    nothing_left scancel
    echo "== job $id cancelled: nothing of it left on h1..h4"
    exit 0 ;;
  timelimit)
    [ "$slurm" = sbatch ] && [ "$(basename "$prog")" != farm ] ||
      { echo "cluster_job.sh: timelimit needs SLURM=sbatch and multistart(_farm)"; exit 2; }
    # Slurm looks at time limits every 30 s: the job ends 60 to 95 s in.
    # sbatch --wait returns once the job has timed out, while its
    # processes may still be ending: the batch script's last line is
    # written at its end (within KillWait, 30 s).
    timeout 150 tail --pid=$job -f /dev/null
    kill -0 $job 2>/dev/null && { echo "FAIL: the job still runs after 150 s"; exit 1; }
    for _ in $(seq 300); do
      grep -q '^batch script: ftmwrun exited' "$tmp/err" && break
      sleep 0.1
    done
    grep -v PMIX "$tmp/err" | grep -v '^ *$' | head -20
    cat "$tmp/out"
    grep -q "Time limit exhausted for JobId" "$slurm_logs/slurmctld.log" ||
      { echo "FAIL: Slurm did not end the job at its time limit"; exit 1; }
    . "$here/../integration/term_checks.sh"
    term_partial_once "$tmp/out" 100000 || exit 1
    [ "$(cat "$tmp/rc" 2>/dev/null)" = 3 ] ||
      { echo "FAIL: ftmwrun exited '$(cat "$tmp/rc" 2>/dev/null)', want 3 (stopped)"; exit 1; }
    # The primary: within the grace (FT_TERM_GRACE_MS, ftmw/config.h's
    # default unless set).
    primary='"role":"master","rank":0,"id":0,'
    sig=$(ms_to 0 "$primary.*\"event\":\"sigterm\"") fin=$(ms_to 0 "$primary.*\"event\":\"finalize\"")
    [ -n "$sig" ] && [ -n "$fin" ] && [ $((fin - sig)) -lt "${FT_TERM_GRACE_MS:-8000}" ] ||
      { echo "FAIL: the primary's SIGTERM ($sig) and ft_finalize ($fin): not within the grace"; exit 1; }
    term_masters_left "$trace" || exit 1
    nothing_left "the time limit"
    echo "== Slurm ended the job at its time limit; the primary called ft_finalize $((fin - sig)) ms after its SIGTERM; the best of the searches done printed once; nothing left on h1..h4"
    exit 0 ;;
  *) echo "cluster_job.sh: no scenario '$scenario'"; exit 2 ;;
esac
timeout 180 tail --pid=$job -f /dev/null
wait $job; rc=$?
[ "${h:-}" = "" ] || "$cluster" heal "$h"
[ "$scenario" != split ] || "$cluster" join
grep -v PMIX "$tmp/err" | grep -v '^ *$' | head -40
cat "$tmp/out"
got=$(grep -E "$answer" "$tmp/out")
[ "$got" = "$ref" ] || { printf 'FAIL: printed\n%s\nwant once\n%s\n' "$got" "$ref"; exit 1; }
[ "$answer" != '^checksum' ] || grep -q "^tasks $tasks/$tasks .* duplicates 0$" "$tmp/out" ||
  { echo "FAIL: not every task once"; exit 1; }
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
failures=$(sed -n 's/.*failures \([0-9]*\).*/\1/p' "$tmp/out")
restores=$(sed -n 's/.*restores \([0-9]*\).*/\1/p' "$tmp/out")
hosts_of() { grep "\"role\":\"$1\"" "$trace" | grep -o '"host":"h[0-9]"' | sort -u | wc -l; }
case $scenario in
  spread)
    [ "$(hosts_of worker)" -ge 2 ] || { echo "FAIL: the workers ran on $(hosts_of worker) hosts"; exit 1; } ;;
  crash | kill | cut_worker)
    # The workers h2 ran (placed there at launch: incarnation 0).
    lost=$(grep -o '"role":"worker","rank":[0-9]*,"id":[0-9]*,"epoch":0,"host":"h2"' "$trace" | sort -u | wc -l)
    [ "$lost" -ge 1 ] && [ "$failures" -ge "$lost" ] && [ "$restores" -eq "$failures" ] ||
      { echo "FAIL: $failures failures and $restores restores, want $lost (h2's workers) or more of each"; exit 1; }
    grep -q "host h2 blacklisted" "$tmp/err" || { echo "FAIL: h2 not blacklisted"; exit 1; }
    if grep -E 'restored \(.* on h2\)' "$tmp/err"; then echo "FAIL: a worker restored on h2"; exit 1; fi
    echo "== $failures workers of h2 failed, detected $(ms_to "$t" '"event":"failure_detected","peer":"worker') ms after the $scenario, restored on other hosts"
    if [ -n "$slurm" ]; then
      # Slurm took h2 out of the job while it ran (with --no-kill, and
      # each host's daemon in a job step of its own, the job goes on).
      grep -q "Removing failed node h2 from JobId" "$slurm_logs/slurmctld.log" ||
        { echo "FAIL: the job ended before Slurm marked h2 down: make it longer (TASKS, STARTS)"; exit 1; }
      echo "== Slurm marked h2 down and took it out of the allocation; the job went on"
    fi ;;&
  cut_worker)
    # shellcheck disable=SC2086
    for _ in $(seq 100); do kill -0 $old 2>/dev/null || break; sleep 0.1; done
    # shellcheck disable=SC2086
    if kill -0 $old 2>/dev/null; then echo "FAIL: processes of the healed host still run: $old"; exit 1; fi
    echo "== the fenced workers exited after the heal" ;;
  cut_primary | cut_replica)
    k=0; [ "$scenario" = cut_replica ] && k=1
    grep -q "\"id\":$k,.*\"event\":\"stepped_down\"" "$trace" || { echo "FAIL: master $k did not step down"; exit 1; }
    echo "== master $k stepped down $(ms_to "$t" "\"id\":$k,.*\"event\":\"stepped_down\"") ms after the cut"
    if [ $k = 0 ]; then
      grep -q '"id":1,.*"event":"role_change","role":"primary"' "$trace" || { echo "FAIL: the replica did not take over"; exit 1; }
      echo "== the replica took over $(ms_to "$t" '"event":"role_change","role":"primary"') ms after the cut"
    fi ;;
  split)
    grep -q '"id":0,.*"event":"stepped_down".*"masters":1' "$trace" ||
      { echo "FAIL: the primary did not step down, reaching 1 master"; exit 1; }
    grep -q '"id":[12],.*"event":"role_change","role":"primary"' "$trace" ||
      { echo "FAIL: no replica took over"; exit 1; }
    if grep -q '"id":[12],.*"event":"stepped_down"' "$trace"; then
      echo "FAIL: a replica of the majority stepped down"; exit 1
    fi
    echo "== the primary stepped down $(ms_to "$t" '"id":0,.*"event":"stepped_down"') ms after the split, a replica took over $(ms_to "$t" '"event":"role_change","role":"primary"') ms after it" ;;
  no_host)
    lost=$(grep -c 'could not be restored: no host or spare is left' "$tmp/err")
    [ "$lost" -ge 2 ] && [ "$restores" -eq $((failures - lost)) ] ||
      { echo "FAIL: $failures failures, $restores restores, $lost not restored: want 2 or more not restored, the others restored"; exit 1; }
    echo "== $lost workers could not be restored (no host left); the others finished the job" ;;
esac
