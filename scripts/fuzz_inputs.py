#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Adversarial-input audit of the `hetsim` CLI (docs/inputs.md, "What the loader rejects").

Mutates every example input (clusters/, workloads/, plans/, GPU catalogs, a profile, a v1
and a v2 validation suite), runs the verbs that read it, and checks the project rule for bad
input: a compiler-style `file:line:col: error: field: what (expected ...)` on stderr and exit
code 2; never a crash (signal, abort, exit code other than 0/1/2, uncaught exception text),
never a hang (a per-run timeout), never a silently accepted bad value (a negative, NaN,
infinite or out-of-range number, a wrong type, a duplicate or misspelt key), never a
partial output file. Also checks misuse of the command line (missing options, directories
and missing files, unwritable output paths, conflicting or malformed plan options).

  /usr/bin/python3 scripts/fuzz_inputs.py --hetsim build/cli/hetsim [--seed 1] [--max-mutants N]

Prints one line per problem and a summary line; exit code 1 when any crash, hang, malformed
error or accepted bad input was seen. Deterministic for a given --seed and --max-mutants.
Needs no network; only PyYAML (to read the seed inputs).
"""
import argparse
import concurrent.futures
import csv
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import yaml

from fuzz_mutations import mutants_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL_WORKLOAD = "workloads/tiny-gpt.yaml"
SMALL_CLUSTER = "clusters/local-cpu.yaml"
GPU_CLUSTER = "clusters/dgx-a100.yaml"

# ---- seed inputs --------------------------------------------------------------------------


def find_validation_suites():
    """A version-1 and a version-2 suite: the shared ground-truth folder when present, else the repo's."""
    out = []
    for folder in (os.path.join(ROOT, "..", "shared", "validation"), "/work/shared/validation",
                   os.path.join(ROOT, "validation"), os.path.join(ROOT, "tests", "config", "suites")):
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if not name.endswith(".yaml") or name.startswith("bad"):
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            version = 2 if re.search(r"^format:\s*2\s*$", text, re.M) else 1
            if version not in [v for v, _ in out] and len(text) < 20000:
                out.append((version, os.path.relpath(path, ROOT)))
    return [p for _, p in sorted(out)]


def seed_inputs():
    """(path relative to ROOT, kind) of every input to mutate."""
    seeds = []
    for folder, kind in (("clusters", "cluster"), ("workloads", "workload"), ("plans", "plan"),
                         ("clusters/catalog", "gpu-catalog"), ("clusters/profiles", "profile"), ("sweeps", "sweep")):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if name.endswith(".yaml"):
                seeds.append((os.path.join(folder, name), kind))
    seeds += [(p, "suite") for p in find_validation_suites()]
    return seeds


def plan_header(path):
    """The cluster and workload a bundled plan names in its header comment (plans/README.md)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    cluster = re.search(r"^# cluster: (\S+)", text, re.M).group(1)
    workload = re.search(r"^# workload: (\S+)", text, re.M).group(1)
    return f"clusters/{cluster}.yaml", f"workloads/{workload}.yaml"


# ---- running and judging ------------------------------------------------------------------

CRASH_TEXT = re.compile(r"terminate called|what\(\)|Segmentation fault|AddressSanitizer|UndefinedBehaviorSanitizer|"
                        r"runtime error:|Aborted|core dumped|Traceback|stack trace|Assertion .* failed|YAML::")
ERROR_LINE = re.compile(r"^(?P<file>.+?)(?::(?P<line>\d+):(?P<col>\d+))?: error: (?P<rest>\S.*)$")
NONFINITE = re.compile(r"(?<![\w.])-?(nan|inf|infinity)(?![\w])", re.I)
# Problems of a whole file, which have no line:col to point at.
WHOLE_FILE = ("cannot open", "empty file", "larger than", "read error", "is a directory", "describe does not read")


def run(cmd, timeout):
    """(exit code or None on timeout, stdout, stderr, seconds). A run that times out is killed
    with its whole process group (simulate and plan --refine start children)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), time.monotonic() - t0
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None, "", "", time.monotonic() - t0


