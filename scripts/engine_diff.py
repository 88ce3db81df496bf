#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Differential check of the two engines on random heterogeneous plans.

Builds random plans on the example clusters (replicas of different GPU types, TP degrees and
stage splits, uneven micro-batch counts, ZeRO 0/1, overlapped or not), predicts each with the
analytic engine and simulates it, and prints the plans on which the engines differ most. The
engines share every link figure and formula; where they differ, one of them schedules or shares
something differently, which is how the rail-sharing miss of models::node_senders_of was found.
Outside CI (a few minutes): the agreement of particular cases is asserted by tests/sim.

  /usr/bin/python3 scripts/engine_diff.py --hetsim build/cli/hetsim --plans 60 --seed 1

With --planned it compares instead the plan `hetsim plan` finds best for every example cluster and
workload (what a user runs, and what `plan --refine` re-ranks with the simulator): the random
plans rarely draw the uneven micro-batch counts and zigzag placements the planner picks. Where
`plan` gives a best plan's figure with its pipeline sends of one parity coinciding
(`lockstep_tokens_per_s`), the analytic engine states a range and the difference is how far the
simulation lies outside it.

  /usr/bin/python3 scripts/engine_diff.py --hetsim build/cli/hetsim --planned --time-limit 10
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

import yaml

CLUSTERS = ["mixed-a100-v100.yaml", "h100-mi300x.yaml", "pcie-a100-l4-mix.yaml", "consumer-4090-a100.yaml",
            "spot-mix.yaml", "geo-two-zones.yaml"]
WORKLOADS = ["gpt3-1.3b.yaml", "gpt3-2.7b.yaml", "llama2-7b.yaml"]


def cluster_nodes(path):
    """[(node type name, gpus per node, first global GPU index)] in rank order."""
    with open(path) as f:
        c = yaml.safe_load(f)
    types = c["node_types"]
    nodes, first = [], 0
    for zone in c["zones"]:
        for group in zone["nodes"]:
            t = types[group["type"]]
            for _ in range(group["count"]):
                nodes.append((group["type"], t["gpus"], first))
                first += t["gpus"]
    return nodes


def model_layers(path):
    with open(path) as f:
        return yaml.safe_load(f)["model"]["layers"]


def split(total, parts, rng):
    """`total` layers in `parts` stages of at least one, unevenly."""
    cuts = sorted(rng.sample(range(1, total), parts - 1)) if parts > 1 else []
    bounds = [0] + cuts + [total]
    return [bounds[i + 1] - bounds[i] for i in range(parts)]


