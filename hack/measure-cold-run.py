#!/usr/bin/env python3
"""Measure `make run` as a newcomer meets it: cold, then warm.

    hack/measure-cold-run.py [--out DIR] [--keep] [--cold-only]

Cold: a fresh clone of this checkout's HEAD, with GOCACHE, GOMODCACHE and the tool cache
(CACHE) each pointed at an empty directory, runs `make run` until the quickstart Bucket is
Bound and Ready, then stops it with Ctrl-C. Warm: `make run` again in the same clone on the
caches the cold run filled, its `.terraplane/` removed so the bucket is made anew.

Every output line is logged with its offset in seconds (DIR/cold.log, DIR/warm.log), with
the load average every 30 s: measure on a quiet machine (a load above the core count
spoils the figures). At the end it prints a table of the wall time between milestones
(each tool built or cached, the control plane up, the quickstart Ready) for
docs/quickstart.md. The temporary caches (several GB) are removed unless --keep.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

BOUND = "is Bound and Ready"
# MILESTONES turn a line of make run's output into the name of the step it ends.
MILESTONES = [
    (re.compile(r"^==> ([\w.-]+): (built in|cached)"), lambda m: m.group(1)),
    (re.compile(r"^==> control plane up"), lambda m: "control plane up"),
    (re.compile(r"^==> .*" + BOUND), lambda m: "quickstart Bound and Ready"),
]
# LABELS name the steps in the table where the tool's name says too little.
LABELS = {
    "kube-apiserver": "kube-apiserver, reusing the packages bin/terraplane compiled",
    "terraplane": "Go modules downloaded and bin/terraplane built",
}
STOP_GRACE = 60  # seconds make run gets to stop after Ctrl-C before it is killed


def load():
    """Return the 1-minute load average and the core count as text."""
    return "load average %.2f on %d cores" % (os.getloadavg()[0], os.cpu_count() or 0)


def milestone(line):
    """Return the step a line of output ends, or None."""
    for pattern, name in MILESTONES:
        m = pattern.search(line)
        if m:
            return name(m)
    return None


def sample_load(log, stop):
    """Log the load average every 30 s until stop is set."""
    while not stop.wait(30):
        log.write("# %s\n" % load())


def run_make(clone, env, log_path):
    """Run make run in clone until Bound; return [(step, offset)] and the total, or fail."""
    steps, bound = [], threading.Event()
    with open(log_path, "w", buffering=1) as log:
        log.write("# %s, HEAD %s\n" % (load(), git(clone, "rev-parse", "HEAD")))
        stop = threading.Event()
        threading.Thread(target=sample_load, args=(log, stop), daemon=True).start()
        start = time.monotonic()
        p = subprocess.Popen(["make", "run"], cwd=clone, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True,
                             # a shell's background job ignores Ctrl-C; make run must not
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

        def read():
            for line in p.stdout:
                t = time.monotonic() - start
                log.write("%7.1f %s" % (t, line))
                name = milestone(line)
                if name and not bound.is_set():
                    steps.append((name, t))
                if BOUND in line and not bound.is_set():
                    log.write("# BOUND at %.1f s; %s\n" % (t, load()))
                    bound.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            while not bound.wait(1) and p.poll() is None:
                pass
            if bound.is_set():
                os.killpg(p.pid, signal.SIGINT)  # Ctrl-C, as a person stops it
            p.wait(timeout=STOP_GRACE)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            pass
        finally:
            stop.set()
            try:
                os.killpg(p.pid, signal.SIGKILL)  # whatever outlived make
            except ProcessLookupError:
                pass
            p.wait()
            reader.join(timeout=5)
        log.write("# make exited %d at %.1f s\n" % (p.returncode, time.monotonic() - start))
    if not bound.is_set():
        sys.exit("make run stopped (exit %d) before the quickstart was Ready; see %s" % (p.returncode, log_path))
    return steps, steps[-1][1]


def git(cwd, *args):
    """Run git in cwd and return its output."""
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def remove(path):
    """Remove a directory tree, the module cache's read-only files included."""
    subprocess.run(["chmod", "-R", "u+w", path], check=False)
    shutil.rmtree(path, ignore_errors=True)


def durations(steps):
    """Turn [(step, offset)] into {step: wall seconds since the previous milestone}."""
    out, prev = {}, 0.0
    for name, t in steps:
        out[name] = out.get(name, 0.0) + t - prev
        prev = t
    return out


def fmt(seconds):
    """Print seconds as 4m05s, or 12.3 s under a minute."""
    if seconds is None:
        return "–"
    if seconds < 60:
        return "%.1f s" % seconds
    return "%dm%02ds" % (seconds // 60, seconds % 60)


def table(runs):
    """Return a Markdown table with a column per run (name, steps, total)."""
    order = []
    for _, steps, _ in runs:
        order += [n for n, _ in steps if n not in order]
    cols = [(name, durations(steps), total) for name, steps, total in runs]
    rows = ["| step | " + " | ".join(n for n, _, _ in cols) + " |",
            "|---|" + "---:|" * len(cols)]
    for step in order:
        rows.append("| %s | %s |" % (LABELS.get(step, step), " | ".join(fmt(d.get(step)) for _, d, _ in cols)))
    rows.append("| **total** | %s |" % " | ".join("**%s**" % fmt(t) for _, _, t in cols))
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="directory for the logs (default: a new one under /tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the clone and the caches")
    ap.add_argument("--cold-only", action="store_true", help="skip the warm run")
    args = ap.parse_args()
    repo = git(os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--show-toplevel")
    out = args.out or tempfile.mkdtemp(prefix="terraplane-measure.")
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="terraplane-cold.")
    clone = os.path.join(work, "terraplane")
    git(work, "clone", "--quiet", repo, clone)
    git(clone, "checkout", "--quiet", "--detach", git(repo, "rev-parse", "HEAD"))
    env = dict(os.environ)
    for var in ("GOCACHE", "GOMODCACHE", "CACHE"):
        env[var] = os.path.join(work, var.lower())
        os.makedirs(env[var])
    env.pop("TERRAPLANE_CACHE", None)  # the Makefile sets it from CACHE
    print("clone %s, logs in %s; %s" % (clone, out, load()), flush=True)
    runs = []
    try:
        for name in ("cold",) if args.cold_only else ("cold", "warm"):
            shutil.rmtree(os.path.join(clone, ".terraplane"), ignore_errors=True)
            print("%s make run ..." % name, flush=True)
            steps, total = run_make(clone, env, os.path.join(out, name + ".log"))
            print("%s: Ready after %s" % (name, fmt(total)), flush=True)
            runs.append((name, steps, total))
    finally:
        if not args.keep:
            remove(work)
    print(table(runs))


if __name__ == "__main__":
    main()