def judge(rc, out, err, files, must_reject, outputs, expect_rc=None):
    """Problems of one run: a list of (class, detail)."""
    probs = []
    if rc is None:
        return [("hang", "timed out")]
    if rc < 0 or rc not in (0, 1, 2):
        probs.append(("crash", f"signal {-rc}" if rc < 0 else f"exit code {rc}"))
    m = CRASH_TEXT.search(err)
    if m:
        probs.append(("crash", f"stderr has '{m.group(0)}'"))
    if rc == 1 and re.search(r"^hetsim( [a-z]+)?: error:", err, re.M) and files:
        probs.append(("uncaught", "bad input ended as an internal error (exit 1): " + err.strip().splitlines()[0][:160]))
    if rc == 2 and files:
        lines = [l for l in err.splitlines() if l.strip()]
        if not lines:
            probs.append(("malformed", "exit 2 with nothing on stderr"))
        for l in lines:
            em = ERROR_LINE.match(l)
            if not em or em.group("file") not in files:
                probs.append(("malformed", "not `file:line:col: error: ...`: " + l[:160]))
                break
            if em.group("line") is None and not any(w in l for w in WHOLE_FILE):
                probs.append(("no-position", l[:160]))
                break
            if em.group("line") is not None and (int(em.group("line")) < 1 or int(em.group("col")) < 1):
                probs.append(("malformed", "position not 1-based: " + l[:160]))
                break
    if expect_rc is not None and rc != expect_rc:
        probs.append(("wrong-exit", f"exit {rc}, expected {expect_rc}: {(err.strip().splitlines() or [''])[0][:160]}"))
    if must_reject and rc in (0, 1) and not probs:
        probs.append(("accepted", f"bad input not rejected (exit {rc})"))
    if rc == 0 and NONFINITE.search(out):
        probs.append(("nonfinite-output", "stdout has " + NONFINITE.search(out).group(0)))
    for path in outputs:
        # Bad input (exit 2) writes nothing; a result (exit 0, or 1: infeasible, a row that failed)
        # writes whole files only, and no temporary is left behind.
        if rc == 2 and os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
            probs.append(("partial-output", f"{os.path.basename(path)} written although the input was rejected"))
        written = [path] if os.path.isfile(path) else [os.path.join(d, n) for d, _, ns in os.walk(path) for n in ns]
        parent = os.path.dirname(path)
        if os.path.isdir(parent):
            written += [os.path.join(parent, n) for n in os.listdir(parent) if n.startswith(os.path.basename(path) + ".tmp")]
        for w in written:
            if ".tmp" in os.path.basename(w):
                probs.append(("partial-output", f"temporary {os.path.basename(w)} left behind"))
                continue
            try:
                with open(w, encoding="utf-8") as f:
                    if w.endswith(".csv"):  # every row has the header's columns
                        rows = list(csv.reader(f))
                        if any(len(r) != len(rows[0]) for r in rows):
                            raise ValueError("rows of unequal length")
                    elif w.endswith(".jsonl"):  # every line a whole JSON object
                        for line in f:
                            json.loads(line)
                    else:
                        json.load(f) if w.endswith(".json") else yaml.safe_load(f)
            except Exception as e:
                probs.append(("partial-output", f"{os.path.basename(w)} is not a whole file: {str(e)[:80]}"))
    return probs


