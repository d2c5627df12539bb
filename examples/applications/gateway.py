#!/usr/bin/env python3
"""A home gateway with four jobs, run as two or more replicas under lanleader.

The jobs: a 06:30 family digest, an 08:00 check that a parent took their
medicine, a 02:00 NAS backup and a Sunday 07:00 report. What each does here
is append one line to STATE/actions.log (job, key, node, term, pid), which
is what the tests read; a real application sends the mail, runs the backup.

The three ways of docs/applications.md, one subcommand each:

  gateway.py serve      way (a): an HTTP endpoint per job; lanleader's http:
                        jobs call it. Each Idempotency-Key is done once.
  gateway.py scheduler  way (b): the application's own APScheduler, run by
                        lanleader as a leader-only service (services:).
  gateway.py ask        way (c): the application's own APScheduler on every
                        replica; each job asks lanleader's /leader first.

--every N replaces the jobs' times with "every N seconds" (demos, tests).
Standard library only, plus APScheduler 3 for (b) and (c) (Debian:
python3-apscheduler; elsewhere: pip install 'apscheduler<4').
"""

import argparse
import fcntl
import http.server
import os
import signal
import sys
import time

JOBS = {
    # name: (cron fields for APScheduler, what it does)
    "family-digest": ({"hour": 6, "minute": 30}, "sent the family digest"),
    "medicine-check": ({"hour": 8, "minute": 0}, "checked the medicine box"),
    "nas-backup": ({"hour": 2, "minute": 0}, "backed up the NAS"),
    "weekly-report": ({"day_of_week": "sun", "hour": 7, "minute": 0}, "sent the weekly report"),
}

NODE = os.environ.get("LANLEADER_NODE") or os.uname().nodename


def record(state, line):
    """Appends one line to STATE/actions.log, atomically among processes."""
    with open(os.path.join(state, "actions.log"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(line + "\n")
        f.flush()


def do_job(state, name, key, term):
    what = JOBS[name][1]
    record(state, f"did {name} key={key} node={NODE} term={term} pid={os.getpid()} at={time.time():.3f}")
    print(f"{name}: {what} (key {key}, term {term})", flush=True)


# --- way (a): endpoints that lanleader's http: jobs call -------------------


class DoneKeys:
    """The Idempotency-Keys already done, kept in a file shared by the
    replicas of one host (a database row in a real application), so a key
    that reaches two replicas, or one twice, is done once."""

    def __init__(self, state):
        self.path = os.path.join(state, "done-keys")

    def claim(self, key):
        """Returns True if key was not done yet, and marks it done."""
        with open(self.path, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            if key in (line.rstrip("\n") for line in f):
                return False
            f.write(key + "\n")
            return True


def serve(args):
    done = DoneKeys(args.state)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            name = self.path.removeprefix("/jobs/")
            key = self.headers.get("Idempotency-Key", "")
            term = self.headers.get("Lanleader-Term", "")
            record(args.state, f"request {name} key={key} node={NODE} term={term}")
            if name not in JOBS or not key:
                self.answer(404 if name not in JOBS else 400, "unknown job or no Idempotency-Key\n")
                return
            if not done.claim(key):
                self.answer(200, f"{key} was already done\n")
                return
            do_job(args.state, name, key, term)
            self.answer(200, f"{key} done\n")

        def do_GET(self):
            self.answer(200, "ok\n") if self.path == "/healthz" else self.answer(404, "not found\n")

        def answer(self, code, body):
            b = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer((args.bind, args.port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"gateway: serving the jobs on {args.bind}:{args.port}", flush=True)
    srv.serve_forever()


# --- ways (b) and (c): the application's own scheduler --------------------


def scheduler_with_jobs(args, wrap):
    from apscheduler.schedulers.blocking import BlockingScheduler

    sched = BlockingScheduler(timezone=args.tz)
    for name, (cron, _) in JOBS.items():
        if args.every:
            trigger, fields = "interval", {"seconds": args.every}
        else:
            trigger, fields = "cron", cron
        # misfire_grace_time and coalesce: see docs/applications.md.
        sched.add_job(wrap(name), trigger, id=name, misfire_grace_time=300, coalesce=True, max_instances=1, **fields)
    return sched


def scheduler(args):
    """Way (b): lanleader starts this on the leader only, and stops it
    (SIGTERM) when the node stops leading. Its start and stop are recorded
    so that a test can check that two never overlap: it counts as alive from
    its first instruction until its jobs in progress have ended."""
    term = os.environ.get("LANLEADER_TERM", "")
    record(args.state, f"scheduler start node={NODE} term={term} pid={os.getpid()} at={time.time():.3f}")

    def wrap(name):
        def run():
            do_job(args.state, name, f"{name}@{time.time():.0f}", term)
            time.sleep(args.job_seconds)  # the work itself
        return run

    sched = scheduler_with_jobs(args, wrap)
    stopping = []

    def stop(*_):
        if not stopping:
            stopping.append(True)
            sched.shutdown(wait=True)  # lets the jobs in progress end
            time.sleep(args.stop_seconds)  # and whatever else shutting down takes

    signal.signal(signal.SIGTERM, stop)
    sched.start()
    record(args.state, f"scheduler stop node={NODE} term={term} pid={os.getpid()} at={time.time():.3f}")


# way (c), as docs/applications.md shows it -- begin
import json
import urllib.request


def lanleader_may_act(url="http://127.0.0.1:7484/leader", timeout=2):
    """Asks the local lanleader whether this node leads and may act now.
    Any failure to get an answer counts as no: better a missed run than a
    second one."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200 and json.load(resp)["may_act"] is True
    except Exception:  # 503 (HTTPError), refused, timeout, bad body
        return False
# way (c) -- end


def ask(args):
    """Way (c): every replica runs its scheduler; each job runs only where
    lanleader says this node leads and may act at that moment."""

    def wrap(name):
        def run():
            if not lanleader_may_act(args.lanleader + "/leader"):
                return
            do_job(args.state, name, f"{name}@{time.time():.0f}", "")
        return run

    sched = scheduler_with_jobs(args, wrap)
    signal.signal(signal.SIGTERM, lambda *_: sched.shutdown(wait=False))
    sched.start()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("way", choices=["serve", "scheduler", "ask"])
    p.add_argument("--state", default=os.environ.get("GATEWAY_STATE", "/var/lib/gateway"), help="where actions.log and done-keys go")
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--tz", default=os.environ.get("TZ", "Europe/Paris"))
    p.add_argument("--every", type=int, default=int(os.environ.get("GATEWAY_EVERY", "0")), help="every N seconds instead of the jobs' times")
    p.add_argument("--lanleader", default="http://127.0.0.1:7484")
    p.add_argument("--job-seconds", type=float, default=0, help="how long each job works (demos, tests)")
    p.add_argument("--stop-seconds", type=float, default=0, help="how long the scheduler takes to shut down (demos, tests)")
    args = p.parse_args()
    os.makedirs(args.state, exist_ok=True)
    {"serve": serve, "scheduler": scheduler, "ask": ask}[args.way](args)


if __name__ == "__main__":
    main()
