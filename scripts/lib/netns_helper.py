#!/usr/bin/env python3
"""Helpers for scripts/netns-test.sh: UDP probes and log analysis.

Subcommands:
  udp-recv PORT SECONDS READY STOP count datagrams received on 0.0.0.0:PORT
  udp-send ADDR PORT COUNT         send COUNT broadcast-capable datagrams
  first-event --after MS --msg M FILE...
                                   first log line with msg M and time > MS:
                                   prints "ms file" (exit 1 if none)
  count-events --from MS --to MS --msg M [--msg M2] FILE...
                                   number of such lines in the window
  jobs ...                         exactly-once analysis of job logs
  stats NAME MS...                 min/p50/p90/max of a list of numbers (JSON)

Only the standard library is used. Log lines are slog JSON objects with
"time" (RFC3339Nano) and "msg"; lines that are not JSON are ignored.
"""

import argparse
import json
import re
import socket
import sys
import time
from datetime import datetime

_FRAC = re.compile(r"\.(\d+)")


def parse_time_ms(s):
    """RFC3339(Nano) or unix seconds/ms/ns → float unix milliseconds."""
    s = str(s).strip()
    if re.fullmatch(r"-?\d+(\.\d+)?", s):
        v = float(s)
        if v > 1e17:  # ns
            return v / 1e6
        if v > 1e14:  # us
            return v / 1e3
        if v > 1e11:  # ms
            return v
        return v * 1000.0
    # Python's fromisoformat takes at most 6 fractional digits.
    m = _FRAC.search(s)
    if m:
        s = s[: m.start()] + "." + (m.group(1) + "000000")[:6] + s[m.end():]
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    # Go's time.String() style "2026-11-30 20:01:02 +0000 UTC" as a fallback.
    s = re.sub(r" ([+-]\d\d)(\d\d) [A-Z]+$", r"\1:\2", s)
    return datetime.fromisoformat(s).timestamp() * 1000.0


def log_events(path):
    """Yields (ms, obj) for every JSON line of a log file."""
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError:
        return
    with f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                obj = json.loads(line)
                ms = parse_time_ms(obj["time"])
            except (ValueError, KeyError, TypeError):
                continue
            yield ms, obj


def cmd_udp_recv(a):
    """Counts datagrams on 0.0.0.0:PORT. Touches READY once bound, and stops
    when the file STOP exists (the sender is done) or after SECONDS."""
    import os
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", a.port))
    s.settimeout(0.05)
    open(a.ready, "w").close()
    deadline = time.monotonic() + a.seconds
    n = 0
    while time.monotonic() < deadline:
        try:
            s.recvfrom(2048)
            n += 1
            continue
        except socket.timeout:
            pass
        if os.path.exists(a.stop):
            break
    print(n)


def cmd_udp_send(a):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
    for i in range(a.count):
        s.sendto(b"llt-probe %d" % i, (a.addr, a.port))
        time.sleep(0.005)


def cmd_first_event(a):
    best = None
    for path in a.files:
        for ms, obj in log_events(path):
            if obj.get("msg") in a.msg and ms > a.after:
                if best is None or ms < best[0]:
                    best = (ms, path)
                break
    if best is None:
        return 1
    print("%.3f %s" % best)
    return 0


def cmd_count_events(a):
    n = 0
    for path in a.files:
        for ms, obj in log_events(path):
            if obj.get("msg") in a.msg and a.start <= ms <= a.end:
                n += 1
    print(n)


def read_jobs(path):
    """Job log lines 'node term scheduled_at' → list of (node, term, ms, raw)."""
    out = []
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError:
        return out
    with f:
        for line in f:
            parts = line.split(None, 2)
            if len(parts) != 3:
                continue
            try:
                out.append((parts[0], int(parts[1]), parse_time_ms(parts[2]), parts[2].strip()))
            except ValueError:
                continue
    return out


def _windows(specs):
    """'NAME:FROM:TO' → list of (name, from_ms, to_ms)."""
    res = []
    for w in specs or []:
        name, lo, hi = w.rsplit(":", 2)
        res.append((name, float(lo), float(hi)))
    return res


