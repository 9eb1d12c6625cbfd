#!/bin/sh
# SIGTERM, as a batch system's time limit sends it (Slurm: to every
# process of the job; docs/operations.md). A multistart job (examples/
# multistart, or multistart_farm) runs; once its
# master has run for a while, WHO gets SIGTERM: "all" (every process of the
# job, ftmwrun and the launcher too, as Slurm's tree kill does: SLURM_JOB_ID
# is set so that ftmwrun passes it on only once the launcher is done with
# its own) or "ftmwrun" (ftmwrun alone, which passes it on). The job must then end well within
# FT_TERM_GRACE_MS with the program's own status (3: stopped), having
# printed the best of the searches done ("local searches N of M (stopped
# by SIGTERM)", N >= 1), the primary master having left by itself (no
# grace ran out there), and nothing of the job may be left running. "Well
# within": the master's ft_finalize within the grace of its SIGTERM, and
# ftmwrun within 20 s (the grace, 4 s, then at most ftmwrun's 10 s wait
# for a launcher still running after the master, tools/ftmwrun.in).
# Usage: term_job.sh FTMWRUN "FTMWRUN-OPTIONS" WHO PROGRAM [ARGS...]
set -u
ftmwrun=$1 opts=$2 who=$3 prog=$4
shift 4
. "$(dirname "$0")/workdir.sh"
. "$(dirname "$0")/term_checks.sh"
# The verdict is kept with the run's files when it fails (workdir.sh).
fail() { echo "FAIL: $*" | tee "$tmp/failed"; exit 1; }
grace=4000 grace_s=5
# Every data message traced: the test sees results come in.
export FT_TRACE="$tmp/trace" FT_TRACE_DATA=1 FT_TERM_GRACE_MS=$grace
[ "$who" = all ] && export SLURM_JOB_ID=term_job
# The job's processes: ftmwrun and its descendants (hydra's proxies have
# sessions of their own), as Slurm's process tracking finds them; all
# killed at the end.
# shellcheck disable=SC2086
"$ftmwrun" $opts "$prog" "$@" > "$tmp/out" 2> "$tmp/err" &
job=$!
in_job() {
  ps -e -o pid=,ppid= | awk -v top="$job" '
    { parent[$1] = $2 }
    END { for (p in parent) { q = p
            while (q != "" && q != top && q > 1) q = parent[q]
            if (q == top) print p } }'
}
workdir_exit='kill -KILL $(in_job) ${left:-} 2>/dev/null'
# Running: the primary has received 5 results (or anything), and 1 s more.
received() {
  grep '"role":"master","rank":0,"id":0,' "$tmp/trace" 2>/dev/null |
    grep -c '"event":"received"'
}
i=0
until [ "$(received)" -ge 5 ]; do
  i=$((i + 1))
  [ $i -lt 450 ] && kill -0 $job 2>/dev/null || {
    cat "$tmp/out" "$tmp/err"; fail "the job did not start"; }
  sleep 0.1
done
sleep 1
pids=$(in_job)
echo "== SIGTERM to $who: $(echo $pids | wc -w) processes in the job"
t0=$(date +%s%N)
if [ "$who" = all ]; then kill -TERM $pids; else kill -TERM $job; fi
wait $job
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "== ftmwrun exited $rc, $ms ms after SIGTERM"
grep -v PMIX "$tmp/out" "$tmp/err"
# What was in the job at the signal (ftmwrun's descendants are orphans
# once it exits); killed at exit if still there.
alive() { for p in $pids; do kill -0 "$p" 2>/dev/null && echo "$p"; done; }
left=$pids i=0
while [ -n "$left" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); left=$(alive); done
[ -z "$left" ] || { ps -o pid=,args= -p "$(echo $left | tr ' ' ,)"
  fail "processes of the job left 5 s after ftmwrun"; }
[ "$rc" = 3 ] || { fail "status $rc, want 3 (the program stopped by SIGTERM)"; }
[ "$ms" -lt $(( (3 * grace_s + 5) * 1000 )) ] ||
  { fail "$ms ms to end, FT_TERM_GRACE_MS is $grace"; }
why=$(term_partial_once "$tmp/out") || fail "${why#FAIL: }"
mono() { # EVENT: the primary's first EVENT, in ms of its clock
  grep '"role":"master","rank":0,"id":0,' "$tmp/trace" | grep "\"event\":\"$1\"" |
    head -1 | sed 's/.*"mono":\([0-9]*\)\.\([0-9][0-9][0-9]\).*/\1\2/'
}
sig=$(mono sigterm) fin=$(mono finalize)
[ -n "$sig" ] && [ -n "$fin" ] ||
  { fail "the primary traced no SIGTERM ('$sig') or no ft_finalize ('$fin')"; }
echo "== the primary's ft_finalize $((fin - sig)) ms after its SIGTERM"
[ $((fin - sig)) -lt $grace ] || { fail "not within FT_TERM_GRACE_MS"; }
# ftmwrun alone signalled, under Open MPI: the SIGTERM reaches the primary
# through ftmwrun's stop, not through mpirun's kill, which comes 2 s
# later (odls_base_sigkill_timeout) with SIGKILL right after it
# (tools/ftmwrun.in): the primary then had no time to end.
if [ "$who" = ftmwrun ] && [ "${FTMW_MPI:-}" = openmpi ]; then
  wall=$(grep '"role":"master","rank":0,"id":0,' "$tmp/trace" |
    grep '"event":"sigterm"' | head -1 | sed 's/.*"wall":\([0-9]*\)\.\([0-9][0-9][0-9]\).*/\1\2/')
  late=$((wall - t0 / 1000000))
  echo "== the primary's SIGTERM $late ms after ftmwrun's"
  [ "$late" -lt 2000 ] || fail "the SIGTERM reached the primary through mpirun's kill"
fi
why=$(term_masters_left "$tmp/trace") || fail "${why#FAIL: }"
# Every process ended MPI, those the grace ended too (under MPICH, told
# hydra so: pmi.h).
"$(dirname "$0")/no_protocol_errors.sh" "$tmp/trace" > "$tmp/npe" ||
  { cat "$tmp/npe"; fail "$(tail -1 "$tmp/npe")"; }
echo "PASS"
