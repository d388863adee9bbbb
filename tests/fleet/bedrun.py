"""bedrun.py: stopping a fleet run on the Slurm bed for real (fleet_test.py).

salloc runs in a session of its own; stop(p, env) TERMs its process group
(salloc gives the allocation back, the launcher writes what it has),
cancels the job on the bed so that no step stays behind in a node or
guest, then KILLs whatever is left of the session (the launcher puts its
sruns in process groups of their own, not sessions)."""
import os
import signal
import subprocess
import sys
import time

JOB = "strata-fleet-test"
running = []    # the sallocs under way


def session_pids(sid):
    """The live processes of session sid (/proc/PID/stat: state, session;
    a zombie is dead, waiting for its new parent to reap it)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                out.append(int(d))
    return out


def settle(what, seconds=20):
    """what() until it is empty (gone) or seconds pass; its last value."""
    deadline = time.monotonic() + seconds
    while True:
        left = what()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.3)


def stop(p, env):
    """Stop the salloc p (its session) and its job; see above."""
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    subprocess.run(["scancel", "--name", JOB], env=env, capture_output=True, timeout=30)
    for pid in session_pids(p.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p.wait()


def stop_on_signals(env):
    """ctest's timeout (SIGTERM) or a ^C: the runs under way stopped, not
    orphaned."""
    def on_term(signum, _frame):
        for p in running:
            stop(p, env)
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
