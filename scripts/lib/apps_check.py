#!/usr/bin/env python3
"""Checks for scripts/netns/apps.sh, over the gateway's own logs
(examples/applications/gateway.py writes STATE/actions.log):

  keys [--window FROM_MS:TO_MS]... LOG...
      way (a): every Idempotency-Key reached the gateways once ("request"
      lines) and was done once ("did"); every instant between a job's first
      and last done one was done, except instants inside a window (a
      failover, where the misfire policy runs only the latest missed one).
  overlap [--end NODE:MS]... LOG...
      way (b): the schedulers' start and stop markers; a scheduler whose
      node was killed (--end) ends then. Fails if two were alive at once.
      Prints each scheduler's interval.
  started-after NODE FROM_MS LOG...
      prints the first scheduler start of NODE after FROM_MS (ms).
  snippet GUIDE SOURCE
      way (c): prints the snippet docs/applications.md shows, after checking
      that it is the code gateway.py runs.

Exit status 0 when the check holds, 1 when it does not (the findings on
stdout), 2 on bad input.
"""

import argparse
import re
import sys
from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone

FIELD = re.compile(r"(\w+)=(\S*)")


def lines(paths):
    for p in paths:
        try:
            with open(p) as f:
                yield from f
        except FileNotFoundError:
            continue


def fields(line):
    return dict(FIELD.findall(line))


def windows(specs):
    out = []
    for w in specs or []:
        a, b = w.split(":")
        out.append((int(a), int(b)))
    return out


def cmd_keys(a):
    requests, done = Counter(), Counter()
    instants = defaultdict(set)
    for line in lines(a.logs):
        kind = line.split(" ", 1)[0]
        f = fields(line)
        key = f.get("key", "")
        if kind == "request":
            requests[key] += 1
        elif kind == "did":
            done[key] += 1
            job, _, at = key.partition("@")
            instants[job].add(datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc))
    bad = []
    for key, n in sorted(requests.items()):
        if n != 1:
            bad.append(f"key {key} reached the gateways {n} times")
    for key, n in sorted(done.items()):
        if n != 1:
            bad.append(f"key {key} was done {n} times")
    ws = windows(a.window)
    missed_in, missed_out = 0, []
    for job, seen in sorted(instants.items()):
        t, last = min(seen), max(seen)
        while t < last:
            t += timedelta(seconds=1)
            if t in seen:
                continue
            ms = int(t.timestamp() * 1000)
            if any(lo <= ms <= hi for lo, hi in ws):
                missed_in += 1
            else:
                missed_out.append(f"{job}@{t:%Y-%m-%dT%H:%M:%SZ}")
    if missed_out:
        bad.append("instants missed outside a failover: " + " ".join(missed_out))
    print(f"keys {len(requests)}, done {sum(done.values())}, jobs {len(instants)}, "
          f"missed within failovers {missed_in}")
    for b in bad:
        print(b)
    return 1 if bad or not requests else 0


def schedulers(paths, ends):
    """Returns [node, pid, start_ms, end_ms or None] per scheduler."""
    runs = {}
    for line in lines(paths):
        if not line.startswith("scheduler "):
            continue
        f = fields(line)
        key = (f["node"], f["pid"])
        ms = int(float(f["at"]) * 1000)
        if line.startswith("scheduler start"):
            runs[key] = [f["node"], f["pid"], ms, None]
        elif key in runs:
            runs[key][3] = ms
    for node, ms in ends:
        for r in runs.values():
            if r[0] == node and r[3] is None and r[2] <= ms:
                r[3] = ms
    return sorted(runs.values(), key=lambda r: r[2])


def cmd_overlap(a):
    ends = [(e.split(":")[0], int(e.split(":")[1])) for e in a.end or []]
    runs = schedulers(a.logs, ends)
    bad = []
    for r in runs:
        end = "alive" if r[3] is None else str(r[3])
        print(f"scheduler {r[0]} pid {r[1]}: {r[2]} to {end}")
    for i, x in enumerate(runs):
        for y in runs[i + 1:]:
            x_end = float("inf") if x[3] is None else x[3]
            if y[2] < x_end:
                bad.append(f"OVERLAP: {x[0]}'s scheduler (from {x[2]} to {x[3]}) and {y[0]}'s (from {y[2]}) "
                           f"were alive at once for {min(x_end, y[3] or float('inf')) - y[2]:.0f} ms")
    for b in bad:
        print(b)
    return 1 if bad or not runs else 0


def cmd_started_after(a):
    for r in schedulers(a.logs, []):
        if r[0] == a.node and r[2] >= a.from_ms:
            print(r[2])
            return 0
    return 1


def snippet_of(text, begin, end):
    i = text.find(begin)
    if i < 0:
        return None
    i = text.index("\n", i) + 1
    j = text.index(end, i)
    return text[i:j]


def cmd_snippet(a):
    guide = snippet_of(open(a.guide).read(), "<!-- snippet: way-c", "```\n")
    if guide is None or not guide.startswith("```python\n"):
        print(f"{a.guide}: no way-c snippet")
        return 2
    guide = guide[len("```python\n"):]
    source = snippet_of(open(a.source).read(), "# way (c), as docs/applications.md shows it -- begin", "# way (c) -- end")
    if guide != source:
        print(f"the snippet in {a.guide} is not the code {a.source} runs")
        return 1
    sys.stdout.write(guide)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("keys")
    s.add_argument("--window", action="append")
    s.add_argument("logs", nargs="+")
    s = sub.add_parser("overlap")
    s.add_argument("--end", action="append")
    s.add_argument("logs", nargs="+")
    s = sub.add_parser("started-after")
    s.add_argument("node")
    s.add_argument("from_ms", type=int)
    s.add_argument("logs", nargs="+")
    s = sub.add_parser("snippet")
    s.add_argument("guide")
    s.add_argument("source")
    a = p.parse_args()
    return {"keys": cmd_keys, "overlap": cmd_overlap, "started-after": cmd_started_after, "snippet": cmd_snippet}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
