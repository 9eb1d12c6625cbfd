# Sourced by the cluster job scripts, with $here their directory, $N the
# number of hosts and $UP_OPTS (optional) more options of "ftmw-cluster up"
# (--slurm): skips the test (77) where network namespaces cannot be made,
# makes the work directory ($tmp, integration/workdir.sh) and a cluster of
# its own (h0..h(N-1)), which goes at exit.
cluster=$here/../../tools/ftmw-cluster
"$cluster" check || exit 77
. "$here/../integration/workdir.sh"
export FTMW_CLUSTER=ftc$$ FTMW_SHARED_DIR=$tmp
# (a Slurm's logs go into $tmp first: a failed test's directory keeps them)
# shellcheck disable=SC2016
workdir_exit='cp -r "/run/ftmw-cluster/$FTMW_CLUSTER/log" "$tmp/slurm-log" 2>/dev/null; "$cluster" down'
# shellcheck disable=SC2086
"$cluster" up "$N" ${UP_OPTS:-} || { echo "FAIL: cannot make the cluster"; exit 1; }