def commands_for(kind, seed, mfile, tmp, rng):
    """The verbs that read an input of this kind: (argv after hetsim, files named in errors, outputs)."""
    if kind == "cluster":
        emit = os.path.join(tmp, "best.yaml")
        return [(["describe", mfile], [mfile], []),
                (["predict", "--cluster", mfile, "--workload", SMALL_WORKLOAD, "--tp", "1", "--pp", "1", "--dp", "1",
                  "--micro", "1", "--format", "json"], [mfile], []),
                # --time-limit: a mutant may be a valid but huge cluster; the search must not read as a hang
                (["plan", "--cluster", mfile, "--workload", SMALL_WORKLOAD, "--top", "1", "--time-limit", "2",
                  "--emit-plan", emit], [mfile], [emit])]
    if kind == "workload":
        return [(["describe", "--format", "json", mfile], [mfile], []),
                (["predict", "--cluster", GPU_CLUSTER, "--workload", mfile, "--tp", "1", "--pp", "1", "--dp", "2"], [mfile], []),
                (["plan", "--cluster", SMALL_CLUSTER, "--workload", mfile, "--top", "1", "--time-limit", "2"], [mfile], [])]
    if kind == "plan":
        c, w = plan_header(seed)
        trace = os.path.join(tmp, "trace.json")
        verbs = [(["describe", mfile, "--cluster", c, "--workload", w], [mfile], []),
                 (["predict", "--cluster", c, "--workload", w, "--plan", mfile, "--format", "json", "--ops"], [mfile], [])]
        if "local-cpu" in c:  # the simulator and the engine on a small cluster only: big ones take seconds
            verbs.append((["simulate", "--cluster", c, "--workload", w, "--plan", mfile, "--trace", trace], [mfile], [trace]))
            verbs.append((["run", "--cluster", c, "--workload", w, "--plan", mfile, "--steps", "2"], [mfile], []))
            verbs.append((["predict", "--cluster", c, "--workload", w, "--plan", mfile, "--as-executed"], [mfile], []))
        return verbs
    if kind == "gpu-catalog":
        return [(["describe", mfile], [mfile], [])]
    if kind == "profile":
        return [(["predict", "--profile", mfile, "--cluster", SMALL_CLUSTER, "--workload", SMALL_WORKLOAD,
                  "--tp", "1", "--pp", "1", "--dp", "1", "--micro", "1"], [mfile], []),
                (["describe", mfile], [mfile], [])]
    if kind == "sweep":
        out = os.path.join(tmp, "results.csv")
        return [(["describe", mfile], [mfile], []),
                (["sweep", mfile, "--out", out, "--time-limit", "0.5", "--threads", "1", "--format", "json"], [mfile],
                 [out, out + ".checkpoint.jsonl"])]
    if kind == "suite":
        emit = os.path.join(tmp, "emitted")
        fitted = os.path.join(tmp, "fitted.yaml")
        return [(["validate", mfile, "--format", "json", "--emit-dir", emit], [mfile], [emit]),
                (["fit", mfile, "--out", fitted], [mfile], [fitted])]
    raise ValueError(kind)


def run_mutant(job):
    hetsim, timeout, seed, kind, cls, data, must, index = job
    tmp = tempfile.mkdtemp(prefix="hetsim-fuzz-")
    try:
        name = os.path.basename(seed)
        mfile = os.path.join(tmp, name)
        if kind == "sweep":  # its cluster and workloads are named relative to its folder (../clusters/...)
            os.makedirs(os.path.join(tmp, "sweeps"))
            for folder in ("clusters", "workloads"):
                os.symlink(os.path.join(ROOT, folder), os.path.join(tmp, folder))
            mfile = os.path.join(tmp, "sweeps", name)
        with open(mfile, "wb") as f:
            f.write(data)
        results = []
        for argv, files, outputs in commands_for(kind, seed, mfile, tmp, random.Random(index)):
            rc, out, err, secs = run([hetsim] + argv, timeout)
            probs = judge(rc, out, err, files, must, outputs)
            shown = " ".join(argv).replace(mfile, f"<{cls} of {seed}>")
            results.append((shown, rc, secs, probs, err.strip().splitlines()[:2]))
            for o in outputs:
                shutil.rmtree(o, ignore_errors=True) if os.path.isdir(o) else (os.path.exists(o) and os.remove(o))
        return seed, cls, data if any(r[3] for r in results) else None, results
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- command-line misuse ------------------------------------------------------------------


