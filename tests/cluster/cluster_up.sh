# Sourced by the cluster job scripts, with $here their directory, $N the
# number of hosts and $UP_OPTS (optional) more options of "ftmw-cluster up"
# (--slurm): skips the test (77) where network namespaces cannot be made,
# makes the work directory ($tmp, integration/workdir.sh) and a cluster of
# its own (h0..h(N-1)), which goes at exit. Gives procs_on and, with a
# Slurm, $slurm_logs (its daemons' logs).
cluster=$here/../../tools/ftmw-cluster
"$cluster" check || exit 77
. "$here/../integration/workdir.sh"
export FTMW_CLUSTER=ftc$$ FTMW_SHARED_DIR=$tmp
slurm_logs=
# (a Slurm's logs go into $tmp first: a failed test's directory keeps them)
# shellcheck disable=SC2016
workdir_exit='[ -z "$slurm_logs" ] || cp -r "$slurm_logs" "$tmp/slurm-log" 2>/dev/null; "$cluster" down'
# shellcheck disable=SC2086
"$cluster" up "$N" ${UP_OPTS:-} || { echo "FAIL: cannot make the cluster"; exit 1; }
case " ${UP_OPTS:-} " in *" --slurm "*) slurm_logs=$(dirname "$("$cluster" slurm-conf)")/log ;; esac
# procs_on HOST...: the processes on those hosts, "pid command line" each.
procs_on() { for h; do "$cluster" pids "$h"; done | xargs -r ps -o pid=,args= -p 2>/dev/null; }