def cmd_jobs(a):
    """Exactly-once analysis.

    An instant is a scheduled_at value (rounded to the ms). A duplicate is an
    instant run by two or more nodes (or twice by one). Duplicates whose
    instant lies inside an --excluded window (partitions) are reported but do
    not fail. Missed instants are the gaps between consecutive instants
    longer than 1.5 periods; each failover (--failover NAME:FROM:TO) reports
    the misses in gaps that overlap its window.
    """
    runs = []
    for path in a.files:
        runs.extend(read_jobs(path))
    period = a.period_ms
    by_instant = {}
    for node, term, ms, raw in runs:
        by_instant.setdefault(round(ms), []).append((node, term, raw))
    excluded = _windows(a.excluded)
    failovers = _windows(a.failover)

    def window_of(ms, wins):
        for name, lo, hi in wins:
            if lo <= ms <= hi:
                return name
        return None

    dup_strict, dup_excused = [], []
    for inst, rs in sorted(by_instant.items()):
        if len(rs) < 2:
            continue
        item = {"instant": rs[0][2], "runs": ["%s@term%d" % (n, t) for n, t, _ in rs]}
        w = window_of(inst, excluded)
        if w:
            item["window"] = w
            dup_excused.append(item)
        else:
            dup_strict.append(item)

    instants = sorted(by_instant)
    gaps = []  # (from_ms, to_ms, missed)
    for prev, cur in zip(instants, instants[1:]):
        missed = int(round((cur - prev) / period)) - 1
        if missed > 0:
            gaps.append((prev, cur, missed))
    per_failover = []
    for name, lo, hi in failovers:
        missed = sum(m for g0, g1, m in gaps if g1 > lo and g0 < hi)
        per_failover.append({"failover": name, "missed": missed})
    res = {
        "runs": len(runs),
        "instants": len(instants),
        "duplicates": dup_strict,
        "duplicates_in_excluded_windows": dup_excused,
        "missed_total": sum(m for _, _, m in gaps),
        "missed_per_failover": per_failover,
        "gaps": [{"after": datetime.fromtimestamp(g0 / 1000).isoformat(timespec="milliseconds"),
                  "missed": m} for g0, _, m in gaps],
    }
    json.dump(res, sys.stdout, indent=1)
    print()
    return 0


def _node_of(path):
    m = re.search(r"(n\d+)\.log$", path)
    return m.group(1) if m else path


def cmd_leaderships(a):
    """Lists every "became leader" (time, node, term) in time order, and
    checks that no term was led by two nodes: a term is one leadership, and
    jobs use it as a fencing token. Exit 1 on a conflict."""
    rows = []
    for path in a.files:
        for ms, obj in log_events(path):
            if obj.get("msg") == "became leader" and a.start <= ms <= a.end:
                rows.append((ms, _node_of(path), obj.get("term")))
    rows.sort()
    by_term = {}
    for ms, node, term in rows:
        by_term.setdefault(term, set()).add(node)
    bad = {t: sorted(ns) for t, ns in by_term.items() if len(ns) > 1}
    for ms, node, term in rows:
        t = datetime.fromtimestamp(ms / 1000).strftime("%H:%M:%S.%f")[:-3]
        print("%s %s term %s%s" % (t, node, term, "  <-- term also led by " + ",".join(n for n in bad[term] if n != node) if term in bad else ""))
    return 1 if bad else 0


def cmd_pause_check(a):
    """Lines a paused leader wrote after SIGCONT (past the first --skip
    lines) under its old term for an instant after the pause began: runs it
    started as a leader that had already been replaced. Exit 1 if any."""
    bad = []
    for node, term, ms, raw in read_jobs(a.log)[a.skip:]:
        if term == a.term and ms > a.after:
            bad.append("%s %d %s" % (node, term, raw))
    for b in bad:
        print(b)
    return 1 if bad else 0