def misuse_cases(tmp):
    """(argv, files that may be named in errors, expected exit code or None for 1-or-2, outputs)."""
    plan = "plans/local-cpu-tp2-pp2-dp1.yaml"
    cw = ["--cluster", SMALL_CLUSTER, "--workload", SMALL_WORKLOAD]
    missing_dir = os.path.join(tmp, "no", "such", "dir")
    unreadable = os.path.join(tmp, "unreadable.yaml")
    shutil.copy(os.path.join(ROOT, SMALL_CLUSTER), unreadable)
    os.chmod(unreadable, 0)
    a_file = os.path.join(tmp, "a-file")
    open(a_file, "w").close()
    cases = [
        (["predict"], [], 2, []),
        (["predict", "--cluster", SMALL_CLUSTER], [], 2, []),
        (["predict"] + cw, [], 2, []),  # neither --plan nor the shorthand
        (["predict"] + cw + ["--plan", plan, "--tp", "2"], [], 2, []),
        (["simulate"] + cw + ["--plan", plan, "--dp", "1"], [], 2, []),
        (["describe"], [], 2, []),
        (["validate"], [], 2, []),
        (["plan", "--cluster", SMALL_CLUSTER], [], 2, []),
        (["describe", "no/such/file.yaml"], ["no/such/file.yaml"], 2, []),
        (["predict", "--cluster", "no/such.yaml", "--workload", SMALL_WORKLOAD, "--tp", "1"], ["no/such.yaml"], 2, []),
        (["predict", "--cluster", "clusters", "--workload", "no/such.yaml", "--tp", "1"], ["clusters", "no/such.yaml"], 2, []),
        (["check", "--cluster", SMALL_CLUSTER, "--workload", SMALL_WORKLOAD, "--plan", "no/plan.yaml", "--profile", "no/p.yaml"],
         ["no/plan.yaml", "no/p.yaml"], 2, []),
        (["describe", "clusters"], ["clusters"], 2, []),
        (["describe", "clusters/"], ["clusters/"], 2, []),
        (["predict", "--cluster", "clusters", "--workload", SMALL_WORKLOAD, "--tp", "1"], ["clusters"], 2, []),
        (["validate", "validation"], ["validation"], 2, []),
        (["describe", "/dev/null"], ["/dev/null"], 2, []),
        (["plan", "--cluster", SMALL_CLUSTER, "--workload", SMALL_WORKLOAD, "--profile", "clusters"], ["clusters"], 2, []),
        (["plan"] + cw + ["--emit-plan", os.path.join(missing_dir, "p.yaml")], [], None, [os.path.join(missing_dir, "p.yaml")]),
        (["plan"] + cw + ["--emit-plan", tmp], [], None, []),
        (["simulate"] + cw + ["--tp", "1", "--micro", "1", "--trace", os.path.join(missing_dir, "t.json")], [], None,
         [os.path.join(missing_dir, "t.json")]),
        (["validate", "tests/config/suites/tiny-v2.yaml", "--emit-dir", os.path.join(a_file, "sub")], [], None, []),
        (["run"] + cw + ["--tp", "1", "--out", os.path.join(missing_dir, "m.json")], [], None, [os.path.join(missing_dir, "m.json")]),
        (["calibrate", "--cluster", SMALL_CLUSTER, "--quick", "--out", os.path.join(missing_dir, "p.yaml")], [], None,
         [os.path.join(missing_dir, "p.yaml")]),
        # --refit runs nothing: a checkpoint that is missing, a folder, not JSON lines, or of
        # another grid is bad input, and no profile is written.
        (["calibrate", "--cluster", SMALL_CLUSTER, "--refit", "--out", os.path.join(tmp, "refit.yaml"),
          "--checkpoint", os.path.join(tmp, "none.jsonl")], [], 2, [os.path.join(tmp, "refit.yaml")]),
        (["calibrate", "--cluster", SMALL_CLUSTER, "--refit", "--out", os.path.join(tmp, "refit.yaml"),
          "--checkpoint", "clusters"], [], 2, [os.path.join(tmp, "refit.yaml")]),
        (["calibrate", "--cluster", SMALL_CLUSTER, "--refit", "--out", os.path.join(tmp, "refit.yaml"),
          "--checkpoint", a_file], [], 2, [os.path.join(tmp, "refit.yaml")]),
        (["calibrate", "--cluster", SMALL_CLUSTER, "--refit", "--out", os.path.join(tmp, "refit.yaml"),
          "--checkpoint", "README.md"], [], 2, [os.path.join(tmp, "refit.yaml")]),
        (["calibrate", "--cluster", SMALL_CLUSTER, "--refit", "--out", os.path.join(tmp, "refit.yaml"),
          "--checkpoint", "tests/calibration/fixtures/h200_exec_samples.jsonl"], [], 2, [os.path.join(tmp, "refit.yaml")]),
        (["plan"] + cw + ["--top", "0"], [], 2, []),
        (["plan"] + cw + ["--top", "-3"], [], 2, []),
        (["plan"] + cw + ["--refine", "-1"], [], 2, []),
        (["plan"] + cw + ["--objective", "speed"], [], 2, []),
        (["plan"] + cw + ["--budget-per-hour", "-5", "--objective", "budget"], [], 2, []),
        (["plan"] + cw + ["--budget-per-hour", "nan", "--objective", "budget"], [], 2, []),
        (["plan"] + cw + ["--budget-per-hour", "inf", "--objective", "budget"], [], 2, []),
        (["plan"] + cw + ["--tp-degrees", "2,-4"], [], 2, []),
        (["plan"] + cw + ["--micro-batches", "1e9"], [], 2, []),
        (["plan"] + cw + ["--interleave", "0"], [], 2, []),
        (["plan"] + cw + ["--recompute", "full,partial"], [], 2, []),
        (["plan"] + cw + ["--zero", "2"], [], 2, []),
        (["plan"] + cw + ["--zero", "nan"], [], 2, []),
        (["check"] + cw + ["--plan", plan, "--profile", "clusters/profiles/local-cpu.yaml", "--tolerance", "nan"], [], 2, []),
        (["check"] + cw + ["--plan", plan, "--profile", "clusters/profiles/local-cpu.yaml", "--tolerance", "-1"], [], 2, []),
        (["check"] + cw + ["--plan", plan, "--profile", "clusters/profiles/local-cpu.yaml", "--steps", "0"], [], 2, []),
        (["run"] + cw + ["--tp", "1", "--lr", "nan"], [], 2, []),
        (["run"] + cw + ["--tp", "1", "--lr", "inf"], [], 2, []),
        (["run"] + cw + ["--tp", "1", "--steps", "0"], [], 2, []),
        (["run"] + cw + ["--tp", "1", "--steps", "-1"], [], 2, []),
        (["run"] + cw + ["--tp", "1", "--inject-fault", "x:y"], [], 2, []),
        (["run"] + cw + ["--tp", "1", "--inject-fault", "99999999999"], [], 2, []),
        (["run"] + cw + ["--tp", "1", "--seed", "-1"], [], 2, []),
        (["simulate"] + cw + ["--tp", "1", "--grad-buckets", "0"], [], 2, []),
        (["predict"] + cw + ["--tp", "1", "--engine", "nope"], [], 2, []),
        (["validate", "tests/config/suites/tiny-v2.yaml", "--engine", "nope"], [], 2, []),
        (["fit"], [], 2, []),
        (["fit", "tests/config/suites/tiny-v2.yaml", "--params", "speed"], [], 2, []),
        (["fit", "tests/config/suites/tiny-v2.yaml", "--params", ""], [], 2, []),
        (["fit", "tests/config/suites/tiny-v2.yaml", "--out", os.path.join(missing_dir, "p.yaml")], [], None,
         [os.path.join(missing_dir, "p.yaml")]),
        (["validate", "tests/config/suites/tiny-v2.yaml", "--profile", "clusters"], ["clusters"], 2, []),
        (["predict"] + cw + ["--tp", "1", "--interleave", "0"], [], 2, []),
        (["predict"] + cw + ["--tp", "1", "--zero", "4"], [], 2, []),
        (["predict"] + cw + ["--tp", "1", "--zero", "-1"], [], 2, []),
        (["predict"] + cw + ["--tp", "1", "--schedule", "zigzag"], [], 2, []),
        (["sweep"], [], 2, []),
        (["sweep", "sweeps"], ["sweeps"], 2, []),
        (["sweep", SMALL_CLUSTER], [SMALL_CLUSTER], 2, []),  # a cluster is not a sweep
        (["sweep", "sweeps/h100-mi300x-mix.yaml", "--out", "sweeps"], [], 2, []),
        (["sweep", "sweeps/h100-mi300x-mix.yaml", "--out", os.path.join(missing_dir, "r.csv")], [], 2,
         [os.path.join(missing_dir, "r.csv")]),
        (["sweep", "sweeps/h100-mi300x-mix.yaml", "--time-limit", "nan"], [], 2, []),
        (["sweep", "sweeps/h100-mi300x-mix.yaml", "--threads", "-1"], [], 2, []),
        (["sweep", "sweeps/h100-mi300x-mix.yaml", "--format", "xml"], [], 2, []),
        (["sweep", "sweeps/h100-mi300x-mix.yaml", "--profile", "clusters"], ["clusters"], 2, []),
    ]
    for opt in ("--tp", "--pp", "--dp", "--micro"):
        for bad in ("0", "-1", "abc", "1.5", "", "99999999999", "nan", "0x10"):
            cases.append((["predict"] + cw + ["--tp", "1", opt, bad] if opt != "--tp" else ["predict"] + cw + [opt, bad],
                          [], 2, []))
    # Degrees the cluster cannot hold and a micro-batch that does not divide the batch: a
    # result with a reason (exit 1), never a crash or a plan that uses GPUs that do not exist.
    cases += [
        (["predict"] + cw + ["--dp", "5"], [], 1, []),
        (["predict"] + cw + ["--tp", "2", "--pp", "2", "--dp", "2"], [], 1, []),
        (["predict"] + cw + ["--tp", "1000000"], [], 1, []),
        (["predict"] + cw + ["--tp", "1", "--micro", "3"], [], 1, []),
        (["predict"] + cw + ["--tp", "1", "--micro", "1000"], [], 1, []),
        (["predict"] + cw + ["--dp", "16"], [], 1, []),
        (["simulate"] + cw + ["--tp", "1", "--micro", "3"], [], 1, []),
        (["run"] + cw + ["--tp", "1", "--micro", "3"], [], 1, []),
        (["predict"] + cw + ["--pp", "3"], [], 1, []),
        (["predict"] + cw + ["--tp", "3"], [], 1, []),
        (["predict", "--cluster", GPU_CLUSTER, "--workload", SMALL_WORKLOAD, "--tp", "8", "--dp", "5"], [], 1, []),
    ]
    return cases, unreadable


