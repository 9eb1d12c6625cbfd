#!/bin/bash
# Chaos harness: runs many random FTMW jobs (farm, multistart, fig4_6,
# taskfarm, and the unmodified MPI program multistart_mpi under the MPI
# layer; Open MPI spawn or static mode, MPICH static mode; 2..5 workers, 0..2 master
# replicas, 0..2 spares) with 0 to 3 random faults each (kill -9 of a worker
# or a master, short or long SIGSTOP pauses) and checks every one: exit
# status, result against a fault-free reference, no process left behind, no
# protocol error, no false positive (a failure detected of a process that
# was neither killed nor paused past the timeout). See README.md here.
set -u

usage() {
  cat <<'EOF'
Usage: tests/chaos/chaos.sh [--openmpi BUILD_DIR] [--mpich BUILD_DIR] [--runs N]
           [--seed S] [--only K] [--hogs H] [--out DIR] [--keep-passed]
           [--timeout-ms T] [--heartbeat-ms B]

Runs N random FTMW jobs with random faults and checks each one.

  --openmpi DIR     Open MPI build directory (has ftmwrun and examples/)
  --mpich DIR       MPICH build directory; each run picks one of those given
                    (at least one is required)
  --runs N          number of runs (default 20)
  --seed S          harness seed (default: from the date and the pid); run K
                    draws its configuration from S and K alone
  --only K          run only run number K of that seed (replay a failure:
                    --seed S --only K)
  --hogs H          start H CPU-busy processes beside the jobs (default 0)
  --out DIR         where run directories and reference results go
                    (default: /tmp/ftmw-chaos.S)
  --keep-passed     keep the directories of passed runs too
  --timeout-ms T    export FT_TIMEOUT_MS=T (default: unset, library's 3000)
  --heartbeat-ms B  export FT_HEARTBEAT_MS=B (default: unset, library's 250)
  -h, --help        this text

Each run prints "run K seed S: PASS|FAIL <config> <duration>"; a failed run
also prints its reason and its kept directory (config, out, err, trace,
faults). The last two lines are "chaos: false positives: X" and
"chaos: N runs, P passed, F failed"; the exit status is 0 iff F = X = 0.
EOF
}

die() { echo "chaos: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
no_protocol_errors=$here/../integration/no_protocol_errors.sh

ompi_dir='' mpich_dir='' runs=20 seed='' only='' hogs=0 out='' keep_passed=0
timeout_ms='' heartbeat_ms=''
while [ $# -gt 0 ]; do
  case $1 in
    --openmpi) [ $# -ge 2 ] || die "$1 needs a value"; ompi_dir=$2; shift 2;;
    --mpich) [ $# -ge 2 ] || die "$1 needs a value"; mpich_dir=$2; shift 2;;
    --runs) [ $# -ge 2 ] || die "$1 needs a value"; runs=$2; shift 2;;
    --seed) [ $# -ge 2 ] || die "$1 needs a value"; seed=$2; shift 2;;
    --only) [ $# -ge 2 ] || die "$1 needs a value"; only=$2; shift 2;;
    --hogs) [ $# -ge 2 ] || die "$1 needs a value"; hogs=$2; shift 2;;
    --out) [ $# -ge 2 ] || die "$1 needs a value"; out=$2; shift 2;;
    --keep-passed) keep_passed=1; shift;;
    --timeout-ms) [ $# -ge 2 ] || die "$1 needs a value"; timeout_ms=$2; shift 2;;
    --heartbeat-ms) [ $# -ge 2 ] || die "$1 needs a value"; heartbeat_ms=$2; shift 2;;
    -h|--help) usage; exit 0;;
    *) usage >&2; die "unknown argument '$1'";;
  esac
done
isnum() { case $1 in ''|*[!0-9]*) return 1;; esac; [ ${#1} -le 9 ]; }
isnum "$runs" || die "--runs: expected a whole number"
[ -z "$seed" ] || isnum "$seed" || die "--seed: expected a whole number (at most 9 digits)"
[ -z "$only" ] || { isnum "$only" && [ "$only" -ge 1 ]; } || die "--only: expected a run number >= 1"
isnum "$hogs" || die "--hogs: expected a whole number"
[ -z "$timeout_ms" ] || isnum "$timeout_ms" || die "--timeout-ms: expected a whole number"
[ -z "$heartbeat_ms" ] || isnum "$heartbeat_ms" || die "--heartbeat-ms: expected a whole number"
mpis=()
for pair in "openmpi:$ompi_dir" "mpich:$mpich_dir"; do
  name=${pair%%:*} dir=${pair#*:}
  [ -n "$dir" ] || continue
  dir=$(cd "$dir" 2>/dev/null && pwd) || die "--$name: no directory '${pair#*:}'"
  [ -x "$dir/ftmwrun" ] || die "--$name: no $dir/ftmwrun"
  for p in farm multistart fig4_6 taskfarm; do
    [ -x "$dir/examples/$p" ] || die "--$name: no $dir/examples/$p"
  done
  mpis+=("$name")
  if [ "$name" = openmpi ]; then ompi_dir=$dir; else mpich_dir=$dir; fi
done
[ ${#mpis[@]} -ge 1 ] || { usage >&2; die "give --openmpi or --mpich (or both)"; }
command -v pgrep >/dev/null || die "pgrep is needed (procps)"

[ -n "$seed" ] || seed=$(( ($(date +%s) ^ ($$ << 7)) % 1000000 ))
echo "chaos: seed $seed"

# The job's environment: only what the options say (no FT_* inherited).
for v in $(env | sed -n 's/^\(FT_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
[ -z "$timeout_ms" ] || export FT_TIMEOUT_MS=$timeout_ms
[ -z "$heartbeat_ms" ] || export FT_HEARTBEAT_MS=$heartbeat_ms
eff_timeout=${timeout_ms:-3000}
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
limit=${CHAOS_LIMIT:-120} # seconds a job may take

[ -n "$out" ] || out=${TMPDIR:-/tmp}/ftmw-chaos.$seed
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
rm -rf "$out/refs"; mkdir -p "$out/refs"

# --- cleanup: hogs, and whatever job is running -----------------------------
hog_pids=() cur_sid='' cur_watchdog='' cur_injector='' cur_rd=''
cleanup() {
  trap - EXIT INT TERM
  [ -z "$cur_injector" ] || kill "$cur_injector" 2>/dev/null
  if [ -n "$cur_rd" ] && [ -f "$cur_rd/pausers" ]; then
    while read -r p; do kill "$p" 2>/dev/null; done < "$cur_rd/pausers"
  fi
  if [ -n "$cur_sid" ]; then
    kill -KILL -"$cur_sid" 2>/dev/null
    pkill -KILL -s "$cur_sid" 2>/dev/null
  fi
  [ -z "$cur_watchdog" ] || kill -TERM "$cur_watchdog" 2>/dev/null
  [ ${#hog_pids[@]} -eq 0 ] || kill "${hog_pids[@]}" 2>/dev/null
  wait 2>/dev/null
}
trap cleanup EXIT
trap 'echo "chaos: interrupted" >&2; cleanup; exit 130' INT TERM
# Each hog in a session of its own: with the kernel's autogroup scheduling
# (/proc/sys/kernel/sched_autogroup_enabled, on in Debian), the processes of
# one session share one slot of the CPU, so hogs started together would
# weigh as one process against the job (measured: 3 hogs in one session
# slowed a busy loop by 2%, in three sessions by 32%).
for ((h = 0; h < hogs; h++)); do
  setsid sh -c 'while :; do :; done' &
  hog_pids+=($!)
done
[ "$hogs" -eq 0 ] || echo "chaos: $hogs CPU hogs: ${hog_pids[*]}"

# --- helpers -----------------------------------------------------------------
R=0
rnd() { R=$(($1 + RANDOM % ($2 - $1 + 1))); } # uniform in [$1, $2], in R
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
NOW=0
set_now() { local t=${EPOCHREALTIME/./}; NOW=$((t / 1000)); } # no fork
secs() { printf '%d.%02d' $(($1 / 1000)) $(($1 % 1000 / 10)); } # ms -> s.cc

# run_bounded DIR SECONDS CMD...: runs CMD in its own session (pid = session
# id) with DIR/out, DIR/err; sets job_pid; the watchdog kills the session
# after SECONDS, leaving DIR/timedout. The caller waits for job_pid.
run_bounded() {
  local rd=$1 lim=$2; shift 2
  setsid "$@" > "$rd/out" 2> "$rd/err" < /dev/null &
  job_pid=$!
  local sid=$job_pid
  (
    trap 'kill "$s" 2>/dev/null; exit 0' TERM
    sleep "$lim" & s=$!
    wait "$s"
    echo "$EPOCHREALTIME timed out after ${lim}s" > "$rd/timedout"
    kill -KILL -"$sid" 2>/dev/null
    pkill -KILL -s "$sid" 2>/dev/null
  ) &
  watchdog_pid=$!
}
stop_watchdog() { kill -TERM "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# JSON field of a trace line, for awk programs.
AWK_JGET='function jget(s, k,   i, r) {
  i = index(s, "\"" k "\":"); if (!i) return ""
  r = substr(s, i + length(k) + 3)
  if (substr(r, 1, 1) == "\"") { r = substr(r, 2); return substr(r, 1, index(r, "\"") - 1) }
  match(r, /^[^,}]*/); return substr(r, 1, RLENGTH) }'

# candidates LOG ROLE TRACE: the job's processes of ROLE that have started
# and not finished (from the trace: the latest incarnation of each worker),
# and that the harness has not killed, hung or paused (from the fault log
# LOG), as "role id epoch pid" by increasing id.
candidates() {
  LC_ALL=C grep -h -F -e '"event":"launch"' -e '"event":"finalize"' -e '"event":"fenced"' \
    -e '"event":"orphan_exit"' -e '"event":"diverged"' "$3" |
    awk -v want="$2" "$AWK_JGET"'
    FNR == NR { if ($1 == "F") { busy[$7] = 1; if ($3 != "pause") dead[$7] = 1 }
                if ($1 == "C" && !($3 in dead)) delete busy[$3]
                next }
    { ev = jget($0, "event"); pid = jget($0, "pid") }
    ev == "launch" && jget($0, "role") == want {
      i = jget($0, "id") + 0; e = jget($0, "epoch") + 0
      if (!(i in ep) || e >= ep[i]) { ep[i] = e; who[i] = pid }
      if (i > max) max = i
    }
    ev != "launch" { gone[pid] = 1 }
    END { for (i = 0; i <= max; i++)
            if ((i in ep) && !(who[i] in gone) && !(who[i] in busy)) print want, i, ep[i], who[i] }' "$1" -
}

# The program and ftmwrun's options for it: the examples' FTMW programs,
# or multistart's plain-MPI twin, unmodified, under the MPI layer.
prog_path() { # DIR PROG
  case $2 in multistart_mpi) echo "$1/bench/multistart_mpi";; *) echo "$1/examples/$2";; esac
}
prog_opts() { # PROG
  case $1 in multistart_mpi) echo --transparent;; esac
}

# --- reference results --------------------------------------------------------
# ref_result MPI PROG ARGS KEYW: sets ref_file (fault-free static run's
# stdout, cached per harness invocation) or returns 1.
ref_result() {
  local mpi=$1 prog=$2 args=$3 w=$4 dir
  local key; key=$(echo "$mpi $prog $args w$w" | tr -c 'A-Za-z0-9_.\n-' '_')
  ref_file=$out/refs/$key
  [ -s "$ref_file.ok" ] && return 0
  if [ -f "$ref_file.failed" ]; then return 1; fi
  if [ "$mpi" = openmpi ]; then dir=$ompi_dir; else dir=$mpich_dir; fi
  mkdir -p "$ref_file.d"
  # shellcheck disable=SC2086
  run_bounded "$ref_file.d" "$limit" "$dir/ftmwrun" $(prog_opts "$prog") --static -w "$w" \
    "$(prog_path "$dir" "$prog")" $args
  local p=$job_pid wd=$watchdog_pid rc
  cur_sid=$p cur_watchdog=$wd
  { wait "$p"; rc=$?; } 2>/dev/null
  stop_watchdog "$wd"
  kill -KILL -"$p" 2>/dev/null; pkill -KILL -s "$p" 2>/dev/null
  cur_sid='' cur_watchdog=''
  if [ "$rc" -ne 0 ] || [ -f "$ref_file.d/timedout" ] || ! [ -s "$ref_file.d/out" ]; then
    echo "reference run failed (status $rc): $dir/ftmwrun $(prog_opts "$prog") --static -w $w $prog $args" > "$ref_file.failed"
    return 1
  fi
  cp "$ref_file.d/out" "$ref_file.ok"
  return 0
}

# --- fault injection (runs in the background, one per job) --------------------
# Faults F_OFF[i] (ms after the start) F_KIND[i] (kill|pause|hang) F_CLASS[i]
# (worker|master) F_TGT[i] (worker rank, master id, or "primary") F_DUR[i] (ms).
# Writes $rd/faults: "S wall" at the start, "F wall kind role id epoch pid
# dur_ms" per fault made (wall: just before the signal), "C wall pid" per
# SIGCONT, "T i ..." the timing of fault i, "X i why" per fault skipped.
inject() {
  local rd=$1 nw=$2 nm=$3 log=$1/faults i
  local t0 deadline=$(( $(now_ms) + 60000 ))
  # Ahead of the job and the hogs, when allowed: faults on time, pauses of
  # the length drawn.
  renice -n -10 -p "$BASHPID" > /dev/null 2>&1
  # Started: every master and worker wrote its launch event.
  while :; do
    [ -f "$rd/done" ] && { echo "X all job ended before it started" >> "$log"; return; }
    if [ -f "$rd/trace" ]; then
      local nl
      nl=$(grep '"event":"launch"' "$rd/trace" | grep -c -E '"role":"(master|worker)"')
      [ "$nl" -ge $((nw + nm + 1)) ] && break
    fi
    [ "$(now_ms)" -lt "$deadline" ] || { echo "X all no launch events in 60 s" >> "$log"; return; }
    sleep 0.05
  done
  set_now; t0=$NOW
  echo "S $EPOCHREALTIME" >> "$log"
  local late
  for ((i = 0; i < ${#F_OFF[@]}; i++)); do
    set_now
    while [ "$NOW" -lt $((t0 + F_OFF[i])) ]; do
      [ -f "$rd/done" ] && break
      sleep 0.02
      set_now
    done
    if [ -f "$rd/done" ]; then echo "X $i job ended" >> "$log"; continue; fi
    late=$NOW
    # Candidates: live processes of the class, not already faulted or paused.
    local pick='' role=${F_CLASS[i]} c cpid cid ok=()
    while read -r c; do
      [ -n "$c" ] || continue
      read -r _ _ _ cpid <<< "$c"
      [ -d "/proc/$cpid" ] && ok+=("$c")
    done <<< "$(candidates "$log" "$role" "$rd/trace")"
    if [ ${#ok[@]} -eq 0 ]; then
      echo "X $i no live $role to fault" >> "$log"
      { echo "fault $i: no live $role; candidates:"; candidates "$log" "$role" "$rd/trace"
        echo "trace:"; grep -F -e '"event":"launch"' -e '"event":"finalize"' -e '"event":"fenced"' \
          -e '"event":"orphan_exit"' -e '"event":"diverged"' "$rd/trace"; } >> "$rd/no-target" 2>&1
      continue
    fi
    if [ "${F_TGT[i]}" = primary ]; then
      pick=${ok[0]} # the first live master in priority order
    else
      # The drawn one, or else the next live one (cyclically, by id).
      for c in "${ok[@]}"; do read -r _ cid _ <<< "$c"; [ "$cid" -ge "${F_TGT[i]}" ] && { pick=$c; break; }; done
      [ -n "$pick" ] || pick=${ok[0]}
    fi
    local prole pid_ pep ppid
    read -r prole pid_ pep ppid <<< "$pick"
    set_now; echo "T $i planned +${F_OFF[i]} ms, due +$((late - t0)) ms, resolved in $((NOW - late)) ms" >> "$log"
    local ts=$EPOCHREALTIME sig=KILL
    [ "${F_KIND[i]}" = kill ] || sig=STOP
    if ! kill -$sig "$ppid" 2>/dev/null; then
      echo "X $i $prole $pid_ (pid $ppid) was gone" >> "$log"; continue
    fi
    echo "F $ts ${F_KIND[i]} $prole $pid_ $pep $ppid ${F_DUR[i]}" >> "$log"
    if [ $sig = STOP ]; then
      ( sleep "$(secs "${F_DUR[i]}")"; echo "C $EPOCHREALTIME $ppid" >> "$log"; kill -CONT "$ppid" 2>/dev/null ) &
      echo $! >> "$rd/pausers"
    fi
  done
  wait
}

# --- checks on the trace ---------------------------------------------------------
# check_trace FAULTS TRACE [CUTOFF]: (detections from the wall time CUTOFF
# on, when the watchdog killed the job, are not looked at) prints "FP
# <line>" per failure_detected of a peer the harness neither killed nor
# hung (by then), "ABANDONED <line>" per incarnation whose spawn was
# abandoned, "UNDETECTED <fault>" per hung process that had to be
# declared failed and was not, "DIVERGED <line>" per replica that left the
# job. A hang has to be detected when some master watching the process ran
# its loop for longer than the timeout plus two heartbeats of it: a master
# not itself faulted during the hang, nor gone, whose own stalls (traced
# "stalled": the detector does not count them, docs/limits.md) left that
# much of the hang.
check_trace() {
  awk -v cutoff="${3:-0}" -v timeout="$eff_timeout" -v hb="${heartbeat_ms:-250}" "$AWK_JGET"'
    function overlap(a0, a1, b0, b1) { a0 = a0 > b0 ? a0 : b0; a1 = a1 < b1 ? a1 : b1; return a1 > a0 ? a1 - a0 : 0 }
    FNR == NR { if ($1 == "F") { n++; ft[n] = $2; fk[n] = $3; fr[n] = $4; fi[n] = $5; fe[n] = $6; fp[n] = $7; fd[n] = $8; fl[n] = $0
                                 fend[n] = $3 == "kill" ? 1e12 : $2 + $8 / 1000 }
                if ($1 == "C") for (i = n; i >= 1; i--) if (fp[i] == $3 && fk[i] != "kill") { fend[i] = $2; break }
                next }
    { ev = jget($0, "event"); me = jget($0, "pid"); w = jget($0, "wall") + 0 }
    ev == "launch" && jget($0, "role") == "master" { master[me] = jget($0, "id") }
    ev == "stalled" { ns++; sp[ns] = me; s1[ns] = w; s0[ns] = w - jget($0, "ms") / 1000 }
    ev == "finalize" { fin[me] = w }
    ev == "diverged" { print "DIVERGED " $0 }
    ev == "spawn_abandoned" { abandoned[me " worker " jget($0, "worker")] = 1 }
    ev == "failure_detected" {
      if (cutoff > 0 && w >= cutoff) next # the watchdog killed the job
      # A respawn that Open MPI hung (docs/known-problems.md): abandoned,
      # that incarnation declared failed, its process leaving by itself.
      if (jget($0, "reason") == "could not be spawned" && (me " " jget($0, "peer")) in abandoned) {
        print "ABANDONED " $0; next
      }
      split(jget($0, "peer"), a, " "); pe = jget($0, "peer_epoch")
      # A process hung past the timeout (declared failed, fenced) sees its
      # peers close on it when it resumes: its own view no longer counts.
      for (i = 1; i <= n; i++) if (fk[i] == "hang" && fp[i] == me && w >= ft[i]) next
      ok = 0
      for (i = 1; i <= n; i++)
        if ((fk[i] == "kill" || fk[i] == "hang") && fr[i] == a[1] && fi[i] == a[2] &&
            (a[1] != "worker" || fe[i] == pe) && w >= ft[i]) { ok = 1; seen[i] = 1 }
      if (!ok) {
        note = ""
        if (me in fin) note = note " [the detector was already in ft_finalize]"
        for (i = 1; i <= n; i++)
          if (fk[i] == "pause" && fr[i] == a[1] && fi[i] == a[2] && (a[1] != "worker" || fe[i] == pe) && w >= ft[i])
            note = note sprintf(" [peer paused %.2f s before, for %d ms]", w - ft[i], fd[i])
        print "FP " $0 note
      }
    }
    END {
      for (i = 1; i <= n; i++) {
        if (fk[i] != "hang" || seen[i] || (fp[i] in fin && fin[fp[i]] < ft[i])) continue
        best = 0
        for (m in master) {
          if (m == fp[i] || ((m in fin) && fin[m] < fend[i])) continue
          busy = 0
          for (j = 1; j <= n; j++) if (fp[j] == m && ft[j] < fend[i] && fend[j] > ft[i]) busy = 1
          if (busy) continue
          ran = fend[i] - ft[i]
          for (j = 1; j <= ns; j++) if (sp[j] == m) ran -= overlap(s0[j], s1[j], ft[i], fend[i])
          if (ran > best) best = ran
        }
        if (best * 1000 > timeout + 2 * hb)
          print "UNDETECTED " fl[i] sprintf(" [a master ran %.2f s of it]", best)
      }
    }' "$1" "$2"
}

# --- one run -------------------------------------------------------------------
total=0 passed=0 failed=0 false_pos=0 abandoned=0 spared=0 starved_ms=0

one_run() {
  local k=$1
  RANDOM=$((seed * 1000 + k))
  # Configuration: drawn in this order, from (seed, k) alone.
  local mpi mode prog W M S=0 args est dir
  rnd 0 $((${#mpis[@]} - 1)); mpi=${mpis[R]}
  if [ "$mpi" = openmpi ]; then rnd 0 1; mode=$([ $R = 0 ] && echo spawn || echo static); else mode=static; fi
  rnd 0 4; prog=$(case $R in 0) echo farm;; 1) echo multistart;; 2) echo fig4_6;; 3) echo taskfarm;; 4) echo multistart_mpi;; esac)
  # multistart_mpi needs the build's bench/ (the other programs are drawn
  # alike then).
  if [ "$prog" = multistart_mpi ] && ! [ -x "$(prog_path "$([ "$mpi" = openmpi ] && echo "$ompi_dir" || echo "$mpich_dir")" multistart_mpi)" ]; then
    prog=multistart
  fi
  rnd 2 5; W=$R
  rnd 0 2; M=$R
  if [ "$mode" = static ]; then rnd 0 2; S=$R; fi
  local refw=$W
  case $prog in
    farm)
      local tasks=(400 800 320) work=(20000 10000 25000)
      rnd 0 2; local t=${tasks[R]} u=${work[R]}
      rnd 1 3
      args="--every-master --tasks $t --work-us $u --seed $R"
      # Pipelined (ft_isend both ways) in two runs of three.
      local ks=(1 4 8); rnd 0 2; args="$args --pipeline ${ks[R]}"
      # ...taking the results by posted receives in one pipelined run of two.
      if [ "${ks[R]}" -gt 1 ]; then rnd 0 1; [ "$R" = 1 ] && args="$args --posted"; fi
      est=$((t * u / W / 1000))
      refw=2;; # the checksum does not depend on W
    taskfarm) # the farm layer: it restores and hands out again by itself
      local tasks=(400 800 320) work=(20000 10000 25000)
      rnd 0 2; local t=${tasks[R]} u=${work[R]}
      args="--every-master --quiet --tasks $t --work-us $u --attempts 5"
      # Every task compared in one run of three (2 workers at least).
      rnd 0 2; [ "$R" = 0 ] && args="$args --duplicate 1"
      est=$((t * u / W / 1000))
      case $args in *duplicate*) est=$((est * 2));; esac
      refw=2;; # the checksum does not depend on W
    multistart|multistart_mpi)
      local fns=(rastrigin rosenbrock ackley) ks=(6 8 10)
      rnd 0 2; local f=${fns[R]}
      rnd 0 2; local n=$((W * ks[R]))
      rnd 1 3
      args="-f $f -n $n -D 300 -e 1000 -s $R"
      est=$((n * 370 / W));;
    fig4_6)
      local uu=$((W * (1 + M))) mult=(7 10 13)
      rnd 0 2
      local it=$((7000 * 100 * mult[R] / (70 + 27 * uu) / 10))
      it=$(( (it + 250) / 500 * 500 )); [ $it -ge 1000 ] || it=1000; [ $it -le 8000 ] || it=8000
      args="$it"
      est=$((it * uu * 135 / 1000));;
  esac
  # Faults: at most M masters and (static mode) as many workers as the
  # program survives die or hang past the timeout.
  local wmax=99 mdeaths=0 wdeaths=0 nf i
  if [ "$mode" = static ]; then
    # fig4_6 cannot go on without a worker, nor the MPI layer (it stops
    # when no spare is left): the spares.
    case $prog in fig4_6|multistart_mpi) wmax=$S;; *) wmax=$((W - 1 + S));; esac
  fi
  F_OFF=() F_KIND=() F_CLASS=() F_TGT=() F_DUR=()
  local short_max=$((eff_timeout / 2)); [ $short_max -le 1500 ] || short_max=1500
  [ $short_max -ge 200 ] || short_max=200
  local span=$((est * 85 / 100)); [ $span -ge 300 ] || span=300
  rnd 0 3; nf=$R
  local kinds=() classes=() tgts=() offs=() durs=()
  for ((i = 0; i < nf; i++)); do
    local kind class tgt off dur=0
    rnd 0 99
    if [ $R -lt 35 ]; then kind=kill class=worker
    elif [ $R -lt 50 ]; then kind=kill class=master
    elif [ $R -lt 75 ]; then kind=pause; rnd 0 1; class=$([ $R = 0 ] && echo worker || echo master)
    else kind=hang; rnd 0 1; class=$([ $R = 0 ] && echo worker || echo master); fi
    if [ $kind != pause ] && [ "$class" = master ]; then
      if [ $mdeaths -lt "$M" ]; then mdeaths=$((mdeaths + 1)); else class=worker; fi
    fi
    if [ $kind != pause ] && [ "$class" = worker ]; then
      if [ $wdeaths -lt $wmax ]; then wdeaths=$((wdeaths + 1)); else kind=pause; fi
    fi
    if [ "$class" = worker ]; then rnd 1 "$W"; tgt=$R
    else rnd 0 $((M + 1)); tgt=$R; [ "$tgt" -le "$M" ] || tgt=primary; fi
    rnd 150 "$span"; off=$R
    if [ $kind = pause ]; then rnd 200 $short_max; dur=$R
    elif [ $kind = hang ]; then rnd 1000 3000; dur=$((eff_timeout + R)); fi
    offs+=("$off") kinds+=("$kind") classes+=("$class") tgts+=("$tgt") durs+=("$dur")
  done
  # In time order.
  local order
  order=$(for ((i = 0; i < nf; i++)); do echo "${offs[i]} $i"; done | sort -n | awk '{print $2}')
  local fdesc=
  for i in $order; do
    F_OFF+=("${offs[i]}") F_KIND+=("${kinds[i]}") F_CLASS+=("${classes[i]}") F_TGT+=("${tgts[i]}") F_DUR+=("${durs[i]}")
    local d=
    [ "${kinds[i]}" = kill ] || d=":$(secs "${durs[i]}")s"
    local who=${classes[i]}${tgts[i]}
    [ "${tgts[i]}" != primary ] || who=primary
    fdesc="$fdesc,${kinds[i]}:$who$d@$(secs "${offs[i]}")s"
  done
  fdesc=${fdesc#,}
  [ -n "$fdesc" ] || fdesc=none
  if [ "$mpi" = openmpi ]; then dir=$ompi_dir; else dir=$mpich_dir; fi
  local -a cmd=("$dir/ftmwrun")
  [ -z "$(prog_opts "$prog")" ] || cmd+=("$(prog_opts "$prog")")
  [ "$mode" = static ] && [ "$mpi" = openmpi ] && cmd+=(--static)
  cmd+=(-w "$W" -m "$M")
  [ "$mode" = static ] && cmd+=(-s "$S")
  # shellcheck disable=SC2206
  cmd+=("$(prog_path "$dir" "$prog")" $args)
  local desc="$mpi $mode $prog W=$W M=$M S=$S args=[$args] faults=$fdesc"

  local rd=$out/s$seed-run$k
  rm -rf "$rd"; mkdir -p "$rd"
  {
    echo "seed $seed run $k (replay: $0 --seed $seed --only $k ...)"
    echo "config: $desc"
    echo "estimated work: ${est} ms; effective FT_TIMEOUT_MS: $eff_timeout"
    echo "command: FT_TRACE=$rd/trace ${cmd[*]}"
    echo "environment:"; env | grep -E '^(FT_|OMPI_ALLOW)' | sed 's/^/  /'
    echo "fault schedule (ms after every process launched):"
    for ((i = 0; i < ${#F_OFF[@]}; i++)); do
      echo "  +${F_OFF[i]} ${F_KIND[i]} ${F_CLASS[i]} ${F_TGT[i]} dur ${F_DUR[i]}"
    done
  } > "$rd/config"

  local reasons=() fps=0
  local refkey_w=$refw
  if ! ref_result "$mpi" "$prog" "$args" "$refkey_w"; then
    reasons+=("$(cat "$ref_file.failed")")
  fi

  # The job, its watchdog, its fault injector.
  local start end rc
  start=$(now_ms)
  run_bounded "$rd" "$limit" env "FT_TRACE=$rd/trace" "${cmd[@]}"
  local jp=$job_pid wd=$watchdog_pid
  cur_sid=$jp cur_watchdog=$wd cur_rd=$rd
  inject "$rd" "$W" "$M" &
  cur_injector=$!
  { wait "$jp"; rc=$?; } 2>/dev/null # no "Killed" notice from bash
  end=$(now_ms)
  touch "$rd/done"
  wait "$cur_injector"; cur_injector=
  stop_watchdog "$wd"; cur_watchdog=
  # 3. nothing of the job's session left after ~5 s
  local left='' tries
  for ((tries = 0; tries < 50; tries++)); do
    left=$(pgrep -s "$jp" | head -5)
    [ -n "$left" ] || break
    sleep 0.1
  done
  # ...nor any process of the trace (in case one left the session)
  local tp stray=
  if [ -f "$rd/trace" ]; then
    # shellcheck disable=SC2013
    for tp in $(sed -n 's/.*"pid":\([0-9]*\),"event".*/\1/p' "$rd/trace" | sort -u); do
      if [ -d "/proc/$tp" ] && tr '\0' ' ' < "/proc/$tp/cmdline" 2>/dev/null | grep -q "$(prog_path "" "$prog")"; then
        stray="$stray $tp"
      fi
    done
  fi
  if [ -n "$left" ] || [ -n "$stray" ]; then
    local line pl
    # shellcheck disable=SC2086
    pl=$(printf '%s\n' $left $stray | sort -u | paste -sd, -)
    line=$(ps -o pid=,stat=,etime=,args= -p "$pl" 2>/dev/null | head -1 | sed 's/  */ /g')
    reasons+=("left behind: ${line:-$left $stray}")
    ps -o pid,ppid,stat,etime,args -p "$pl" > "$rd/left-behind" 2>&1
    # shellcheck disable=SC2086
    [ -z "$stray" ] || kill -KILL $stray 2>/dev/null
  fi
  kill -KILL -"$jp" 2>/dev/null; pkill -KILL -s "$jp" 2>/dev/null
  cur_sid='' cur_rd=''
  {
    echo "fault log (S: start wall, T: timing, F: wall kind role id epoch pid dur_ms, C: SIGCONT wall pid, X: skipped):"
    sed 's/^/  /' "$rd/faults" 2>/dev/null
    echo "exit status: $rc; duration $((end - start)) ms"
  } >> "$rd/config"

  # 1. exit status and time
  [ -f "$rd/timedout" ] && reasons+=("timed out after ${limit}s")
  [ "$rc" -eq 0 ] || [ -f "$rd/timedout" ] || reasons+=("exit status $rc")

  # 2. the result
  # A master killed or hung before it printed (before its ft_finalize,
  # traced `finalize`: the programs print first) prints nothing; one the
  # fault reached later (the harness, loaded, may resolve a target late)
  # has printed like any other.
  local dead_m=0 f_wall f_pid fin
  while read -r f_wall f_pid; do
    fin=$(grep "\"pid\":$f_pid,\"event\":\"finalize\"" "$rd/trace" 2>/dev/null |
          sed -n 's/^{"wall":\([0-9.]*\),.*/\1/p' | head -1)
    if [ -z "$fin" ] || awk -v a="$fin" -v b="$f_wall" 'BEGIN { exit !(a >= b) }'; then
      dead_m=$((dead_m + 1))
    fi
  done < <(awk '$1 == "F" && $3 != "pause" && $4 == "master" { print $2, $7 }' "$rd/faults" 2>/dev/null)
  local live_m=$((M + 1 - dead_m))
  if [ -s "${ref_file}.ok" ]; then
    case $prog in
      farm)
        local ck n_ok n_ck bad
        ck=$(sed -n 's/^checksum //p' "$ref_file.ok")
        n_ok=$(grep -c -x -E "tasks $t/$t failures [0-9]+ restores [0-9]+ duplicates 0" "$rd/out")
        n_ck=$(grep -c -x "checksum $ck" "$rd/out")
        bad=$(grep -E '^(tasks|checksum) ' "$rd/out" | grep -v -x -E "tasks $t/$t failures [0-9]+ restores [0-9]+ duplicates 0|checksum $ck" | head -1)
        if [ -n "$bad" ]; then reasons+=("wrong result line '$bad' (want checksum $ck, $t/$t tasks, 0 duplicates)")
        elif [ "$n_ok" -ne "$live_m" ] || [ "$n_ck" -ne "$live_m" ]; then
          reasons+=("$n_ok result lines and $n_ck checksum lines, want $live_m (one per surviving master)")
        fi;;
      taskfarm)
        local ck n_ok n_ck bad
        ck=$(sed -n 's/^checksum //p' "$ref_file.ok")
        n_ok=$(grep -c -x "tasks $t ok $t not_ok 0" "$rd/out")
        n_ck=$(grep -c -x "checksum $ck" "$rd/out")
        bad=$(grep -E '^(tasks|checksum) ' "$rd/out" | grep -v -x -E "tasks $t ok $t not_ok 0|checksum $ck" | head -1)
        if [ -n "$bad" ]; then reasons+=("wrong result line '$bad' (want checksum $ck, $t of $t tasks ok)")
        elif [ "$n_ok" -ne "$live_m" ] || [ "$n_ck" -ne "$live_m" ]; then
          reasons+=("$n_ok result lines and $n_ck checksum lines, want $live_m (one per surviving master)")
        fi;;
      multistart|multistart_mpi)
        local want got
        want=$(grep -E '^(function|best|local searches)' "$ref_file.ok")
        got=$(grep -E '^(function|best|local searches)' "$rd/out")
        if [ "$want" != "$got" ]; then
          if [ "$(grep -c -E '^best f' <<< "$got")" -gt 1 ]; then
            reasons+=("result printed $(grep -c -E '^best f' <<< "$got") times (two primaries?)")
          else
            reasons+=("result '$(grep '^best f' <<< "$got" | head -1)', want '$(grep '^best f' <<< "$want")' (diff in out vs $ref_file.ok)")
          fi
        fi;;
      fig4_6)
        # Every master prints "sum" (fig4_6.c does not guard its printf with
        # ft_is_primary): one line per surviving master, all the reference.
        local want nsum bad
        want=$(grep '^sum ' "$ref_file.ok")
        nsum=$(grep -c -x "$want" "$rd/out")
        bad=$(grep '^sum ' "$rd/out" | grep -v -x "$want" | head -1)
        if [ -n "$bad" ]; then reasons+=("wrong result '$bad', want '$want'")
        elif [ "$nsum" -ne "$live_m" ]; then reasons+=("'$want' printed $nsum times, want $live_m (one per surviving master)"); fi;;
    esac
  fi

  # 4. protocol errors
  if [ -f "$rd/trace" ]; then
    local pe
    pe=$("$no_protocol_errors" "$rd/trace" 2>&1) || reasons+=("protocol error: $(echo "$pe" | head -1)")
  else
    reasons+=("no trace written")
  fi

  # 5. false positives, hung processes never declared failed, divergence
  if [ -f "$rd/trace" ]; then
    local cutoff=0
    [ ! -f "$rd/timedout" ] || read -r cutoff _ < "$rd/timedout"
    check_trace "$rd/faults" "$rd/trace" "$cutoff" > "$rd/trace-check" 2>/dev/null
    fps=$(grep -c '^FP ' "$rd/trace-check")
    false_pos=$((false_pos + fps))
    abandoned=$((abandoned + $(grep -c '^ABANDONED ' "$rd/trace-check")))
    # Load the run met: silent peers spared as starved, and the longest
    # stall of a process that waited for a CPU (not one stopped).
    spared=$((spared + $(grep -c '"event":"peer_starved"' "$rd/trace")))
    local ms
    ms=$(sed -n 's/.*"event":"stalled","ms":\([0-9]*\),"cpu_ms":[0-9]*,"runq_ms":\([0-9]*\).*/\1 \2/p' "$rd/trace" |
         awk '2 * $2 >= $1 && $1 > m { m = $1 } END { print m + 0 }')
    [ "$ms" -le "$starved_ms" ] || starved_ms=$ms
    [ "$fps" -eq 0 ] || reasons+=("false positive ($fps): $(grep -m1 '^FP ' "$rd/trace-check" | cut -c4-)")
    grep -q '^UNDETECTED ' "$rd/trace-check" &&
      reasons+=("hung past the timeout but never declared failed: $(grep -m1 '^UNDETECTED ' "$rd/trace-check" | cut -c12-)")
    grep -q '^DIVERGED ' "$rd/trace-check" &&
      reasons+=("a replica diverged: $(grep -m1 '^DIVERGED ' "$rd/trace-check" | cut -c10-)")
  fi

  # The faults that really happened, for the line.
  local applied skipped
  applied=$(grep -c '^F ' "$rd/faults" 2>/dev/null)
  skipped=$(sed -n 's/^X [0-9a-z]* //p' "$rd/faults" 2>/dev/null | sed 's/ (pid.*//' | sort | uniq -c |
            awk '{ n += $1; $1 = $1 "x"; s = s (s ? "; " : "") $0 } END { print n + 0 (n ? " (" s ")" : "") }')
  local dur; dur=$(secs $((end - start)))s
  total=$((total + 1))
  if [ ${#reasons[@]} -eq 0 ]; then
    passed=$((passed + 1))
    echo "run $k seed $seed: PASS $desc applied=${applied:-0} skipped=$skipped $dur"
    [ "$keep_passed" = 1 ] || rm -rf "$rd"
  else
    failed=$((failed + 1))
    echo "run $k seed $seed: FAIL $desc applied=${applied:-0} skipped=$skipped $dur"
    printf '%s\n' "${reasons[@]}" > "$rd/reasons"
    local r
    for r in "${reasons[@]}"; do echo "    reason: $r"; done
    echo "    kept: $rd"
  fi
}

if [ -n "$only" ]; then
  one_run "$only"
else
  for ((k = 1; k <= runs; k++)); do one_run "$k"; done
fi
echo "chaos: spawns abandoned (Open MPI's spawn hang, made again): $abandoned"
echo "chaos: starved peers spared: $spared; longest starvation traced: $starved_ms ms"
echo "chaos: false positives: $false_pos"
echo "chaos: $total runs, $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$false_pos" -eq 0 ]
