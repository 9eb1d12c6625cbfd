#!/bin/bash
# A real Slurm on the virtual cluster (ftmw-cluster up N --slurm): from the
# login node h0, sinfo lists the compute nodes idle; srun, salloc and
# sbatch run on them, each task on the host Slurm says; scancel of a
# running job leaves none of its processes on any node; and "down" leaves
# no daemon and no file behind. Exits 77 (skipped) where network
# namespaces cannot be made or Slurm is not installed.
# Usage: slurm_up.sh
set -u
command -v slurmctld > /dev/null && command -v munged > /dev/null ||
  { echo "slurm_up: Slurm or munge not installed (Debian: slurm-wlm munge)"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
N=4 UP_OPTS=--slurm . "$here/cluster_up.sh"
on0() { timeout 60 "$cluster" exec h0 "$@"; }
sleeping() { procs_on h1 h2 h3 | grep -cE '^ *[0-9]+ (/usr/bin/)?sleep 300$'; }
fail() { echo "FAIL: $*"; tail -n 20 "$slurm_logs"/*.log; exit 1; }

nodes=$(on0 sinfo -h -N -o '%N %T' | sort | tr '\n' ' ')
echo "sinfo: $nodes"
[ "$nodes" = "h1 idle h2 idle h3 idle " ] || fail "sinfo shows '$nodes'"

got=$(on0 srun -N 3 hostname | sort | tr '\n' ' ')
[ "$got" = "h1 h2 h3 " ] || fail "srun -N 3 hostname printed '$got'"

# salloc: the allocation's variables, and a step on each of its nodes.
on0 salloc -N 2 -n 4 sh -c 'echo "$SLURM_JOB_NODELIST $SLURM_TASKS_PER_NODE"; srun hostname' \
  > "$tmp/salloc" 2> "$tmp/salloc.err" || fail "salloc: $(cat "$tmp/salloc" "$tmp/salloc.err")"
head -1 "$tmp/salloc" | grep -qx 'h\[[1-3]-[1-3]\] 2(x2)' || fail "salloc's variables: $(head -1 "$tmp/salloc")"
[ "$(grep -c '^h[1-3]$' "$tmp/salloc")" -eq 4 ] || fail "salloc's srun: $(cat "$tmp/salloc")"

# sbatch with --no-kill (what an FTMW job asks for), then a running job
# cancelled: its processes go from every node.
cat > "$tmp/job.sh" << JOB
#!/bin/sh
#SBATCH -N 2 --no-kill -o $tmp/batch.out
srun sh -c 'echo \$(hostname) \$SLURM_PROCID'
JOB
on0 sbatch --wait "$tmp/job.sh" > /dev/null || fail "sbatch --wait: $(cat "$tmp/batch.out" 2>&1)"
[ "$(grep -c '^h[1-3] [01]$' "$tmp/batch.out")" -eq 2 ] || fail "the batch job printed: $(cat "$tmp/batch.out")"
id=$(on0 sbatch --parsable -N 3 -o /dev/null --wrap "srun sleep 300") || fail "sbatch --wrap"
for _ in $(seq 100); do
  [ "$(sleeping)" -eq 3 ] && break
  sleep 0.1
done
[ "$(sleeping)" -eq 3 ] ||
  fail "job $id's steps are not running on 3 nodes"
on0 scancel "$id" || fail "scancel $id"
for _ in $(seq 100); do
  left=$(procs_on h1 h2 h3 | grep -E 'sleep 300|slurmstepd')
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] || fail "left after scancel: $left"

conf=$("$cluster" slurm-conf)
daemons=$(for h in h0 h1 h2 h3; do "$cluster" pids $h; done | tr '\n' ' ')
"$cluster" down
# (dead ones not reaped yet, zombies, do not count)
# shellcheck disable=SC2086
alive=$(ps -o pid=,stat=,args= -p $daemons 2>/dev/null | awk '$2 !~ /^Z/')
[ -z "$alive" ] || { echo "FAIL: left after down: $alive"; exit 1; }
[ ! -e "$conf" ] || { echo "FAIL: $conf left after down"; exit 1; }
left=$(ip netns list | grep "^$FTMW_CLUSTER-")
[ -z "$left" ] || { echo "FAIL: namespaces left after down: $left"; exit 1; }
echo "slurm on the virtual cluster: sinfo, srun, salloc, sbatch, scancel, down"
