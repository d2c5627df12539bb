#!/usr/bin/env python3
"""What a nemesis run does: its jobs and its fault schedule.

Used by scripts/netns/nemesis.sh (the driver) and nemesis_check.py (the
checker), so that the jobs the nodes run and the jobs the checker judges
are one table.

Subcommands:
  plan --seed N --duration-ms D --nodes N --interval-ms I --misses M
                           the fault schedule, one step a line: a pure
                           function of its arguments (random.Random(seed)),
                           printed before the run starts
  config --gen G --job-script PATH --out FILE
                           the nodes' config file, generation G (a reload
                           writes G+1: every job but `every` changes)

A step line is "step K at~S kind key=value ...": K counts from 1, S is the
second the step would start at if every fault took its nominal time (the
driver runs the steps one after another and stops at the duration).
"""

import argparse
import random
import sys

# name: (schedule, period_s, mode, seconds, extra YAML lines). Every
# schedule here has the instants that are multiples of period_s since the
# epoch: cron "every N seconds" with N dividing 60, and `@every`
# (configuration.md).
JOBS = {
    "tick": ("* * * * * *", 1, "run", 0, []),
    "fin": ("* * * * * *", 1, "run", 0.3, ["on_leader_loss: finish"]),
    "retry": ("* * * * * *", 1, "fail-first", 0, ["retries: 2", "retry_delay: 100ms"]),
    "rerun": ("*/2 * * * * *", 2, "run", 0.8, ["rerun_interrupted: true"]),
    "slow": ("* * * * * *", 1, "run", 1.5, ["on_leader_loss: finish", "overlap: skip"]),
    "every": ("@every 3s", 3, "run", 0, []),
}
# Jobs whose definition a reload changes (a changed job restarts its loop;
# `every` stays as it is, a job no reload touches).
RELOADED = ("tick", "fin", "retry", "rerun", "slow")
# Timings a rolling change moves between: (interval ms, misses).
TIMINGS = [(200, 3), (100, 4), (300, 3), (200, 5)]


def cmd_config(a):
    out = ["# nemesis config, generation %d (written by scripts/lib/nemesis_plan.py)" % a.gen, "jobs:"]
    for name, (sched, _, mode, secs, extra) in JOBS.items():
        out.append("  - name: %s" % name)
        out.append("    schedule: '%s'" % sched)
        out.append("    command: [/bin/bash, %s, %s, '%s']" % (a.job_script, mode, secs))
        gen = a.gen if name in RELOADED else 0
        out.append("    env: {NEMESIS_GEN: '%d'}" % gen)
        out.append("    kill_grace: 2s")
        for e in extra:
            out.append("    " + e)
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")


def _pause(r, fail_ms):
    kind = r.choices(["short", "long", "across"], [4, 4, 2])[0]
    st = {"scope": r.choice(["node", "node", "daemon"])}
    if kind == "short":
        st["ms"] = r.randint(max(50, fail_ms // 6), fail_ms * 9 // 10)
    elif kind == "long":
        st["ms"] = r.randint(fail_ms * 6 // 5, 6000)
    else:
        st["lead_ms"] = r.randint(800, 3000)
        st["scope"] = "node"
    st["class"] = kind
    # Right after an instant fires (just past a whole second), or anywhere.
    st["align"] = r.choice(["instant", "instant", "any"])
    st["offset_ms"] = r.randint(5, 120)
    return "pause", st


def _kill(r, fail_ms):
    return "kill", {"target": r.choice(["leader", "leader", "follower"]),
                    "state": r.choice(["keep", "keep", "wipe"]),
                    "down_ms": r.randint(200, 5000),
                    "align": r.choice(["instant", "any"]), "offset_ms": r.randint(5, 120)}


def _partition(r, fail_ms):
    return "partition", {"leader_side": r.choice(["minority", "majority"]), "ms": r.randint(1000, 8000)}


def _oneway(r, fail_ms):
    return "oneway", {"dir": r.choice(["from-leader", "to-leader", "leader-to-one"]), "ms": r.randint(1000, 6000)}


def _loss(r, fail_ms):
    return "loss", {"pct": r.choice([20, 40, 60, 80]), "ms": r.randint(1000, 6000)}


def _reload(r, fail_ms):
    return "reload", {"offset_ms": r.randint(-40, 40)}


FAULTS = [(_pause, 6), (_kill, 4), (_partition, 3), (_oneway, 2), (_loss, 2), (_reload, 3)]


def plan(seed, duration_ms, nodes, interval_ms, misses):
    """The steps of a run: (k, nominal start ms, kind, params). Nominal
    lengths decide only how many steps are drawn: enough for twice the
    duration, as faults often take less than their nominal time (a 600 s
    run used up 600 s of steps in 445 s); the driver stops at the
    duration."""
    r = random.Random(seed)
    timing = (interval_ms, misses)
    steps, t, k = [], 0, 0
    while t < 2 * duration_ms and k < 10000:
        k += 1
        fail_ms = timing[0] * timing[1]
        quiet = r.randint(1000, 4000)
        t += quiet
        if r.random() < 0.06:
            new = r.choice([x for x in TIMINGS if x != timing])
            st = {"interval_ms": new[0], "misses": new[1], "order": r.choice(["followers-first", "leader-first"]),
                  "cut_leader_mid_ms": r.choice([0, r.randint(1000, 4000)])}
            kind, length = "timing", nodes * 2500 + st["cut_leader_mid_ms"]
            timing = new
        else:
            fn = r.choices([f for f, _ in FAULTS], [w for _, w in FAULTS])[0]
            kind, st = fn(r, fail_ms)
            length = st.get("ms", 0) + st.get("down_ms", 0) + st.get("lead_ms", 0) + 2 * fail_ms + 1500
        st["quiet_ms"] = quiet
        steps.append((k, t, kind, st))
        t += length
    return steps


def cmd_plan(a):
    for k, t, kind, st in plan(a.seed, a.duration_ms, a.nodes, a.interval_ms, a.misses):
        print("step %d at~%ds %s %s" % (k, t // 1000, kind, " ".join("%s=%s" % kv for kv in st.items())))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("plan")
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--duration-ms", type=int, required=True)
    s.add_argument("--nodes", type=int, required=True)
    s.add_argument("--interval-ms", type=int, required=True)
    s.add_argument("--misses", type=int, required=True)
    s.set_defaults(f=cmd_plan)
    s = sub.add_parser("config")
    s.add_argument("--gen", type=int, required=True)
    s.add_argument("--job-script", required=True)
    s.add_argument("--out", required=True)
    s.set_defaults(f=cmd_config)
    a = p.parse_args()
    sys.exit(a.f(a) or 0)


if __name__ == "__main__":
    main()
