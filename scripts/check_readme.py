#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Keeps README.md true: runs every `$ hetsim ...` command of its code blocks and checks that the
output printed under it is what hetsim prints now.

Each printed line must appear in the real output, in order, and a block shows the output whole
where it does not say otherwise: a line of `...` stands for lines left out (between two shown
lines, or at the end of what the command prints on stdout); a printed line missing without one
is reported, as a line shown that is no longer printed is. Lines that change from run to run by nature are not
compared: the planner's `search:` line (thread timing), and the verbs that measure wall time
(`run`, `calibrate`, `check`) are not run at all. Commands that read
`../shared/validation` are skipped with a message when that folder is absent.

The commands run in a scratch folder that links the repository's input folders, so files they
write (`--out mix.csv`) stay out of the checkout.

Usage: check_readme.py --hetsim build/cli/hetsim [--readme README.md] [--shared DIR]
       check_readme.py --self-test
Exit code 0 when every block matches, 1 otherwise (the differences are printed).
"""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMED_VERBS = {"run", "calibrate", "check"}
VOLATILE = [re.compile(r"^search: ")]


def commands(readme_text):
    """(code block number, line number, command, expected lines) for each `$ hetsim` command."""
    lines = readme_text.split("\n")
    i = block = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            block += 1
        if not lines[i].startswith("$ hetsim"):
            i += 1
            continue
        start = i + 1
        parts = []
        while True:
            line = lines[i]
            i += 1
            parts.append(line.lstrip("$").strip().rstrip("\\").strip())
            if not line.rstrip().endswith("\\"):
                break
        expected = []
        while i < len(lines) and not lines[i].startswith("```") and not lines[i].startswith("$ hetsim"):
            expected.append(lines[i])
            i += 1
        yield block, start, " ".join(parts), expected


def normalise(line):
    return " ".join(line.split())


def is_compared(line):
    return bool(line) and not any(p.match(line) for p in VOLATILE)


def missing_lines(expected, got):
    """Expected lines not found, in order, among the output lines."""
    return compare(expected, got, len(got))[0]


def compare(expected, got, stdout_lines):
    """(expected lines not found in order among the output lines, output lines the block leaves
    out without a `...` in their place). `got` holds stdout's lines, then stderr's; those after
    the last shown line count as left out only from stdout (stderr's progress lines may follow)."""
    out = [normalise(g) for g in got]
    at, missing, left_out = 0, [], []
    previous = None  # index in `out` of the last shown line found, None after a `...`
    for line in expected:
        want = normalise(line)
        if want == "...":
            previous = None
            continue
        if not is_compared(want):
            continue
        try:
            found = out.index(want, at)
        except ValueError:
            missing.append(line)
            continue
        if previous is not None:
            left_out += [got[k] for k in range(previous + 1, found) if is_compared(out[k])]
        previous, at = found, found + 1
    shown = [normalise(e) for e in expected if normalise(e)]
    ends_with_ellipsis = bool(shown) and shown[-1] == "..."
    if previous is not None and not ends_with_ellipsis:
        left_out += [got[k] for k in range(previous + 1, stdout_lines) if is_compared(out[k])]
    return missing, left_out


def checkout_entries():
    """The repository's top-level entries that git tracks (a `mix.csv` and its checkpoint left in
    the checkout by an earlier sweep made the README's sweep resume instead of run); every entry
    but build/ and .git when git is not at hand."""
    try:
        listed = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True, check=True).stdout
        names = sorted({path.split("/")[0] for path in listed.splitlines() if path})
        if names:
            return names
    except (OSError, subprocess.CalledProcessError):
        pass
    return [name for name in os.listdir(ROOT) if name not in ("build", ".git")]


def scratch_checkout(shared):
    """A folder `<tmp>/checkout` linking the repository's inputs, with `<tmp>/shared` beside it."""
    top = tempfile.mkdtemp(prefix="hetsim-readme-")
    checkout = os.path.join(top, "checkout")
    os.mkdir(checkout)
    for name in checkout_entries():
        os.symlink(os.path.join(ROOT, name), os.path.join(checkout, name))
    if shared and os.path.isdir(shared):
        os.symlink(os.path.abspath(shared), os.path.join(top, "shared"))
    return checkout


