#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Render a `hetsim simulate --trace` Chrome trace as a PNG (for the README; Perfetto is the
interactive viewer). One row per pipeline stage (its first GPU; the TP ranks of a stage share
its timeline), then the busiest links' busy fraction.

    /usr/bin/python3 bench/plot_trace.py TRACE.json OUT.png [--links N]

Exit code 2, with a one-line message, for arguments or a trace it cannot read.
"""
import argparse
import json
import os
import sys

COLORS = {"forward": "#4c72b0", "backward": "#dd8452", "pp": "#bbbbbb", "dp": "#c44e52", "optimizer": "#55a868"}
OTHER = "#888888"


class BadTrace(Exception):
    pass


def parse_args(argv):
    p = argparse.ArgumentParser(prog="plot_trace.py", description=__doc__.splitlines()[0])
    p.add_argument("trace", help="Chrome trace JSON written by `hetsim simulate --trace`")
    p.add_argument("out", help="image to write (PNG, or any format matplotlib saves by extension)")
    p.add_argument("--links", type=int, default=4, metavar="N", help="busiest links to plot (default 4, 0 for none)")
    args = p.parse_args(argv)
    if args.links < 0:
        p.error("--links: expected a count >= 0, got %d" % args.links)
    if os.path.exists(args.out) and os.path.exists(args.trace) and os.path.samefile(args.out, args.trace):
        p.error("OUT is the trace itself (expected another file: it would be overwritten)")
    return args


def read_events(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise BadTrace("%s: cannot read: %s" % (path, e.strerror or e))
    except (ValueError, UnicodeDecodeError) as e:
        raise BadTrace("%s: not a JSON trace: %s" % (path, e))
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise BadTrace("%s: no traceEvents list (expected the JSON of `hetsim simulate --trace`)" % path)
    events = [e for e in events if isinstance(e, dict) and "ph" in e]
    if not any(e["ph"] == "X" for e in events):
        raise BadTrace("%s: no spans in the trace (expected the GPU tracks of `hetsim simulate --trace`)" % path)
    return events


def stage_rows(events):
    """Per stage ("rR sS"), its first GPU's track id and name, in track order."""
    names = {e.get("tid"): e.get("args", {}).get("name", "") for e in events
             if e["ph"] == "M" and e.get("name") == "thread_name"}
    first = {}
    for tid, name in sorted(names.items(), key=lambda kv: kv[0]):
        if name.startswith("gpu ") and "(" in name:
            first.setdefault(name.split("(", 1)[1].rstrip(")"), (tid, name))
    return sorted(first.values())


def busiest_links(events, n, t_end):
    """The n links busiest over the step (time-weighted: samples are written where the value changes)."""
    counters = {}
    for e in events:
        if e["ph"] == "C":
            counters.setdefault(e.get("name", "?"), []).append((e["ts"] * 1e-6, e.get("args", {}).get("busy", 0.0)))
    mean = {}
    for k, pts in counters.items():
        pts.sort()
        mean[k] = sum(b * ((pts[i + 1][0] if i + 1 < len(pts) else t_end) - t) for i, (t, b) in enumerate(pts))
    return [(k, counters[k]) for k in sorted(counters, key=lambda k: -mean[k])[:n]]


def plot(events, out, n_links):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = stage_rows(events)
    t_end = max(e["ts"] + e.get("dur", 0) for e in events if e["ph"] in "XC") * 1e-6
    links = busiest_links(events, n_links, t_end)
    # One broken_barh per row and colour: one call per span took minutes on a 10 MB trace.
    bars = {}
    row_of = {tid: y for y, (tid, _) in enumerate(rows)}
    for e in events:
        if e["ph"] == "X" and e.get("tid") in row_of:
            key = (row_of[e["tid"]], COLORS.get(e.get("cat"), OTHER))
            bars.setdefault(key, []).append((e["ts"] * 1e-6, e.get("dur", 0) * 1e-6))

    fig, axes = plt.subplots(2, 1, figsize=(12, 1.0 + 0.45 * len(rows) + 0.35 * len(links)), sharex=True,
                             gridspec_kw={"height_ratios": [max(len(rows), 1), max(len(links), 1) * 0.8]})
    ax = axes[0]
    for (y, color), spans in bars.items():
        ax.broken_barh(spans, (y - 0.4, 0.8), color=color, linewidth=0)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([name for _, name in rows], fontsize=8)
    ax.invert_yaxis()
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=c) for c in COLORS.values()], labels=list(COLORS), fontsize=7,
              ncol=5, loc="upper right")
    ax.set_title("hetsim simulate --trace: one training step", fontsize=10)
    ax = axes[1]
    for k, pts in links:
        xs, ys = [], []
        for i, (t, b) in enumerate(pts):
            xs += [t, pts[i + 1][0] if i + 1 < len(pts) else t_end]
            ys += [b, b]
        ax.plot(xs, ys, linewidth=0.8, label=k)
    ax.set_ylabel("link busy", fontsize=8)
    ax.set_ylim(0, 1.05)
    if links:
        ax.legend(fontsize=7, loc="upper right")
    ax.set_xlabel("simulated time (s)")
    ax.set_xlim(0, t_end)
    fig.tight_layout()
    # Atomically: into a temporary file beside OUT (same extension: matplotlib picks the format
    # by it), then renamed over OUT.
    folder, name = os.path.split(out)
    stem, ext = os.path.splitext(name)
    tmp = os.path.join(folder, ".%s.tmp.%d%s" % (stem, os.getpid(), ext))
    try:
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, out)
    except (OSError, ValueError) as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise BadTrace("%s: cannot write: %s" % (out, e))


def main(argv):
    args = parse_args(argv[1:])
    try:
        plot(read_events(args.trace), args.out, args.links)
    except BadTrace as e:
        print("plot_trace.py: error: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
