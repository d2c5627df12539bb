#!/usr/bin/env python3
"""The nemesis's checker: a verdict from the nodes' own records.

  nemesis_check.py --work DIR --nodes N --end-ms MS [--quorum] [--rerun CMD]

Reads, under DIR: the job lines the runs wrote (nm-jobs-nI.log, see
nemesis_job.sh), each node's lanleader log (nI.log, JSON), its state file
(state.nI/state) and the driver's fault log (nemesis-faults.log: "MS STEP
ACTION ARGS"). The jobs and their schedules are nemesis_plan.JOBS.

Definitions (times are the kernel's realtime clock, shared by every
namespace; an instant is a job's scheduled second):

owed      every instant of a job after the first leader's start (plus 1 s)
          and up to 2.5 s before the calm end of the run (MS): the cluster
          had a leader then or a takeover decides it later. Every job's
          instants are the multiples of its period since the epoch (cron
          "every N seconds", and `@every`, as configuration.md says).
accounted an owed instant is accounted for when
          - a run of it started (a start line), or
          - a node logged skipping it with a reason (its job and
            scheduled_at: overlap, held elsewhere, misfire skip or grace,
            a failover gap coalesced into a rerun ("skipped" or "not
            run"), a failed quorum commit, stopping, or refused by the
            guard), or
          - a node logged the instants overtaken by a later one (from,
            count), or
          - a takeover concluded its run interrupted and said it does not
            run it again (its leader recorded it running, and in quorum
            mode may have died before its commit: no start line;
            "interrupted", counted apart), or
          - a takeover logged running or skipping a later missed instant
            (misfire) and this one lies between it and the latest
            instant accounted for before it: the older instants of a
            failover gap are coalesced into the latest, as jobs.md says
            ("coalesced", inferred, counted apart).
missing   owed and not accounted for: each is printed with the faults
          around it and who led.
off       a run of an instant that is not one of its job's instants.
twice     an instant with runs of two run ids (retries share one). A
          second run that its node logged as a rerun_interrupted rerun of
          that instant is by design (at least once), counted apart. Each
          is given the faults that can explain it (partition, oneway,
          loss: a network fault touching either node; pause: the first
          run's node paused; kill: its node killed), from its
          instant to the second start, and the report counts them by
          cause (without quorum, docs/jobs.md, Limits, names these).
inversion a run (an attempt's start) under term T that starts after a run
          under a higher term started: an old leader acted after a newer
          one (fencing monotonicity).
overlap   a run of a job starting on one node while a run of the same job
          goes on on another (from start and end lines; a killed node's
          runs end at the kill). Excused, and counted apart, when the
          older run's node was paused meanwhile (a run already going keeps
          running while its node is paused), or, for on_leader_loss:
          finish, cut off by a partition, one-way drop or loss burst (its
          hold can lapse: docs/jobs.md, Limits).
window    an inversion or overlap whose later run's node was paused
          between lanleader's "run started" (the guard's last yes) and
          the run's own start line: the window docs/jobs.md names ("The
          last check before exec"), counted apart, not failing, for an
          on_leader_loss: finish job (nothing in lanleader bounds it), and
          for a cancel job only if the pause froze the whole node and the
          run ended within its licence after the node resumed (its shim
          stops it then: LICENCE_END_MS). A cancel run that starts after
          lanleader alone stalled, or goes on past that bound, fails.
terms     a term that two nodes said they led.
state     a node whose saved ledger (state file) names, for a job, an
          instant older than the newest one that node started since its
          state dir was last wiped: the state file is written before a
          run starts.
crashes   a daemon that exited without the nemesis stopping it, a panic.

With --quorum any finding fails the run (exit 1). Without quorum a
partition runs jobs on both sides by design: twice, inversion and overlap
are counted, and only terms, state and crashes fail it.
"""

import argparse
import base64
import glob
import json
import os
import re
import sys
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from netns_helper import log_events, parse_time_ms  # noqa: E402
from nemesis_plan import JOBS  # noqa: E402