def self_test():
    """The comparison's rules on small cases (ctest `scripts_check_readme_self_test`)."""
    out = ["a", "b", "c", "d"]
    cases = [  # (shown, printed, lines on stdout, expected (missing, left out))
        (["a", "b", "c", "d"], out, 4, ([], [])),
        (["a", "c", "d"], out, 4, ([], ["b"])),            # a line left out without a `...`
        (["a", "...", "c", "d"], out, 4, ([], [])),        # ... stands for it
        (["a", "b"], out, 4, ([], ["c", "d"])),            # stdout's end left out
        (["a", "b", "..."], out, 4, ([], [])),
        (["a", "b"], out, 2, ([], [])),                    # what follows is stderr (progress lines)
        (["a", "x", "d"], out, 4, (["x"], ["b", "c"])),    # a line no longer printed
        (["search: 1 s", "a"], ["a", "search: 2 s"], 2, ([], [])),  # volatile lines are not compared
    ]
    failed = 0
    for shown, printed, stdout_lines, want in cases:
        got = compare(shown, printed, stdout_lines)
        if got != want:
            failed += 1
            print(f"self-test: {shown} against {printed} ({stdout_lines} on stdout): {got}, expected {want}")
    print(f"check_readme self-test: {len(cases)} cases, {failed} failed")
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hetsim", required=True)
    ap.add_argument("--readme", nargs="+",
                    default=[os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) +
                    sorted(glob.glob(os.path.join(ROOT, "*", "README.md"))))
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    args = ap.parse_args()
    hetsim = os.path.abspath(args.hetsim)
    shared_validation = os.path.join(args.shared, "validation")
    cwd = scratch_checkout(args.shared)
    try:
        return check(args.readme, hetsim, cwd, shared_validation)
    finally:
        shutil.rmtree(os.path.dirname(cwd), ignore_errors=True)


def check(readmes, hetsim, cwd, shared_validation):
    checked = failed = skipped = 0
    for readme in readmes:
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        c, f_, s = check_file(os.path.relpath(readme, ROOT), text, hetsim, cwd, shared_validation)
        checked, failed, skipped = checked + c, failed + f_, skipped + s
    print(f"check_readme: {checked} commands checked, {failed} differ, {skipped} skipped")
    return 1 if failed else 0


def check_file(name, text, hetsim, cwd, shared_validation):
    checked = failed = skipped = 0
    skipped_block = None  # a later command of a block may read what a skipped one writes
    for block, line_no, command, expected in commands(text):
        argv = shlex.split(command)[1:]
        where = f"{name}:{line_no}"
        if argv and argv[0] in TIMED_VERBS:
            continue
        if block == skipped_block or ("../shared/" in command and not os.path.isdir(shared_validation)):
            print(f"{where}: skipped (no {shared_validation}): hetsim {' '.join(argv)}")
            skipped += 1
            skipped_block = block
            continue
        run = subprocess.run([hetsim] + argv, cwd=cwd, capture_output=True, text=True, timeout=600)
        stdout = run.stdout.split("\n")
        got = stdout + run.stderr.split("\n")
        missing, left_out = compare(expected, got, len(stdout))
        checked += 1
        if missing or left_out:
            failed += 1
        if missing:
            print(f"{where}: README shows lines that `hetsim {' '.join(argv)}` no longer prints:")
            for m in missing[:10]:
                print(f"  README: {m}")
            print("  now prints:")
            for g in got[:40]:
                print(f"    {g}")
        if left_out:
            print(f"{where}: README leaves out lines that `hetsim {' '.join(argv)}` prints (show them, or put "
                  "a line `...` in their place):")
            for g in left_out[:10]:
                print(f"    {g}")
    return checked, failed, skipped


if __name__ == "__main__":
    sys.exit(main())
