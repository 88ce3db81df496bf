#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Every ```yaml example of docs/inputs.md loads as written: `hetsim describe` of each exits 0.

The annotated reference examples are what users copy; one of them (a cluster whose fat-tree had a
switch-only key and whose link named an undefined zone) failed to load for weeks (s58 docs hunt).
Each block is written to a scratch folder at the repository's top level, so that a sweep's
`../clusters/...` paths and a plan's `# cluster:` header resolve as they do for the bundled inputs.

With --tutorial the blocks are the steps of one walk-through (docs/adding-inputs.md): each is
written where the tutorial tells the user to put it, clusters/NAME.yaml, workloads/NAME.yaml,
sweeps/NAME.yaml (NAME from its `name:`), under a scratch copy of the layout, so that its sweep
finds the cluster and workload the earlier steps made.

Usage: /usr/bin/python3 scripts/check_doc_examples.py --hetsim build/cli/hetsim [--doc docs/inputs.md]
       /usr/bin/python3 scripts/check_doc_examples.py --hetsim build/cli/hetsim --doc docs/adding-inputs.md --tutorial
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Where docs/adding-inputs.md has the user put each kind of file.
TUTORIAL_FOLDERS = {"cluster": "clusters", "workload": "workloads", "sweep": "sweeps"}


def yaml_blocks(text):
    """(line of the opening fence, block text) of every ```yaml block."""
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in re.finditer(r"^```yaml\n(.*?)^```", text, re.M | re.S)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hetsim", required=True)
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "inputs.md"))
    ap.add_argument("--tutorial", action="store_true", help="write each block where the walk-through puts it")
    args = ap.parse_args()
    hetsim = os.path.abspath(args.hetsim)
    with open(args.doc, encoding="utf-8") as f:
        blocks = yaml_blocks(f.read())
    if not blocks:
        print(f"check_doc_examples: no yaml blocks in {args.doc}")
        return 1
    scratch = tempfile.mkdtemp(prefix=".doc-examples-", dir=ROOT)
    failed = 0
    try:
        for i, (line, text) in enumerate(blocks):
            kind = next((l.split(":", 1)[1].strip() for l in text.splitlines() if l.startswith("kind:")), "plan")
            path = os.path.join(scratch, f"example-{i}.yaml")
            if args.tutorial and kind in TUTORIAL_FOLDERS:
                name = next((l.split(":", 1)[1].strip() for l in text.splitlines() if l.startswith("name:")), f"example-{i}")
                os.makedirs(os.path.join(scratch, TUTORIAL_FOLDERS[kind]), exist_ok=True)
                path = os.path.join(scratch, TUTORIAL_FOLDERS[kind], f"{name}.yaml")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            p = subprocess.run([hetsim, "describe", path], capture_output=True, text=True, timeout=120, cwd=ROOT)
            if p.returncode == 0:
                print(f"ok    {os.path.relpath(args.doc, ROOT)}:{line}: {kind}")
            else:
                failed += 1
                print(f"FAIL  {os.path.relpath(args.doc, ROOT)}:{line}: {kind}: exit {p.returncode}\n{p.stderr.strip()}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"check_doc_examples: {len(blocks)} examples, {failed} do not load")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
