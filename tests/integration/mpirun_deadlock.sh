#!/bin/sh
# ftmwrun ends an mpirun that outlives every process of its job (Open
# MPI's PMIx deadlock, docs/known-problems.md): a stand-in mpirun.openmpi
# writes the primary's status (7), runs one process for 5 s, then waits
# for ever with none. ftmwrun must say so, kill it about 10 s later (60 s
# if a loaded machine kept it from seeing the process), and exit 7.
# Usage: mpirun_deadlock.sh FTMWRUN
set -u
ftmwrun=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/mpirun.openmpi" <<'FAKE'
#!/bin/sh
echo 7 > "$FTMW_STATUS_FILE"
sleep 5
exec sleep 1000
FAKE
chmod +x "$tmp/mpirun.openmpi"
start=$(date +%s)
PATH=$tmp:$PATH "$ftmwrun" --mpi openmpi -w 1 /bin/true > "$tmp/out" 2>&1
rc=$? took=$(($(date +%s) - start))
cat "$tmp/out"
[ "$rc" -eq 7 ] || { echo "FAIL: exit status $rc, want 7"; exit 1; }
grep -q "has not exited in [16]0 s" "$tmp/out" || { echo "FAIL: no message about mpirun"; exit 1; }
[ "$took" -ge 12 ] || { echo "FAIL: ended after $took s, before the 10 s limit"; exit 1; }
echo "PASS (ended after $took s)"