def random_plan(nodes, layers, rng, schedule="1f1b"):
    """A plan of 1-4 replicas, each a pipeline of 1-4 stages on free TP blocks of one node.
    Interleaved (two chunks a stage): 2-4 stages of an even layer count, micro-batch counts a
    multiple of the depth, as Megatron-LM's schedule needs."""
    interleave = 2 if schedule == "interleaved" else 1
    free = {i: list(range(n[1])) for i, n in enumerate(nodes)}  # node -> free local GPUs
    replicas = []
    for _ in range(rng.randint(1, 4)):
        pp = rng.choice([1, 2, 2, 3, 4] if interleave == 1 else [2, 2, 3, 4])
        stages = []
        for layers_here in [interleave * n for n in split(layers // interleave, pp, rng)]:
            tp = rng.choice([1, 2, 2, 4, 4, 8])
            homes = [i for i in free if len(free[i]) >= tp and nodes[i][1] % tp == 0]
            # a TP block: tp free GPUs at an aligned offset of one node
            blocks = []
            for i in homes:
                for start in range(0, nodes[i][1], tp):
                    if all(l in free[i] for l in range(start, start + tp)):
                        blocks.append((i, start))
            if not blocks:
                return None
            i, start = rng.choice(blocks)
            for l in range(start, start + tp):
                free[i].remove(l)
            stages.append({"layers": layers_here, "gpus": [nodes[i][2] + l for l in range(start, start + tp)]})
        micro_batches = rng.randint(2, 12) if interleave == 1 else pp * rng.randint(1, 4)
        replicas.append({"micro_batches": micro_batches, "stages": stages})
    plan = {"kind": "plan", "micro_batch": rng.choice([1, 2]), "zero": rng.choice([0, 1]),
            "overlap_grad_sync": rng.choice([False, True]), "recompute": rng.choice(["none", "full"]),
            "replicas": replicas}
    if schedule != "1f1b":
        plan.update({"schedule": schedule, "interleave": interleave})
    return plan


def run(hetsim, verb, cluster, workload, plan_path, extra=()):
    out = subprocess.run([hetsim, verb, "--cluster", cluster, "--workload", workload, "--plan", plan_path,
                          "--format", "json", *extra], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        return None
    return json.loads(out.stdout)


def shape_of(plan):
    return " + ".join("[" + " | ".join(f"tp{len(st['gpus'])} L{st['layers']}" for st in r["stages"]) +
                      f"] m{r['micro_batches']}" for r in plan["replicas"])


def compare(hetsim, cluster, workload, path, no_fold=False):
    """(relative difference, analytic, simulated) of a plan file, or None when either is infeasible."""
    a = run(hetsim, "predict", cluster, workload, path)
    if a is None or not a.get("feasible", False):
        return None
    s = run(hetsim, "simulate", cluster, workload, path, ["--no-fold"] if no_fold else [])
    if s is None or not s.get("feasible", False):
        return None
    ta, ts = a["iteration_time_s"], s["iteration_time_s"]
    return abs(ts - ta) / ta, a, s


def random_rows(args, root, tmp):
    """Random plans until args.plans are feasible: (rows, plans drawn)."""
    rng = random.Random(args.seed)
    rows, tried = [], 0
    while len(rows) < args.plans and tried < 20 * args.plans:
        tried += 1
        cluster = os.path.join(root, "clusters", rng.choice(CLUSTERS))
        workload = os.path.join(root, "workloads", rng.choice(WORKLOADS))
        # One draw more only when there is a choice, so that a seed's 1F1B plans stay what they were.
        schedule = rng.choice(args.schedules) if len(args.schedules) > 1 else args.schedules[0]
        plan = random_plan(cluster_nodes(cluster), model_layers(workload), rng, schedule)
        if plan is None:
            continue
        path = os.path.join(tmp, f"plan{tried}.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(plan, f, sort_keys=False)
        # The workload's global batch is the plan's (micro-batch x the replicas' counts).
        with open(workload) as f:
            w = yaml.safe_load(f)
        w["training"]["global_batch"] = plan["micro_batch"] * sum(r["micro_batches"] for r in plan["replicas"])
        workload = os.path.join(tmp, f"workload{tried}.yaml")
        with open(workload, "w") as f:
            yaml.safe_dump(w, f, sort_keys=False)
        c = compare(args.hetsim, cluster, workload, path, args.no_fold)
        if c is None:
            continue
        label = (f"{os.path.basename(cluster)} {w['name']} {plan.get('schedule', '1f1b')} zero {plan['zero']} "
                 f"overlap {plan['overlap_grad_sync']} "
                 f"{plan['recompute']} micro {plan['micro_batch']}: {shape_of(plan)}")
        rows.append((*c, label, cluster, w, plan))
    return rows, tried


def planned_rows(args, root, tmp):
    """The planner's best plan of every example cluster and workload: (rows, pairs tried)."""
    rows, tried = [], 0
    for name in CLUSTERS:
        for wname in WORKLOADS:
            tried += 1
            cluster, workload = os.path.join(root, "clusters", name), os.path.join(root, "workloads", wname)
            path = os.path.join(tmp, f"planned{tried}.yaml")
            out = subprocess.run([args.hetsim, "plan", "--cluster", cluster, "--workload", workload, "--time-limit",
                                  str(args.time_limit), "--emit-plan", path, "--format", "json"],
                                 capture_output=True, text=True, timeout=600)
            if out.returncode != 0 or not os.path.exists(path):
                continue
            c = compare(args.hetsim, cluster, workload, path, args.no_fold)
            if c is None:
                continue
            # A plan whose pipeline sends of one parity share a NIC carries a range, not a point:
            # `plan` gives the tokens/s if those sends coincide in every slot (docs/report.md,
            # "Pipeline sends of one parity through one NIC"), and the simulated step should lie
            # between the two figures. Its difference is then how far the simulation falls outside.
            best = json.loads(out.stdout)["plans"][0]
            lockstep = best.get("lockstep_tokens_per_s")
            range_note = ""
            if lockstep:
                ta, ts = c[1]["iteration_time_s"], c[2]["iteration_time_s"]
                tl = ta * best["tokens_per_s"] / lockstep
                c = (max(0.0, ta - ts, ts - tl) / ta, c[1], c[2])
                range_note = f" [sends of one parity share a NIC: analytic {ta:.3f}-{tl:.3f} s]"
            with open(path) as f:
                text = f.read()
            written = [l for l in text.splitlines() if l.startswith("# written by hetsim plan")]
            label = f"{name} {wname}: " + (written[0].split(": ", 1)[-1] if written else "")
            with open(workload) as f:
                w = yaml.safe_load(f)
            rows.append((*c, label + range_note, cluster, w, yaml.safe_load(text)))
    return rows, tried


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hetsim", default="build/cli/hetsim")
    ap.add_argument("--plans", type=int, default=60, help="feasible plans to compare")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--schedules", default="1f1b",
                    help="pipeline schedules to draw from, comma-separated: 1f1b, gpipe, interleaved (two chunks a stage)")
    ap.add_argument("--show", type=int, default=10, help="largest differences to print")
    ap.add_argument("--keep", default="", help="folder to keep the plans of the printed rows in")
    ap.add_argument("--no-fold", action="store_true",
                    help="simulate every replica and flow (simulate --no-fold): the simulator without folding's approximations")
    ap.add_argument("--planned", action="store_true", help="compare the planner's best plans instead of random ones")
    ap.add_argument("--time-limit", type=float, default=10, help="seconds of each planner search (--planned)")
    ap.add_argument("--max-diff", type=float, default=0,
                    help="exit 1 when a plan's engines differ by more than this fraction (0: report only)")
    args = ap.parse_args()
    args.schedules = [s.strip() for s in args.schedules.split(",") if s.strip()]
    if not args.schedules or any(s not in ("1f1b", "gpipe", "interleaved") for s in args.schedules):
        ap.error("--schedules: expected a comma-separated list of 1f1b, gpipe, interleaved")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        rows, tried = (planned_rows if args.planned else random_rows)(args, root, tmp)
    rows.sort(key=lambda r: -r[0])
    what = "planned (cluster, workload) pairs" if args.planned else "plans drawn"
    print(f"{len(rows)} feasible plans of {tried} {what}; |sim - analytic| / analytic: "
          f"mean {sum(r[0] for r in rows) / max(1, len(rows)):.1%}, "
          f"over 5% {sum(r[0] > 0.05 for r in rows)}, over 10% {sum(r[0] > 0.10 for r in rows)}")
    keys = ["compute_s", "tp_comm_s", "pp_comm_s", "dp_comm_s", "bubble_s"]
    for n, (d, a, s, label, cluster, workload, plan) in enumerate(rows[:args.show]):
        ba, bs = a["breakdown"], s["breakdown"]
        print(f"{d:6.1%}  analytic {a['iteration_time_s']:8.3f} s  sim {s['iteration_time_s']:8.3f} s  {label}")
        print("        " + "  ".join(f"{k[:-2]} {ba.get(k, 0):.3f}/{bs.get(k, 0):.3f}" for k in keys))
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            with open(os.path.join(args.keep, f"diff{n}.yaml"), "w") as f:
                f.write(f"# cluster: {cluster}\n")
                yaml.safe_dump(plan, f, sort_keys=False)
            with open(os.path.join(args.keep, f"diff{n}-workload.yaml"), "w") as f:
                yaml.safe_dump(workload, f, sort_keys=False)
    if args.max_diff > 0 and rows and rows[0][0] > args.max_diff:
        print(f"engine_diff: {rows[0][0]:.1%} apart, above --max-diff {args.max_diff:.1%}")
        return 1
    if not rows:
        print("engine_diff: no feasible plan compared")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
