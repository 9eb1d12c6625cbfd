#!/usr/bin/python3
"""The FTMW task farm on Dask distributed, for comparison with FTMW.

Measures, on a local Dask cluster (loopback only):
  - throughput: N tasks, each sleeping US microseconds (US=0: no sleep) and
    returning its id, farmed out to W single-threaded worker processes with
    the natural Dask farm, client.map(task, range(N), pure=False) collected
    with as_completed; tasks per second from the first submit to the last
    result;
  - kill-to-result (kill mode, -m ID -f PIDFILE): the task ID, on its first
    run, writes its worker's pid to PIDFILE; bench/kill_when (run beside
    this script) SIGKILLs that worker in the middle of the task and prints
    "killed_mono T"; this script prints "mark_result_mono T" when ID's
    result reaches the client. Kill-to-result = mark_result_mono -
    killed_mono, whatever Dask does in between (the scheduler sees the dead
    worker, ID goes back to the queue, another worker runs it again; the
    nanny restarts the dead worker meanwhile).

Usage:
  dask_farm.py -w W -n N -u US [-m ID -f PIDFILE] [-T TIMEOUT_S] [-v]
e.g.
  bench/dask_farm.py -w 4 -n 5000 -u 0
  rm -f /tmp/mark.pid
  build-bench/openmpi/bench/kill_when /tmp/mark.pid 100 & \\
    bench/dask_farm.py -w 4 -n 40 -u 200000 -m 8 -f /tmp/mark.pid; wait

Output, one "key value" a line, on stdout:
  tasks N, time S, tasks_per_s R, duplicates D, missing M,
  and in kill mode mark_result_mono T (CLOCK_MONOTONIC seconds).
With -v, what Dask did (worker removed, restarted, warm-up) goes to stderr.
Exit status: 0 if every id came back exactly once with the right value, 1
if any is missing, duplicated or erred (or the run timed out), 2 on bad
arguments.

Needs Debian's python3-distributed (Dask 2022.12.1 on Debian 12): the
shebang is /usr/bin/python3 on purpose, since another python3 first on
PATH (pyenv, a venv) may not see Debian's packages.
"""

import argparse
import logging
import os
import signal
import sys
import time

try:
    import dask
    import distributed
    from distributed import Client, LocalCluster, as_completed
except ImportError as e:  # a clear message rather than a traceback
    sys.exit(f"dask_farm.py: {e}; install Debian's python3-distributed "
             f"(apt-get install -y python3-distributed) and run it with "
             f"/usr/bin/python3 (this is {sys.executable})")


def mono():
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def mark_pid(pidfile):
    """Write this worker process's pid to pidfile, whole or not at all:
    kill_when polls the file, so it must never read half a number. Only
    the first run of the marked task writes it: when Dask runs the task
    again after the kill, the file is already there and nothing is
    written, so the re-run is not killed too."""
    if os.path.exists(pidfile):
        return
    tmp = pidfile + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{os.getpid()}\n")
    os.replace(tmp, pidfile)


def task(i, us=0, mark=-1, pidfile=None):
    """One task of the farm: sleeps us microseconds and returns its id.
    Defined at module level in the script, so cloudpickle ships it by
    value; the workers need not import this file."""
    if i == mark and pidfile:
        mark_pid(pidfile)
    if us > 0:
        time.sleep(us / 1e6)
    return i


class Timeout(Exception):
    pass