def run_misuse(hetsim, timeout, tmp):
    cases, unreadable = misuse_cases(tmp)
    results = []
    for argv, files, expect, outputs in cases:
        rc, out, err, secs = run([hetsim] + argv, timeout)
        probs = judge(rc, out, err, files, False, outputs, expect)
        if expect is None and rc == 0:
            probs.append(("accepted", "an impossible output path was accepted"))
        if rc in (1, 2) and not err.strip():
            probs.append(("silent-failure", f"exit {rc} with nothing on stderr"))
        results.append((" ".join(argv).replace(tmp, "$TMP"), rc, secs, probs, err.strip().splitlines()[:2]))
    # An unreadable file: root reads through mode 000, so run as nobody when we are root.
    argv = ["describe", unreadable]
    prefix = []
    if os.geteuid() == 0 and shutil.which("setpriv"):
        os.chmod(tmp, 0o755)
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    rc, out, err, secs = run(prefix + [hetsim] + argv, timeout)
    results.append((" ".join(argv).replace(tmp, "$TMP") + " (mode 000)", rc, secs,
                    judge(rc, out, err, [unreadable], False, [], 2), err.strip().splitlines()[:2]))
    return results


# ---- main ---------------------------------------------------------------------------------


class Tally:
    """Problems by class, the lines that report them, and the number of runs."""

    def __init__(self, verbose):
        self.counts, self.lines, self.runs, self.verbose = {}, [], 0, verbose

    def add(self, results):
        for shown, rc, secs, probs, err in results:
            self.runs += 1
            for pcls, detail in probs:
                self.counts[pcls] = self.counts.get(pcls, 0) + 1
                self.lines.append(f"{pcls}: hetsim {shown}: {detail}")
            if self.verbose:
                print(f"rc={rc} {secs:.2f}s hetsim {shown} {err[:1]}")