# What lanleader logs about instants, by the start of the message (the
# runner's words; a new reason to skip needs no change here):
NOT_STARTING = ("jobs: not starting: ", "jobs: not started: ")  # + the reason: a logged skip
HANDED_OVER = "; the next leadership decides this instant"  # a refused start given up to the next leader (jobs/refused.go)
REASONS = {  # a short name for the reasons the report counts apart
    "previous run still going (overlap: skip)": "overlap",
    "previous run still going on another node (overlap: skip)": "held elsewhere",
    "previous leader's run may still be going on its node (overlap: skip)": "held elsewhere",
    "could not record the run in the cluster first": "commit failed",
    "lanleader is stopping": "stopping",
    "this node cannot currently act as leader": "refused",
    "this or a later instant already started": "a later instant started",
    "this node could not act as leader before a later instant came due": "refused until a later instant",
    "this node could not act as leader within misfire_grace": "refused past misfire_grace",
}
SKIPPED = {  # other messages that skip the instant they name
    "jobs: instant too late to run (misfire_grace)": "misfire grace",
    "jobs: job removed by reload before its due instant started; not run": "removed by reload",
    "jobs: instant missed during failover; overtaken by a later instant not started yet": "overtaken",
}
MISSED = "missed during failover"  # a takeover's word on the latest instant of a failover gap
MISSED_RANGE = "jobs: instants missed during failover; overtaken by a later instant already started"  # count, ending at scheduled_at
OVERTAKEN = "jobs: instants overtaken by a later one; skipped"  # from, count
RERUN = "running it again (rerun_interrupted)"  # in every message that reruns an interrupted instant
# In an attempt's end result when nothing of it ran: the shim refused the
# exec, the request was not sent (the instant is decided again, or given up
# with a line of its own).
REFUSED_AT_START = ("licence ran out before the start", "request not sent")
NOT_RERUN = ("not running it again", "too late to run it again")  # in every message that concludes an instant interrupted for good
FINISH = {name for name, j in JOBS.items() if "on_leader_loss: finish" in j[4]}
# How long after its frozen node resumes a cancel run may still go on: its
# licence (jobs.Licence, 300 ms, already run out by then), its shim's
# SIGKILL settle (proc.LicenceKillSettle, 250 ms), and 450 ms for the job's
# own end line on a loaded machine.
LICENCE_END_MS = 1000


def hms(ms):
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%H:%M:%S.%f")[:-3]


def inst(s):
    """A scheduled_at (RFC 3339) → unix seconds."""
    return int(round(parse_time_ms(s) / 1000))


class Attempt:
    def __init__(self, node, job, sched, term, run_id, start):
        self.node, self.job, self.sched, self.term, self.run_id = node, job, sched, term, run_id
        self.start, self.end, self.how, self.decided = start, None, None, None


