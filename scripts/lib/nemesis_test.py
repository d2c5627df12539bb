#!/usr/bin/env python3
"""Tests of the nemesis's plan and checker (no namespaces, no daemon):
each finding is made once in a fabricated run directory and must be
reported, and must fail a quorum run.

    python3 scripts/lib/nemesis_test.py
"""

import argparse
import base64
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nemesis_check  # noqa: E402
import nemesis_plan  # noqa: E402

T0 = 1_800_000_000  # a whole second, unix
JOB = "tick"


def iso(sec):
    return "%s" % __import__("datetime").datetime.fromtimestamp(sec, __import__("datetime").timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")


def ledger(entries):
    """jobs.Ledger's encoding of {job: instant}, as a state file holds it."""
    def uv(x):
        out = b""
        while True:
            b, x = x & 0x7F, x >> 7
            out += bytes([b | (0x80 if x else 0)])
            if not x:
                return out
    b = bytes([1, 0]) + uv(len(entries))
    for job, sec in entries.items():
        b += nemesis_check.fnv64a(job).to_bytes(8, "big") + uv(sec << 1) + bytes([2]) + uv(5)
    return b


RUNS = []  # directories to remove after each test


class Run:
    """A fabricated run directory: n1 leads term 5 from T0 and runs tick
    every second to T0+20 (end at T0+23), unless a test changes it."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="nemesis-test.")
        RUNS.append(self.dir)
        self.faults = ["%d 0 start n1" % (T0 * 1000 - 500), "%d 0 start n2" % (T0 * 1000 - 500)]
        self.logs = {"n1": [(T0 * 1000, {"msg": "became leader", "term": 5})], "n2": []}
        self.jobs = {"n1": [], "n2": []}
        self.saved = {}
        for s in range(T0 + 1, T0 + 21):
            self.run("n1", s, 5, "r%d" % s, s * 1000 + 20)

    def run(self, node, sec, term, rid, start_ms, end_ms=None):
        self.jobs[node].append((start_ms, "start", node, JOB, iso(sec).replace(".000000", ""), term, rid))
        self.jobs[node].append((end_ms or start_ms + 5, "end", node, JOB, iso(sec).replace(".000000", ""), term, rid))
        self.saved[node] = max(self.saved.get(node, 0), sec)

    def drop(self, sec):
        for n in self.jobs:
            self.jobs[n] = [j for j in self.jobs[n] if j[4] != iso(sec).replace(".000000", "")]

    def log(self, node, ms, msg, **kv):
        self.logs[node].append((ms, dict(msg=msg, **kv)))

    def check(self, quorum=True):
        for n, lines in self.jobs.items():
            with open(os.path.join(self.dir, "nm-jobs-%s.log" % n), "w") as f:
                for ms, ev, node, job, sa, term, rid in sorted(lines):
                    f.write("%.6f %s %s %s %s %d %s\n" % (ms / 1000, ev, node, job, sa, term, rid))
        for n, evs in self.logs.items():
            with open(os.path.join(self.dir, n + ".log"), "w") as f:
                for ms, o in sorted(evs, key=lambda e: e[0]):
                    f.write(json.dumps(dict(time=iso(ms / 1000), **o)) + "\n")
        for n, sec in self.saved.items():
            os.makedirs(os.path.join(self.dir, "state." + n), exist_ok=True)
            with open(os.path.join(self.dir, "state." + n, "state"), "w") as f:
                f.write("lanleader-state 2 0 0\n" + json.dumps({"ledger": base64.b64encode(ledger({JOB: sec})).decode()}))
        end = (T0 + 23) * 1000
        with open(os.path.join(self.dir, "nemesis-faults.log"), "w") as f:
            f.write("\n".join(self.faults + ["%d end end" % end, "%d end stopped" % (end + 10)]) + "\n")
        a = argparse.Namespace(work=self.dir, nodes=2, end_ms=end, quorum=quorum, rerun="rerun")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = nemesis_check.check(a)
        return rc, out.getvalue()


class CheckerTest(unittest.TestCase):
    def setUp(self):
        self.jobs, self.finish = nemesis_check.JOBS, nemesis_check.FINISH
        nemesis_check.JOBS, nemesis_check.FINISH = {JOB: nemesis_plan.JOBS[JOB]}, set()

    def tearDown(self):
        nemesis_check.JOBS, nemesis_check.FINISH = self.jobs, self.finish
        while RUNS:
            shutil.rmtree(RUNS.pop(), ignore_errors=True)

    def test_clean_run_passes(self):
        rc, out = Run().check()
        self.assertEqual(rc, 0, out)
        self.assertIn("missing 0, twice 0", out)

    def test_missing_instant_fails_quorum_and_is_counted_without(self):
        r = Run()
        r.drop(T0 + 10)
        rc, out = r.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("MISSING (neither run nor logged skipped): 1", out)
        rc, out = r.check(quorum=False)
        self.assertEqual(rc, 0, out)
        self.assertIn("missing 1", out)

    def test_logged_skip_accounts_for_an_instant(self):
        r = Run()
        r.drop(T0 + 10)
        r.log("n1", (T0 + 10) * 1000 + 1, "jobs: not starting: previous run still going (overlap: skip)",
              job=JOB, scheduled_at=iso(T0 + 10))
        rc, out = r.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("skipped: overlap 1", out)

    def test_a_takeover_names_the_gap_a_later_start_overtook(self):
        r = Run()
        r.drop(T0 + 9)
        r.drop(T0 + 10)
        rc, out = r.check()
        self.assertIn("MISSING (neither run nor logged skipped): 2", out)
        r.log("n1", (T0 + 11) * 1000 + 900, nemesis_check.MISSED_RANGE, job=JOB, scheduled_at=iso(T0 + 10), count=2)
        rc, out = r.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("skipped: overtaken 2", out)

    def test_a_run_concluded_interrupted_for_good_accounts_for_its_instant(self):
        # Its leader recorded it and died before its commit: no start line;
        # the takeover says it does not run it again. A manual run's word
        # names a request time, not an instant.
        r = Run()
        r.drop(T0 + 10)
        r.log("n2", (T0 + 12) * 1000 + 1, "jobs: previous leader's manual run was interrupted; "
              "not running it again (manual runs never are)", job=JOB, scheduled_at=iso(T0 + 10), manual=True)
        rc, out = r.check()
        self.assertEqual(rc, 1, out)
        r.log("n2", (T0 + 12) * 1000 + 2, "jobs: previous leader's run was interrupted; not running it again: "
              "a later instant already started", job=JOB, scheduled_at=iso(T0 + 10), manual=False)
        rc, out = r.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("skipped: interrupted 1", out)
        # Concluded once its holder can no longer be running it, too late
        # for a rerun (misfire_grace): as final.
        r = Run()
        r.drop(T0 + 10)
        r.log("n2", (T0 + 14) * 1000, "jobs: previous leader's run can no longer be going (stopped with its "
              "leadership, kill grace over); run interrupted, too late to run it again (misfire_grace)",
              job=JOB, scheduled_at=iso(T0 + 10))
        rc, out = r.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("skipped: interrupted 1", out)

    def test_a_gap_coalesced_into_a_rerun_is_accounted_for_by_its_line(self):
        # The takeover reruns 10 (interrupted) and skips the gap, 11 and
        # 12, naming the latest and the count: whatever the line's wording
        # of the skip, "skipped" or "not run".
        r = Run()
        for s in (T0 + 11, T0 + 12):
            r.drop(s)
        rc, out = r.check()
        self.assertIn("MISSING (neither run nor logged skipped): 2", out)
        for why in ("skipped: the interrupted run's rerun stands for them",
                    "not run: coalesced into the interrupted run's rerun"):
            r2 = Run()
            for s in (T0 + 11, T0 + 12):
                r2.drop(s)
            r2.log("n2", (T0 + 13) * 1000, "jobs: instants missed during failover; " + why,
                   job=JOB, scheduled_at=iso(T0 + 12), count=2)
            rc, out = r2.check()
            self.assertEqual(rc, 0, out)
            self.assertIn("skipped: misfire 1", out)
            self.assertIn("coalesced into a failover's misfire 1", out)

    def test_a_refusal_beside_another_reason_is_that_reason(self):
        r = Run()
        r.drop(T0 + 10)
        r.log("n2", (T0 + 10) * 1000 + 1, "jobs: not starting: this node cannot currently act as leader",
              job=JOB, scheduled_at=iso(T0 + 10))
        rc, out = r.check()
        self.assertIn("refused by the guard (cannot act as leader) and run by nobody: 1", out)
        r.log("n1", (T0 + 10) * 1000 + 2, "jobs: not starting: previous run still going (overlap: skip)",
              job=JOB, scheduled_at=iso(T0 + 10))
        rc, out = r.check()
        self.assertNotIn("refused by the guard", out)
        self.assertIn("skipped: overlap 1", out)

    def test_a_refusal_decided_later_accounts_for_an_instant(self):
        # The guard refused 10 (kept due), then 11 came due first; a
        # takeover's gap instants overtaken by a run in its window.
        r = Run()
        for s in (T0 + 10, T0 + 14, T0 + 15):
            r.drop(s)
        r.log("n1", (T0 + 10) * 1000 + 1,
              "jobs: not starting yet: this node cannot currently act as leader; trying again until it can",
              job=JOB, scheduled_at=iso(T0 + 10))
        rc, out = r.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("MISSING (neither run nor logged skipped): 3", out)
        r.log("n1", (T0 + 11) * 1000 + 1,
              "jobs: not started: this node could not act as leader before a later instant came due",
              job=JOB, scheduled_at=iso(T0 + 10))
        r.log("n1", (T0 + 16) * 1000 + 1,
              "jobs: instants missed during failover; overtaken by a later instant already started",
              job=JOB, scheduled_at=iso(T0 + 15), count=2)
        rc, out = r.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("skipped: refused until a later instant 1", out)
        self.assertIn("skipped: overtaken 2", out)  # 14 and 15, by the count

    def test_a_refused_start_handed_over_is_no_skip(self):
        # The guard refused a recorded run and the leadership ended: the
        # next leader decides the instant; until it says so, it is owed.
        r = Run()
        r.drop(T0 + 10)
        r.log("n1", (T0 + 10) * 1000 + 1,
              "jobs: not started: this node cannot currently act as leader; the next leadership decides this instant",
              job=JOB, scheduled_at=iso(T0 + 10))
        rc, out = r.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("MISSING (neither run nor logged skipped): 1", out)

    def test_an_attempt_that_ran_nothing_is_not_a_start(self):
        # lanleader logged "run started", the shim refused the exec (its
        # licence ran out): no start line, and the instant is owed.
        r = Run()
        r.drop(T0 + 10)
        r.log("n1", (T0 + 10) * 1000 + 1, "jobs: run started", job=JOB, run_id="x", attempt=1,
              scheduled_at=iso(T0 + 10), term=5)
        r.log("n1", (T0 + 10) * 1000 + 500, "jobs: attempt ended", job=JOB, run_id="x", attempt=1,
              result="licence ran out before the start")
        rc, out = r.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("MISSING (neither run nor logged skipped): 1", out)

    def test_instant_started_twice(self):
        r = Run()
        r.log("n2", (T0 + 12) * 1000, "became leader", term=6)
        r.run("n2", T0 + 12, 6, "other", (T0 + 12) * 1000 + 900)
        rc, out = r.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("STARTED TWICE: 1", out)
        self.assertIn("twice by cause: none 1", out)
        r.faults += ["%d 4 partition {1}|{2}" % ((T0 + 11) * 1000 + 500), "%d 4 heal" % ((T0 + 13) * 1000)]
        rc, out = r.check(quorum=False)
        self.assertEqual(rc, 0, out)
        self.assertIn("twice by cause: partition 1", out)
        r.log("n2", (T0 + 12) * 1000 + 890, nemesis_check.RERUN, job=JOB, scheduled_at=iso(T0 + 12))
        rc, out = r.check()
        self.assertNotIn("STARTED TWICE", out)
        self.assertIn("reruns by design (rerun_interrupted): 1", out)

    def test_old_term_acting_after_a_newer_one(self):
        r = Run()
        r.drop(T0 + 15)
        r.log("n2", (T0 + 14) * 1000 + 500, "became leader", term=6)
        r.run("n2", T0 + 15, 6, "new", (T0 + 15) * 1000 + 10)
        for k in range(16, 21):
            r.log("n1", (T0 + k) * 1000 + 1, "jobs: run started", job=JOB, run_id="r%d" % (T0 + k), attempt=1,
                  scheduled_at=iso(T0 + k), term=5)
        # A pause long before those runs were decided excuses nothing.
        r.faults += ["%d 1 stop n1 scope=node" % ((T0 + 3) * 1000), "%d 1 cont n1 scope=node" % ((T0 + 4) * 1000)]
        rc, out = r.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("OLD TERM ACTED AFTER A NEWER ONE: 5", out)  # n1's 16..20 under term 5

    def late_start(self, scope, pause_ms, end_after_ms=5):
        """n2 leads term 6 from T0+19 and runs 19; n1, term 5, decided 20
        at T0+20 and was paused (scope) for pause_ms right after; its run's
        start line comes as it resumes, its end end_after_ms later."""
        r = Run()
        r.drop(T0 + 20)
        r.log("n2", (T0 + 19) * 1000 + 500, "became leader", term=6)
        r.drop(T0 + 19)
        r.run("n2", T0 + 19, 6, "new", (T0 + 19) * 1000 + 600, (T0 + 22) * 1000 + 500)
        r.log("n1", (T0 + 20) * 1000 + 1, "jobs: run started", job=JOB, run_id="late", attempt=1,
              scheduled_at=iso(T0 + 20), term=5)
        cont = (T0 + 20) * 1000 + 2 + pause_ms
        r.faults += ["%d 3 stop n1 scope=%s" % ((T0 + 20) * 1000 + 2, scope), "%d 3 cont n1 scope=%s" % (cont, scope)]
        r.run("n1", T0 + 20, 5, "late", cont + 1, cont + 1 + end_after_ms)
        return r

    def test_a_start_after_a_stall_between_guard_and_exec_is_the_window(self):
        # A cancel run of a frozen node (its process exec'd before the
        # freeze) ends within its licence after the resume: the window.
        rc, out = self.late_start("node", 1400).check()
        self.assertEqual(rc, 0, out)
        self.assertIn("inversions in the window between the guard and the exec: 1", out)
        self.assertIn("overlaps in the window between the guard and the exec: 1", out)
        self.assertIn("inversions 0 (+1 window), overlaps 0 (+1 window", out)
        # A pause long before the run was decided excuses nothing.
        r = self.late_start("node", 1400)
        r.faults = [f for f in r.faults if " 3 " not in f]
        r.faults += ["%d 1 stop n1 scope=node" % ((T0 + 3) * 1000), "%d 1 cont n1 scope=node" % ((T0 + 4) * 1000)]
        rc, out = r.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("OLD TERM ACTED AFTER A NEWER ONE: 1", out)
        self.assertIn("OVERLAPPING RUNS ON TWO NODES: 1", out)

    def test_a_cancel_run_past_its_licence_is_not_the_window(self):
        # lanleader alone stalled 1.4 s between the guard and the exec: the
        # licence (0.3 s) had run out, the shim must not have started it.
        rc, out = self.late_start("daemon", 1400).check()
        self.assertEqual(rc, 1, out)
        self.assertIn("OLD TERM ACTED AFTER A NEWER ONE: 1", out)
        self.assertIn("OVERLAPPING RUNS ON TWO NODES: 1", out)
        # A frozen node's cancel run going on 3 s after the resume: its
        # shim did not stop it.
        rc, out = self.late_start("node", 1400, end_after_ms=3000).check()
        self.assertEqual(rc, 1, out)
        self.assertIn("OLD TERM ACTED AFTER A NEWER ONE: 1", out)

    def test_a_finish_run_after_a_stall_between_guard_and_exec_is_the_window(self):
        # Nothing in lanleader bounds a finish run's start after the stall
        # (docs/jobs.md, "The last check before exec"): either scope, any
        # length, is the window, not an overlap or a duplicate.
        nemesis_check.FINISH = {JOB}
        for scope in ("daemon", "node"):
            rc, out = self.late_start(scope, 1400, end_after_ms=3000).check()
            self.assertEqual(rc, 0, out)
            self.assertIn("overlaps in the window between the guard and the exec: 1", out)
            self.assertIn("finish run: its node paused between the guard and the exec (%s)" % scope, out)

    def test_runs_overlapping_on_two_nodes(self):
        r = Run()
        r.drop(T0 + 8)
        r.run("n1", T0 + 8, 5, "long", (T0 + 8) * 1000 + 10, (T0 + 9) * 1000 + 500)
        r.log("n2", (T0 + 8) * 1000 + 900, "became leader", term=6)
        r.drop(T0 + 9)
        r.run("n2", T0 + 9, 6, "beside", (T0 + 9) * 1000 + 10)
        rc, out = r.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("OVERLAPPING RUNS ON TWO NODES: 1", out)
        r.faults += ["%d 2 stop n1 scope=daemon" % ((T0 + 8) * 1000 + 100), "%d 2 cont n1 scope=daemon" % ((T0 + 9) * 1000 + 400)]
        rc, out = r.check()
        self.assertIn("overlaps excused (paused, or a finish run cut off): 1", out)

    def test_run_of_an_instant_not_in_the_schedule(self):
        nemesis_check.JOBS = {JOB: ("@every 2s", 2, "run", 0, [])}
        r = Run()
        for s in range(T0 + 1, T0 + 21, 2):
            r.drop(s)
        rc, out = r.check()
        self.assertEqual(rc, 0, out)
        r.run("n1", T0 + 11, 5, "odd", (T0 + 11) * 1000 + 20)
        rc, out = r.check()
        self.assertEqual(rc, 1, out)
        self.assertIn("OFF SCHEDULE (runs of instants not in their job's schedule): 1", out)

    def test_state_file_behind_its_nodes_runs(self):
        r = Run()
        r.check()
        r.saved["n1"] = T0 + 5
        rc, out = r.check(quorum=False)
        self.assertEqual(rc, 1, out)
        self.assertIn("STATE FILE BEHIND ITS NODE'S RUNS: 1", out)


class PlanTest(unittest.TestCase):
    def test_a_pure_function_of_the_seed(self):
        a = nemesis_plan.plan(7, 120000, 5, 200, 3)
        self.assertEqual(a, nemesis_plan.plan(7, 120000, 5, 200, 3))
        self.assertNotEqual(a, nemesis_plan.plan(8, 120000, 5, 200, 3))
        self.assertGreater(a[-1][1], 2 * 120000 - 20000, "steps for twice the duration")
        kinds = {k for s in range(20) for _, _, k, _ in nemesis_plan.plan(s, 600000, 5, 200, 3)}
        self.assertEqual(kinds, {"pause", "kill", "partition", "oneway", "loss", "reload", "timing"})


if __name__ == "__main__":
    unittest.main()