def interleave(groups, rng):
    """Round-robin over shuffled groups, so a small --max-mutants still covers every file and class."""
    keys = sorted(groups)
    rng.shuffle(keys)
    for k in keys:
        rng.shuffle(groups[k])
    out, i = [], 0
    while any(i < len(groups[k]) for k in keys):
        out += [groups[k][i] for k in keys if i < len(groups[k])]
        i += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--hetsim", default=os.path.join(ROOT, "build", "cli", "hetsim"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-mutants", type=int, default=2000, help="mutants run (sampled over files and classes)")
    # A sanitizer build runs several times slower: it sets HETSIM_CLI_TIMEOUT_S (scripts/asan_tests.sh),
    # as for the CLI tests (tests/cli/run_cli.cmake).
    ap.add_argument("--timeout", type=float, default=float(os.environ.get("HETSIM_CLI_TIMEOUT_S", 20)),
                    help="seconds per run; longer counts as a hang (default 20, or $HETSIM_CLI_TIMEOUT_S)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="regex: seed files to mutate")
    ap.add_argument("--no-misuse", action="store_true", help="skip the command-line misuse checks")
    ap.add_argument("--keep", default="", help="write each failing mutant to this folder")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    hetsim = os.path.abspath(a.hetsim)
    if not os.access(hetsim, os.X_OK):
        sys.exit(f"fuzz_inputs: {hetsim} is not an executable (build the hetsim target first)")
    rng = random.Random(a.seed)

    groups = {}
    for seed, kind in seed_inputs():
        if a.only and not re.search(a.only, seed):
            continue
        for cls, data, must in mutants_of(seed, random.Random(f"{a.seed}:{seed}")):
            groups.setdefault((seed, cls), []).append((seed, kind, cls, data, must))
    pool = interleave(groups, rng)
    total = len(pool)
    jobs = [(hetsim, a.timeout, s, k, c, d, m, i) for i, (s, k, c, d, m) in enumerate(pool[: a.max_mutants])]

    mutants, misuse = Tally(a.verbose), Tally(a.verbose)
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for seed, cls, data, results in ex.map(run_mutant, jobs):
            mutants.add(results)
            if data is not None and a.keep:
                os.makedirs(a.keep, exist_ok=True)
                with open(os.path.join(a.keep, f"{len(mutants.lines):05d}-{cls}-{os.path.basename(seed)}"), "wb") as f:
                    f.write(data)
    if not a.no_misuse:
        tmp = tempfile.mkdtemp(prefix="hetsim-fuzz-cli-")
        try:
            misuse.add(run_misuse(hetsim, a.timeout, tmp))
        finally:
            subprocess.run(["chmod", "-R", "u+rwX", tmp])
            shutil.rmtree(tmp, ignore_errors=True)
    counts = {k: mutants.counts.get(k, 0) + misuse.counts.get(k, 0) for k in set(mutants.counts) | set(misuse.counts)}
    for line in mutants.lines + misuse.lines:
        print(line)
    others = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k not in ("crash", "hang", "malformed"))
    print(f"fuzz_inputs: seed {a.seed}: {len(jobs)} mutants of {total} ({mutants.runs} runs) + {misuse.runs} misuse runs "
          f"in {time.monotonic() - t0:.0f}s: crashes {counts.get('crash', 0)}, hangs {counts.get('hang', 0)}, "
          f"malformed errors {counts.get('malformed', 0)}" + (f"; {others}" if others else "; no other problems"))
    return 1 if counts else 0  # every class of problem is a defect


if __name__ == "__main__":
    sys.exit(main())