def read_job_lines(work):
    """Attempts from every nm-jobs-nI.log, in stamp order per node."""
    atts, open_ = [], {}
    lines = []
    for path in sorted(glob.glob(os.path.join(work, "nm-jobs-n*.log"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            lines += f.readlines()
    for line in lines:
        p = line.split()
        if len(p) != 7:
            continue
        stamp, ev, node, job, sched, term, run_id = p
        try:
            ms, t = float(stamp) * 1000, int(term)
            i = inst(sched)
        except ValueError:
            continue
        if ev == "start":
            a = Attempt(node, job, i, t, run_id, ms)
            atts.append(a)
            open_[(node, run_id)] = a
        elif (node, run_id) in open_:
            a = open_.pop((node, run_id))
            a.end, a.how = ms, ev
    return atts


class Faults:
    """The driver's fault log, as windows per node and for the network."""

    def __init__(self, path):
        self.lines, self.frozen, self.down, self.net, self.wiped, self.exited = [], {}, {}, [], {}, []
        self.scope = {}  # (node, stop ms) → "node" or "daemon"
        self.stop_ms = None
        stopped, killed, net_open = {}, {}, None
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for line in lines:
            p = line.split()
            if len(p) < 3:
                continue
            ms, step, act, args = float(p[0]), p[1], p[2], p[3:]
            self.lines.append((ms, step, act, " ".join(args)))
            node = args[0] if args else ""
            if act == "stop":
                stopped[node] = ms
                self.scope[(node, ms)] = next((a.split("=", 1)[1] for a in args if a.startswith("scope=")), "node")
            elif act == "cont" and node in stopped:
                self.frozen.setdefault(node, []).append((stopped.pop(node), ms))
            elif act in ("kill", "sigterm"):
                killed[node] = ms
            elif act == "start" and node in killed:
                self.down.setdefault(node, []).append((killed.pop(node), ms))
            elif act == "wiped":
                self.wiped.setdefault(node, []).append(ms)
            elif act == "exited":
                self.exited.append((ms, node, " ".join(args[1:])))
            elif act in ("partition", "oneway", "loss"):
                net_open = (ms, act + " " + " ".join(args))
            elif act == "heal" and net_open:
                self.net.append((net_open[0], ms, net_open[1]))
                net_open = None
            elif act == "stopped":
                self.stop_ms = ms
        self.end_ms = self.lines[-1][0] if self.lines else 0

    def paused(self, node, lo, hi):
        """Whether node was paused at some time in [lo, hi]."""
        return any(a <= hi and b >= lo for a, b in self.frozen.get(node, []))

    def pauses(self, node, lo, hi):
        """The pauses of node that overlap [lo, hi]: (stop, cont, scope)."""
        return [(a, b, self.scope.get((node, a), "node")) for a, b in self.frozen.get(node, []) if a <= hi and b >= lo]

    def cut(self, node, lo, hi):
        """Whether a network fault that can cut node off lasted into [lo, hi]."""
        return bool(self.cuts(node, lo, hi))

    def cuts(self, node, lo, hi):
        """The kinds (partition, oneway, loss) of the network faults that
        can cut node off and lasted into [lo, hi]."""
        return {d.split()[0] for a, b, d in self.net
                if a <= hi and b >= lo and (d.startswith("loss") or node[1:] in re.findall(r"\d+", d))}

    def ended_by(self, node, ms):
        """When a run node started at ms ended if it wrote no end line: at
        the node's next kill or graceful stop, else at the run's end."""
        for a, _ in sorted(self.down.get(node, [])):
            if a >= ms:
                return a, "killed"
        return self.stop_ms, "stopped at the end"

    def causes(self, first, second, lo, hi):
        """What faults in [lo, hi] can explain a second run of an instant:
        partition, oneway, loss (touching either node), pause, kill
        (sorted), or "none"."""
        out = self.cuts(first, lo, hi) | self.cuts(second, lo, hi)
        if self.paused(first, lo, hi):
            out.add("pause")
        if any(lo <= a <= hi for a, _ in self.down.get(first, [])):
            out.add("kill")
        return "+".join(sorted(out)) or "none"

    def around(self, ms, before=6000, after=3000):
        return ["%s step %s %s %s" % (hms(t), s, a, x) for t, s, a, x in self.lines if ms - before <= t <= ms + after]


def read_daemon_logs(work):
    """Per node, its lanleader log's events: (ms, obj)."""
    out = {}
    for path in glob.glob(os.path.join(work, "n*.log")):
        m = re.search(r"/(n\d+)\.log$", path)
        if m:
            out[m.group(1)] = list(log_events(path))
    return out


def fnv64a(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def uvarint(b, i):
    x = s = 0
    while True:
        c = b[i]
        i += 1
        x |= (c & 0x7F) << s
        if c < 0x80:
            return x, i
        s += 7


def saved_ledger(path):
    """job id → instant (unix seconds) of a state file's ledger; None if none."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    body = json.loads(raw.split(b"\n", 1)[1])
    b = base64.b64decode(body.get("ledger") or "")
    if len(b) < 3:
        return {}
    version = b[0]
    n, i = uvarint(b, 2)
    out = {}
    for _ in range(n):
        jid = int.from_bytes(b[i:i + 8], "big")
        u, i = uvarint(b, i + 8)
        secs = (u >> 1) ^ -(u & 1)  # zigzag (binary.Varint)
        outcome = b[i]
        i += 1
        _, i = uvarint(b, i)  # term
        if version >= 3 and outcome & 0x40:
            _, i = uvarint(b, i)  # the run's stop bound (jobs.md, "Size limit")
        out[jid] = secs
    return out


def in_window(x, faults):
    """Why run x's start is the stall window between the guard and the
    exec (docs/jobs.md, "The last check before exec"), or None: its node
    was paused between lanleader's "run started" and x's own start line,
    and x is a finish run, or a cancel run of a frozen node that ended
    within LICENCE_END_MS of the node's resume."""
    if x.decided is None:
        return None
    for _, cont, scope in faults.pauses(x.node, x.decided, x.start):
        if x.job in FINISH:
            return "finish run: its node paused between the guard and the exec (%s)" % scope
        if scope == "node" and x.end is not None and x.end <= cont + LICENCE_END_MS:
            return "cancel run of a frozen node: ended %d ms after it resumed" % (x.end - cont)
    return None


def check(a):
    faults = Faults(os.path.join(a.work, "nemesis-faults.log"))
    atts = read_job_lines(a.work)
    logs = read_daemon_logs(a.work)
    out, fails = [], []

    # Who led, and what the daemons said about instants.
    became, decided_at, ended_at, logged, unstarted = [], {}, {}, {}, set()
    misfires, reruns, overtaken, errors = [], set(), [], {}
    for node, evs in logs.items():
        for ms, o in evs:
            msg = o.get("msg", "")
            if msg == "became leader":
                became.append((ms, node, o.get("term")))
            elif msg == "jobs: run started":
                decided_at[(o.get("run_id"), o.get("attempt"))] = (ms, node, o)
            elif msg == "jobs: attempt ended":
                ended_at[(o.get("run_id"), o.get("attempt"))] = ms
                if any(w in o.get("result", "") for w in REFUSED_AT_START):
                    unstarted.add((o.get("run_id"), o.get("attempt")))
            if o.get("level") == "ERROR" or "panic" in msg:
                errors[msg] = errors.get(msg, 0) + 1
            job, sa = o.get("job"), o.get("scheduled_at")
            if job not in JOBS:
                continue
            if msg == OVERTAKEN:
                overtaken.append((job, inst(o["from"]), int(o.get("count", 0))))
            if not sa:
                continue
            i = inst(sa)
            if msg == MISSED_RANGE:
                overtaken.append((job, i - (int(o.get("count", 1)) - 1) * JOBS[job][1], int(o.get("count", 1))))
            elif msg in SKIPPED:
                logged.setdefault((job, i), []).append((SKIPPED[msg], node, ms))
            elif msg.endswith(HANDED_OVER):
                pass  # not a skip: the next leadership decides the instant
            elif msg.startswith(NOT_STARTING):
                why = msg.split(": ", 2)[2]
                logged.setdefault((job, i), []).append((REASONS.get(why, why), node, ms))
            elif MISSED in msg:
                misfires.append((job, i))
                if any(w in msg for w in ("skipped", "too late", "not run")):
                    logged.setdefault((job, i), []).append(("misfire", node, ms))
            elif any(w in msg for w in NOT_RERUN) and "interrupted" in msg and not o.get("manual"):
                logged.setdefault((job, i), []).append(("interrupted", node, ms))
            if RERUN in msg:
                reruns.add((job, i, node))
    became.sort()
    if not became:
        print("nemesis: no node ever led")
        return 1
    t_lead = became[0][0]
    lo, hi = int(t_lead // 1000) + 2, int((a.end_ms - 2500) // 1000)

    # Attempts: their decision times and ends.
    n_attempt = {}
    for x in sorted(atts, key=lambda x: x.start):
        n_attempt[x.run_id] = n_attempt.get(x.run_id, 0) + 1
        x.decided = decided_at.pop((x.run_id, n_attempt[x.run_id]), (None,))[0]
        if x.end is None and (x.run_id, n_attempt[x.run_id]) in ended_at:
            x.end, x.how = ended_at[(x.run_id, n_attempt[x.run_id])], "no end line; lanleader saw it end"
    # Attempts lanleader started whose process wrote no line: its node was
    # killed or paused first. They count as started, from lanleader's line,
    # unless the attempt's end says nothing of it ran.
    for (run_id, k), (ms, node, o) in decided_at.items():
        if o.get("job") in JOBS and o.get("scheduled_at") and (run_id, k) not in unstarted:
            x = Attempt(node, o["job"], inst(o["scheduled_at"]), int(o.get("term", 0)), run_id, ms)
            x.decided, x.how = ms, "no run line"
            x.end = ended_at.get((run_id, k))
            atts.append(x)
    for x in atts:
        if x.end is None:
            x.end, how = faults.ended_by(x.node, x.start)
            x.how = (x.how + ", " if x.how else "") + how
            x.end = x.end or a.end_ms
    started = {}
    for x in atts:
        started.setdefault((x.job, x.sched), []).append(x)

    # Owed instants and how each was accounted for.
    status = {}
    off = ["%s %s (%s)" % (job, hms(t * 1000), ", ".join(sorted({x.node for x in xs})))
           for (job, t), xs in sorted(started.items()) if job in JOBS and t % JOBS[job][1]]
    for job, (_, period, _, _, _) in JOBS.items():
        for t in range(lo, hi + 1):
            if t % period:
                continue
            if (job, t) in started:
                status[(job, t)] = "started"
            elif (job, t) in logged:
                # A refusal is final only if no node gave another reason
                # (the woken old leader refuses what the new one skipped).
                reasons = [w for w, _, _ in logged[(job, t)]]
                status[(job, t)] = "skipped: " + next((w for w in reasons if w != "refused"), reasons[0])
            else:
                status[(job, t)] = None
        for j, f, n in overtaken:
            if j == job:
                for k in range(n):
                    if status.get((job, f + k * period), "x") is None:
                        status[(job, f + k * period)] = "skipped: overtaken"
    for job, t in sorted(misfires):
        period = JOBS[job][1]
        k = t - period
        while status.get((job, k), "x") is None:
            status[(job, k)] = "coalesced into a failover's misfire"
            k -= period
    counts = {}
    for s in status.values():
        counts[s or "MISSING"] = counts.get(s or "MISSING", 0) + 1
    missing = sorted(k for k, s in status.items() if s is None)
    refused_lost = sorted(k for k, s in status.items() if s == "skipped: refused")

    # Instants started twice.
    twice, by_design, twice_causes = [], [], {}
    for (job, t), xs in sorted(started.items()):
        ids = []
        for x in sorted(xs, key=lambda x: x.start):
            if x.run_id not in [i.run_id for i in ids]:
                ids.append(x)
        for x in ids[1:]:
            desc = "%s %s: %s" % (job, hms(t * 1000), ", ".join("%s term %d run %s at %s" % (
                i.node, i.term, i.run_id[:6], hms(i.start)) for i in ids))
            if (job, t, x.node) in reruns:
                by_design.append(desc)
            else:
                why = faults.causes(ids[0].node, x.node, t * 1000 - 1000, x.start)
                twice_causes[why] = twice_causes.get(why, 0) + 1
                twice.append(desc + " [" + why + "]")

    # An old term acting after a newer one.
    inversions, inv_window = [], []
    top = None
    for x in sorted(atts, key=lambda x: x.start):
        if top and x.term < top.term:
            desc = "%s started %s %s under term %d at %s; %s had started %s %s under term %d at %s (%d ms before)" % (
                x.node, x.job, hms(x.sched * 1000), x.term, hms(x.start), top.node, top.job,
                hms(top.sched * 1000), top.term, hms(top.start), x.start - top.start)
            why = in_window(x, faults)
            if why:
                inv_window.append(desc + ": " + why)
            else:
                inversions.append(desc)
        if top is None or x.term > top.term:
            top = x

    # Runs of one job overlapping on two nodes.
    overlaps, ov_excused, ov_window = [], [], []
    for job in JOBS:
        xs = sorted((x for x in atts if x.job == job), key=lambda x: x.start)
        for i, p in enumerate(xs):
            for q in xs[i + 1:]:
                if q.start >= p.end:
                    break
                if q.node == p.node:
                    continue
                desc = "%s: %s ran %s term %d %s-%s (%s); %s started %s term %d at %s" % (
                    job, p.node, hms(p.sched * 1000), p.term, hms(p.start), hms(p.end), p.how, q.node,
                    hms(q.sched * 1000), q.term, hms(q.start))
                why = in_window(q, faults)
                if why:
                    ov_window.append(desc + ": " + why)
                elif faults.paused(p.node, p.start, q.start) or (job in FINISH and faults.cut(p.node, p.start - 1000, q.start)):
                    ov_excused.append(desc)
                else:
                    overlaps.append(desc)

    # A term led by two nodes.
    by_term = {}
    for ms, node, term in became:
        by_term.setdefault(term, set()).add(node)
    terms = ["term %s led by %s" % (t, ",".join(sorted(ns))) for t, ns in by_term.items() if len(ns) > 1]

    # Saved ledgers against the runs each node started.
    state = []
    for n in range(1, a.nodes + 1):
        node = "n%d" % n
        wipe = max(faults.wiped.get(node, [0]))
        ledger = saved_ledger(os.path.join(a.work, "state." + node, "state"))
        for job in JOBS:
            mine = [x.sched for x in atts if x.node == node and x.job == job and x.start > wipe]
            if not mine:
                continue
            saved = (ledger or {}).get(fnv64a(job))
            if saved is None or saved < max(mine):
                state.append("%s %s: started %s, state file says %s" % (
                    node, job, hms(max(mine) * 1000), hms(saved * 1000) if saved else "nothing"))

    crashes = ["%s %s exited: %s" % (hms(ms), n, w) for ms, n, w in faults.exited]
    crashes += ["%d log line(s) %r" % (c, m) for m, c in errors.items() if "panic" in m]

    # The report.
    runs = {x.run_id for x in atts}
    out.append("runs %d (attempts %d) on %d nodes; leaderships %d; instants owed %d (%s .. %s)" % (
        len(runs), len(atts), len({x.node for x in atts}), len(became), len(status), hms(lo * 1000), hms(hi * 1000)))
    out.append("accounted: " + ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    if refused_lost:
        out.append("refused by the guard (cannot act as leader) and run by nobody: %d: %s" % (
            len(refused_lost), " ".join("%s@%s" % (j, hms(t * 1000)) for j, t in refused_lost[:20])))
    if twice_causes:
        out.append("twice by cause: " + ", ".join("%s %d" % kv for kv in sorted(twice_causes.items())))
    if errors:
        out.append("ERROR lines: " + "; ".join("%s x%d" % kv for kv in sorted(errors.items())))
    sections = [
        ("MISSING (neither run nor logged skipped)", ["%s %s" % (j, hms(t * 1000)) for j, t in missing], True),
        ("OFF SCHEDULE (runs of instants not in their job's schedule)", off, True),
        ("STARTED TWICE", twice, True),
        ("reruns by design (rerun_interrupted)", by_design, None),
        ("OLD TERM ACTED AFTER A NEWER ONE", inversions, True),
        ("inversions in the window between the guard and the exec", inv_window, None),
        ("OVERLAPPING RUNS ON TWO NODES", overlaps, True),
        ("overlaps in the window between the guard and the exec", ov_window, None),
        ("overlaps excused (paused, or a finish run cut off)", ov_excused, None),
        ("TERM LED BY TWO NODES", terms, False),
        ("STATE FILE BEHIND ITS NODE'S RUNS", state, False),
        ("CRASHES", crashes, False),
    ]
    for title, items, quorum_only in sections:
        if not items:
            continue
        failing = quorum_only is False or (quorum_only and a.quorum)
        out.append("%s: %d%s" % (title, len(items), "" if failing or quorum_only is None else " (counted: no quorum)"))
        for it in items[:40]:
            out.append("  " + it)
        if len(items) > 40:
            out.append("  ... %d more" % (len(items) - 40))
        if failing:
            fails.append("%s %d" % (title.split(" (")[0].lower(), len(items)))
    for j, t in missing[:10]:
        ms = t * 1000
        out.append("around %s %s: leaders before it: %s" % (j, hms(ms), ", ".join(
            "%s term %s at %s" % (n, term, hms(b)) for b, n, term in became if ms - 8000 <= b <= ms + 3000) or "none changed"))
        for f in faults.around(ms):
            out.append("    " + f)
    for line in out:
        print(line)
    counts_line = "owed %d, missing %d, twice %d (+%d by design), inversions %d (+%d window), overlaps %d (+%d window, +%d excused)" % (
        len(status), len(missing), len(twice), len(by_design), len(inversions), len(inv_window), len(overlaps), len(ov_window),
        len(ov_excused))
    if fails:
        print("rerun: " + a.rerun)
        print("verdict: FAIL (%s): %s" % (", ".join(fails), counts_line))
        return 1
    print("verdict: ok (%s): %s" % ("quorum" if a.quorum else "no quorum: counts only", counts_line))
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--work", required=True)
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--end-ms", type=float, required=True)
    p.add_argument("--quorum", action="store_true")
    p.add_argument("--rerun", default="")
    a = p.parse_args()
    sys.exit(check(a))


if __name__ == "__main__":
    main()
