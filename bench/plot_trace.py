#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Render a `hetsim simulate --trace` Chrome trace as a PNG (for the README; Perfetto is the
interactive viewer). One row per pipeline stage (its first GPU; the TP ranks of a stage share
its timeline), then the busiest links' busy fraction.

    /usr/bin/python3 bench/plot_trace.py TRACE.json OUT.png [--links N]
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"forward": "#4c72b0", "backward": "#dd8452", "pp": "#bbbbbb", "dp": "#c44e52", "optimizer": "#55a868"}


def main(argv):
    path, out = argv[1], argv[2]
    n_links = int(argv[argv.index("--links") + 1]) if "--links" in argv else 4
    events = json.load(open(path))["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    # First GPU of each stage: tracks named "gpu N (rR sS)".
    stage_track = {}
    for (pid, tid), name in sorted(names.items(), key=lambda kv: kv[0][1]):
        if name.startswith("gpu "):
            stage_track.setdefault(name.split("(")[1].rstrip(")"), (tid, name))
    rows = sorted(stage_track.items(), key=lambda kv: kv[1][0])
    counters = {}
    for e in events:
        if e["ph"] == "C":
            counters.setdefault(e["name"], []).append((e["ts"] * 1e-6, e["args"]["busy"]))
    mean = {k: sum(b for _, b in v) / len(v) for k, v in counters.items()}
    links = sorted(counters, key=lambda k: -mean[k])[:n_links]
    t_end = max([e["ts"] + e.get("dur", 0) for e in events if e["ph"] in "XC"]) * 1e-6

    fig, axes = plt.subplots(2, 1, figsize=(12, 1.0 + 0.45 * len(rows) + 0.35 * len(links)), sharex=True,
                             gridspec_kw={"height_ratios": [max(len(rows), 1), max(len(links), 1) * 0.8]})
    ax = axes[0]
    for y, (stage, (tid, name)) in enumerate(rows):
        for e in events:
            if e["ph"] == "X" and e["tid"] == tid:
                ax.broken_barh([(e["ts"] * 1e-6, e["dur"] * 1e-6)], (y - 0.4, 0.8), color=COLORS.get(e["cat"], "#888888"),
                               linewidth=0)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([name for _, (_, name) in rows], fontsize=8)
    ax.invert_yaxis()
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=c) for c in COLORS.values()], labels=list(COLORS), fontsize=7,
              ncol=5, loc="upper right")
    ax.set_title("hetsim simulate --trace: one training step", fontsize=10)
    ax = axes[1]
    for k in links:
        pts = sorted(counters[k])
        xs, ys = [], []
        for i, (t, b) in enumerate(pts):
            xs += [t, pts[i + 1][0] if i + 1 < len(pts) else t_end]
            ys += [b, b]
        ax.plot(xs, ys, linewidth=0.8, label=k)
    ax.set_ylabel("link busy", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, loc="upper right")
    ax.set_xlabel("simulated time (s)")
    ax.set_xlim(0, t_end)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv)