def cmd_bench_summary(a):
    """Writes the benchmark's JSON summary and prints a table."""
    out = {"meta": {}, "failover_ms": {}, "resources": []}
    for kv in a.meta or []:
        k, v = kv.split("=", 1)
        out["meta"][k] = v
    for spec in a.series or []:
        name, vals = spec.split(":", 1)
        xs = sorted(float(x) for x in vals.split(",") if x)
        st = {"n": len(xs), "samples_ms": xs}
        if xs:
            st.update(min=round(xs[0], 1), p50=round(percentile(xs, 50), 1),
                      p90=round(percentile(xs, 90), 1), max=round(xs[-1], 1))
        out["failover_ms"][name] = st
    for spec in a.resource or []:
        interval, node, role, rss, cpu, *rest = spec.split(":")
        r = {"interval": interval, "node": node, "role": role, "rss_kb": int(rss), "cpu_pct": float(cpu)}
        if rest:
            r["anon_kb"] = int(rest[0])  # private memory; the rest of RSS is the binary's clean pages
        if len(rest) > 1:
            r["window"] = int(rest[1])  # which of the alternating idle windows
        out["resources"].append(r)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("%-26s %4s %8s %8s %8s %8s" % ("failover", "n", "min", "p50", "p90", "max"))
    for name, st in out["failover_ms"].items():
        if st["n"]:
            print("%-26s %4d %8.1f %8.1f %8.1f %8.1f" % (name, st["n"], st["min"], st["p50"], st["p90"], st["max"]))
        else:
            print("%-26s %4d (no samples)" % (name, 0))
    print("%-18s %-6s %-6s %-9s %8s %8s %8s" % ("interval", "window", "node", "role", "RSS MiB", "anon MiB", "CPU %"))
    for r in out["resources"]:
        print("%-18s %-6d %-6s %-9s %8.1f %8.1f %8.3f" % (r["interval"], r.get("window", 1), r["node"], r["role"],
                                                        r["rss_kb"] / 1024, r.get("anon_kb", 0) / 1024, r["cpu_pct"]))
    return 0


def percentile(xs, p):
    """Nearest-rank percentile of a sorted list."""
    if not xs:
        return None
    k = max(0, min(len(xs) - 1, int(-(-p * len(xs) // 100)) - 1))
    return xs[k]


def cmd_stats(a):
    xs = sorted(float(x) for x in a.values)
    out = {"name": a.name, "n": len(xs)}
    if xs:
        out.update(min=round(xs[0], 1), p50=round(percentile(xs, 50), 1),
                   p90=round(percentile(xs, 90), 1), max=round(xs[-1], 1))
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("udp-recv")
    s.add_argument("port", type=int)
    s.add_argument("seconds", type=float)
    s.add_argument("ready")
    s.add_argument("stop")
    s.set_defaults(f=cmd_udp_recv)
    s = sub.add_parser("udp-send")
    s.add_argument("addr")
    s.add_argument("port", type=int)
    s.add_argument("count", type=int)
    s.set_defaults(f=cmd_udp_send)
    s = sub.add_parser("first-event")
    s.add_argument("--after", type=float, required=True)
    s.add_argument("--msg", action="append", required=True)
    s.add_argument("files", nargs="+")
    s.set_defaults(f=cmd_first_event)
    s = sub.add_parser("count-events")
    s.add_argument("--from", dest="start", type=float, required=True)
    s.add_argument("--to", dest="end", type=float, required=True)
    s.add_argument("--msg", action="append", required=True)
    s.add_argument("files", nargs="+")
    s.set_defaults(f=cmd_count_events)
    s = sub.add_parser("jobs")
    s.add_argument("--period-ms", type=float, default=1000)
    s.add_argument("--excluded", action="append")
    s.add_argument("--failover", action="append")
    s.add_argument("files", nargs="+")
    s.set_defaults(f=cmd_jobs)
    s = sub.add_parser("leaderships")
    s.add_argument("--from", dest="start", type=float, default=0)
    s.add_argument("--to", dest="end", type=float, default=float("inf"))
    s.add_argument("files", nargs="+")
    s.set_defaults(f=cmd_leaderships)
    s = sub.add_parser("pause-check")
    s.add_argument("log")
    s.add_argument("skip", type=int)
    s.add_argument("term", type=int)
    s.add_argument("after", type=float)
    s.set_defaults(f=cmd_pause_check)
    s = sub.add_parser("bench-summary")
    s.add_argument("--out", required=True)
    s.add_argument("--meta", action="append")
    s.add_argument("--series", action="append")
    s.add_argument("--resource", action="append")
    s.set_defaults(f=cmd_bench_summary)
    s = sub.add_parser("stats")
    s.add_argument("name")
    s.add_argument("values", nargs="*")
    s.set_defaults(f=cmd_stats)
    a = p.parse_args()
    sys.exit(a.f(a) or 0)


if __name__ == "__main__":
    main()