class Stopped(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def on_stop(signum, frame):
    # SIGTERM (e.g. from timeout(1)) raises here, so the finally below
    # still closes the cluster and no worker process is left behind.
    raise Stopped(signal.Signals(signum).name)


def descendants():
    """Pids of this process's descendants (the nannies' worker processes,
    multiprocessing's helpers), from /proc: stdlib only."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # the command name, in parentheses, may hold spaces: split after it
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [os.getpid()]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def is_tracker(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"multiprocessing.resource_tracker" in f.read()
    except OSError:
        return False


class Recorder(logging.Handler):
    """-v: keeps what the scheduler and the nannies log about workers coming
    and going, with the CLOCK_MONOTONIC time (the nannies and the scheduler
    of a LocalCluster run in this process; only the workers are apart)."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.seen = []

    def emit(self, record):
        msg = record.getMessage()
        if any(s in msg for s in ("Remove worker", "Register worker",
                                  "was killed", "Restarting worker")):
            self.seen.append((mono(), record.name, msg))


def parse_args():
    p = argparse.ArgumentParser(
        prog="dask_farm.py",
        description="The FTMW task farm on a local Dask distributed cluster: "
                    "throughput, and kill-to-result with bench/kill_when.",
        epilog="e.g. dask_farm.py -w 4 -n 5000 -u 0")
    p.add_argument("-w", type=int, required=True, metavar="W",
                   help="worker processes (1 thread each)")
    p.add_argument("-n", type=int, required=True, metavar="N",
                   help="number of tasks")
    p.add_argument("-u", type=int, required=True, metavar="US",
                   help="microseconds each task sleeps (0: no sleep)")
    p.add_argument("-m", type=int, metavar="ID",
                   help="kill mode: the task whose first run writes its "
                        "worker's pid to PIDFILE")
    p.add_argument("-f", metavar="PIDFILE",
                   help="kill mode: where task ID writes its worker's pid")
    p.add_argument("-T", type=float, default=300, metavar="TIMEOUT_S",
                   help="give up after this many seconds, cluster start "
                        "included (default 300)")
    p.add_argument("-v", action="store_true",
                   help="say on stderr what Dask did (warm-up, workers "
                        "removed and restarted)")
    a = p.parse_args()
    if a.w < 1:
        p.error(f"-w W: at least 1 worker, not {a.w}")
    if a.n < 1:
        p.error(f"-n N: at least 1 task, not {a.n}")
    if a.u < 0:
        p.error(f"-u US: microseconds >= 0, not {a.u}")
    if not a.T > 0:
        p.error(f"-T TIMEOUT_S: seconds > 0, not {a.T}")
    if (a.m is None) != (a.f is None):
        p.error("kill mode needs both -m ID and -f PIDFILE")
    if a.m is not None:
        if not 0 <= a.m < a.n:
            p.error(f"-m ID: a task id in 0..{a.n - 1}, not {a.m}")
        # A stale file would have kill_when kill whatever process has that
        # pid now, and would keep task ID from writing its own: refuse.
        if os.path.exists(a.f):
            p.error(f"-f PIDFILE: {a.f} exists already; remove it before "
                    f"starting this script and kill_when")
    return a


def run(a):
    # Every Dask default kept except what the brief fixes. Two that matter:
    #  - distributed.scheduler.allowed-failures = 3: a task is marked erred
    #    (KilledWorker) only once more than 3 workers died while running
    #    it; the one kill here makes it "suspicious" once, so it is re-run.
    #  - distributed.worker.multiprocessing-method = spawn: each worker is a
    #    fresh interpreter (so this file's main code is guarded by
    #    __name__ == "__main__"), and the nanny restarts one that dies.
    v = a.v
    if v:
        rec = Recorder()
        for name in ("distributed.scheduler", "distributed.nanny"):
            lg = logging.getLogger(name)
            lg.addHandler(rec)
            lg.setLevel(logging.INFO)
    t_start = mono()
    cluster = client = None
    try:
        cluster = LocalCluster(n_workers=a.w, threads_per_worker=1,
                               processes=True, host="127.0.0.1",
                               dashboard_address=None,
                               silence_logs=logging.ERROR)
        client = Client(cluster)
        client.wait_for_workers(a.w)
        workers = sorted(client.scheduler_info()["workers"])
        if len(workers) != a.w:
            raise RuntimeError(f"{len(workers)} workers up, not {a.w}")
        # Warm-up, outside the clock: one tiny task per worker, pinned to
        # it, so that every worker has received and unpickled the task
        # function and opened its connections before the timed farm starts
        # (the first task on a fresh worker costs a few ms more). Its ids
        # are negative: no clash with the farm's, and never the marked one.
        warm = [client.submit(task, -1 - k, workers=[w],
                              allow_other_workers=False, pure=False)
                for k, w in enumerate(workers)]
        client.gather(warm)
        del warm
        if v:
            print(f"# dask {dask.__version__}, distributed "
                  f"{distributed.__version__}", file=sys.stderr)
            print(f"# {a.w} workers up and warmed up in "
                  f"{mono() - t_start:.2f} s: {workers}", file=sys.stderr)

        kw = {"us": a.u}
        if a.m is not None:
            kw.update(mark=a.m, pidfile=os.path.abspath(a.f))
        seen = [0] * a.n
        duplicates = errors = wrong = 0
        mark_mono = None
        t0 = mono()
        # The natural Dask farm: one future per task, pure=False so that
        # tasks with the same arguments are never merged into one key.
        futs = client.map(task, range(a.n), pure=False, **kw)
        ids = {f.key: i for i, f in enumerate(futs)}
        for f in as_completed(futs):
            i = ids[f.key]
            try:
                r = f.result()
            except Exception as e:  # erred (e.g. KilledWorker): counted
                errors += 1
                print(f"dask_farm.py: task {i} erred: {e!r}", file=sys.stderr)
                continue
            if i == a.m:
                mark_mono = mono()
            if r != i:
                wrong += 1
                print(f"dask_farm.py: task {i} returned {r!r}", file=sys.stderr)
            if isinstance(r, int) and 0 <= r < a.n:
                seen[r] += 1
        t1 = mono()
        duplicates = sum(c - 1 for c in seen if c > 1)
        missing = sum(1 for c in seen if c == 0)
        elapsed = t1 - t0
        print(f"tasks {a.n}")
        print(f"time {elapsed:.6f}")
        print(f"tasks_per_s {a.n / elapsed:.1f}")
        print(f"duplicates {duplicates}")
        print(f"missing {missing}")
        if mark_mono is not None:
            print(f"mark_result_mono {mark_mono:.6f}")
        sys.stdout.flush()
        ok = not (duplicates or missing or errors or wrong)
        if a.m is not None and mark_mono is None:
            ok = False

        if v and a.m is not None:
            # Give the nanny a few seconds to bring the killed worker back,
            # to report it (after the clock: it costs the farm nothing).
            deadline = mono() + 15
            while (len(client.scheduler_info()["workers"]) < a.w
                   and mono() < deadline):
                time.sleep(0.05)
            # The marked task's transitions on the scheduler (which runs in
            # this process), wall-clock stamps turned into CLOCK_MONOTONIC.
            off = time.time() - mono()
            key = futs[a.m].key
            for tr in cluster.scheduler.story(key):
                print(f"# {tr[-1] - off:.6f} task {a.m}: {tr[1]} -> {tr[2]} "
                      f"({tr[-2]})", file=sys.stderr)
            now = client.scheduler_info()["workers"]
            print(f"# workers now: {len(now)} (new: "
                  f"{sorted(set(now) - set(workers))})", file=sys.stderr)
        if v:
            for t, name, msg in rec.seen:
                print(f"# {t:.6f} {name}: {msg}", file=sys.stderr)
        return 0 if ok else 1
    finally:
        # No alarm from here on: it would cut the clean-up short (which is
        # bounded by itself: close timeouts, then SIGKILL).
        signal.setitimer(signal.ITIMER_REAL, 0)
        # Close in order (the client, then the cluster: scheduler, nannies,
        # worker processes), then make sure nothing of ours is left.
        for c in (client, cluster):
            if c is not None:
                try:
                    c.close(timeout=20) if c is cluster else c.close()
                except Exception as e:
                    print(f"dask_farm.py: closing {type(c).__name__}: {e!r}",
                          file=sys.stderr)
        # multiprocessing's resource tracker stays until this process
        # exits (it then reads EOF on its pipe and quits): not a leftover.
        left = [p for p in descendants() if not is_tracker(p)]
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if left:
            print(f"dask_farm.py: killed leftover processes {left}",
                  file=sys.stderr)


def main():
    a = parse_args()
    # One bound for the whole run, cluster start included: SIGALRM raises
    # in the main thread, wherever it waits, and run()'s finally cleans up.
    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, on_stop)
    signal.setitimer(signal.ITIMER_REAL, a.T)
    try:
        rc = run(a)
    except Timeout:
        print(f"dask_farm.py: timed out after {a.T:g} s", file=sys.stderr)
        rc = 1
    except (Stopped, KeyboardInterrupt) as e:
        print(f"dask_farm.py: stopped ({e or 'SIGINT'})", file=sys.stderr)
        rc = 1
    except Exception as e:
        print(f"dask_farm.py: {e!r}", file=sys.stderr)
        rc = 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    sys.exit(rc)


# The guard matters: Dask starts its worker processes with multiprocessing's
# "spawn", which imports this file again in each of them (as __mp_main__).
if __name__ == "__main__":
    main()
