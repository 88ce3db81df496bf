#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Mutants of one input file for scripts/fuzz_inputs.py: text-level damage (truncation, tabs,
bad indentation, stray bytes) and structure-level damage (every value replaced by a wrong
type, a negative, NaN, an out-of-range number or an unknown unit; keys misspelt, duplicated,
dropped), each tagged with whether the CLI must reject it.

  from fuzz_mutations import mutants_of
  mutants_of("clusters/dgx-a100.yaml", random.Random(1)) -> [(name, bytes, must_reject), ...]
"""
import json
import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---- a small YAML emitter (duplicate keys and raw scalars are needed, PyYAML cannot) --------


class Raw(str):
    """Scalar text written verbatim (`1e400`, `.nan`, `[1, 2]`)."""


class Pairs(list):
    """A map written from (key, value) pairs: allows a key twice."""


PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


def scalar_text(v):
    if isinstance(v, Raw):
        return str(v)
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v))  # a JSON string is a YAML double-quoted scalar


def key_text(k):
    k = str(k)
    return k if PLAIN_KEY.match(k) else json.dumps(k)


def items_of(m):
    return list(m) if isinstance(m, Pairs) else list(m.items())


def emit(v, indent=0):
    pad = " " * indent
    lines = []
    if isinstance(v, (dict, Pairs)):
        if not items_of(v):
            return [pad + "{}"]
        for k, x in items_of(v):
            if isinstance(x, (dict, Pairs, list)) and (items_of(x) if not isinstance(x, list) else x):
                lines.append(f"{pad}{key_text(k)}:")
                lines += emit(x, indent + 2)
            else:
                lines.append(f"{pad}{key_text(k)}: {scalar_text(x) if not isinstance(x, (dict, Pairs, list)) else ('[]' if isinstance(x, list) else '{}')}")
        return lines
    if isinstance(v, list):
        if not v:
            return [pad + "[]"]
        for x in v:
            if isinstance(x, (dict, Pairs, list)):
                lines.append(pad + "-")
                lines += emit(x, indent + 2)
            else:
                lines.append(f"{pad}- {scalar_text(x)}")
        return lines
    return [pad + scalar_text(v)]


def dump(v):
    return ("\n".join(emit(v)) + "\n").encode("utf-8")


# ---- mutations ------------------------------------------------------------------------------

QUANTITY = re.compile(r"^\s*\$?([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)\s*(.*)$")


def walk(v, path=()):
    """Yields (path, value) of every node; a path is a tuple of map keys and list indices."""
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from walk(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from walk(x, path + (i,))


def replaced(doc, path, fn):
    """A deep copy of doc where the node at path is fn(node) (fn returns a new node)."""
    if not path:
        return fn(doc)
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {k: (replaced(x, rest, fn) if k == head else x) for k, x in doc.items()}
    out = list(doc)
    out[head] = replaced(doc[head], rest, fn)
    return out


def typo(key):
    """A misspelling of a key (dropped letter, or two letters swapped)."""
    k = str(key)
    if len(k) >= 4:
        return k[:-2] + k[-1] + k[-2] if k[-1] != k[-2] else k[:-1]
    return k + "s"


def value_mutants(v):
    """(class, new value, must_reject) for a scalar value. must_reject: no valid input has it."""
    # A list may be fine where a scalar was (a plan stage's `gpus` takes a selector or indices).
    out = [("type-string", "fuzz", False), ("type-list", Raw("[1, 2]"), False), ("type-map", Raw("{a: 1}"), True),
           ("type-bool", True, False), ("null", None, False), ("empty-string", "", False)]
    is_number = isinstance(v, (int, float)) and not isinstance(v, bool)
    q = QUANTITY.match(v) if isinstance(v, str) else None
    try:
        if q:
            float(q.group(1))
    except ValueError:  # a path such as "../clusters/x.yaml" is no quantity
        q = None
    if is_number:
        out += [("negative", -abs(v) - 1, True), ("zero", 0, False), ("huge", Raw("1e400"), True),
                ("huge", Raw("-1e400"), True), ("huge", Raw("1e30"), False), ("nan", Raw(".nan"), True),
                ("nan", "nan", False), ("inf", Raw(".inf"), True), ("inf", Raw("-.inf"), True),
                ("inf", "inf", False), ("unit", "-5us", False), ("fraction", 0.5, False),
                ("int-overflow", Raw("9223372036854775808"), False), ("int-overflow", Raw("2147483648"), False)]
        if isinstance(v, int):  # large but maybe in range: a count that must not take minutes or all memory
            out += [("large", 1000000, False), ("large", 16777216, False)]
    elif q:
        num, unit = q.group(1), q.group(2)
        dollar = "$" if v.strip().startswith("$") else ""
        neg = num if float(num) != 0 else "1"  # "-0us" is zero, not a negative value
        out += [("negative", f"{dollar}-{neg}{unit}", True), ("zero", f"{dollar}0{unit}", False),
                ("huge", f"{dollar}1e400{unit}", True), ("huge", f"{dollar}1e30{unit}", False),
                ("nan", f"{dollar}nan{unit}", True), ("inf", f"{dollar}inf{unit}", True),
                ("bare-number", Raw(num), False), ("unit", "-5us", True),
                ("unit", "300GBps", False), ("unit", "300 GB / s", False), ("unit", "5 us", False)]
        if re.search(r"[Bb](/s|ps)$", unit):
            out += [("unit-mismatch", "5us", True), ("unit-mismatch", "300TB/s/s", True)]
        elif re.search(r"s$", unit) and "/" not in unit and "FLOP" not in unit:
            out += [("unit-mismatch", "300TB/s", True)]
    return out


# Maps whose keys are names the user chooses (a misspelt one is just another name).
NAMED_MAPS = {"node_types", "gpus", "devices"}
# Free-text fields (a suite's `source`, a row's `note`): any string is valid there.
FREE_TEXT_KEYS = {"note", "source"}


def structured_mutants(doc):
    """(class, bytes, must_reject) built from the parsed document."""
    out = []
    for path, v in walk(doc):
        if isinstance(v, dict):
            named = bool(path) and path[-1] in NAMED_MAPS
            for k in v:
                out.append(("delete-key", dump(replaced(doc, path, lambda m, k=k: {a: b for a, b in m.items() if a != k})), False))
                out.append(("unknown-key", dump(replaced(doc, path, lambda m, k=k: {(typo(a) if a == k else a): b for a, b in m.items()})), not named))
                out.append(("duplicate-key", dump(replaced(doc, path, lambda m, k=k: Pairs(list(m.items()) + [(k, m[k])]))), True))
        elif isinstance(v, list):
            if v:
                out.append(("list-empty", dump(replaced(doc, path, lambda _: [])), False))
                out.append(("list-repeat", dump(replaced(doc, path, lambda l: l + l)), False))
                out.append(("list-drop", dump(replaced(doc, path, lambda l: l[1:])), False))
        elif path:
            free_text = path[-1] in FREE_TEXT_KEYS and isinstance(v, str)
            for cls, nv, must in value_mutants(v):
                must = must and not (free_text and isinstance(nv, str))
                out.append((cls, dump(replaced(doc, path, lambda _, nv=nv: nv)), must))
    return out


def text_mutants(text, rng):
    """(class, bytes, must_reject) made from the file's text: syntax, encoding, size."""
    b = text.encode("utf-8")
    lines = text.split("\n")
    indented = [i for i, l in enumerate(lines) if l.startswith("  ") and l.strip() and not l.strip().startswith("#")]
    valued = [i for i, l in enumerate(lines) if re.match(r"^\s*[\w-]+: \S", l) and not l.lstrip().startswith("#")]
    out = [
        ("empty-file", b"", True), ("blank-file", b"\n\n  \n# only a comment\n", True),
        ("top-list", b"- kind\n- cluster\n", True), ("top-scalar", b"42\n", True), ("top-scalar", b'"kind: cluster"\n', True),
        ("binary", bytes(rng.randrange(256) for _ in range(512)), True),
        ("binary", b"kind: cluster\x00\x01\x02\n", True),
        ("invalid-utf8", b"kind: cluster\nname: \xff\xfe\xc3\x28\n", True),
        ("invalid-utf8", b.replace(b"\n", b"\n# \xe2\x82\n", 1), True),
        ("bom", b"\xef\xbb\xbf" + b, False), ("crlf", b.replace(b"\n", b"\r\n"), False),
        ("truncated", b[: rng.randrange(1, max(2, len(b)))], False),
        ("several-documents", b + b"---\n" + b, True),
        ("deep-flow", b"kind: cluster\nname: x\nnode_types: " + b"[" * 100000 + b"]" * 100000 + b"\n", True),
        ("deep-flow", b"kind: workload\nmodel: " + b"{a: " * 50000 + b"1" + b"}" * 50000 + b"\n", True),
        ("deep-block", ("kind: cluster\n" + "".join(" " * i + f"k{i}:\n" for i in range(3000))).encode(), True),
        ("deep-list", b"kind: plan\nreplicas: " + b"- " * 20000 + b"x\n", True),
        ("aliases", b"kind: cluster\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                    b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                    b"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n", True),
        ("merge-key", b"base: &b {kind: cluster}\n<<: *b\nname: x\n", True),
        ("tag", re.sub(rb"(?m)^(\w+): (?=\S)", rb"\1: !!binary ", b, count=1), True),
        ("complex-key", b"? [a, b]\n: 1\n" + b, True),
        ("huge-file", b + b"# " + b"x" * 100 + b"\n" + (b"# " + b"y" * 1000 + b"\n") * 10000, False),
        ("huge-file", b + b"huge_key: \"" + b"z" * (10 << 20) + b"\"\n", True),
        ("over-limit", b"# " + b"w" * (17 << 20) + b"\n", True),
        ("long-key", b + b"k" * 100000 + b": 1\n", True),
    ]
    if indented:
        i = rng.choice(indented)
        l2 = list(lines)
        l2[i] = "\t" + l2[i].lstrip(" ")
        out.append(("tab-indent", "\n".join(l2).encode(), True))
    if valued:
        i = rng.choice(valued)
        l2 = list(lines)
        l2[i] = re.sub(r": ", ': "', l2[i], count=1)
        out.append(("unterminated-quote", "\n".join(l2).encode(), True))
        l3 = list(lines)
        l3[i] = l3[i].replace(": ", ": [", 1)
        out.append(("unclosed-bracket", "\n".join(l3).encode(), True))
        l4 = list(lines)
        l4[i] = l4[i] + "\t# trailing tab"
        out.append(("tab-after-value", "\n".join(l4).encode(), False))
    return out


def mutants_of(path, rng):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    doc = yaml.safe_load(text)
    return text_mutants(text, rng) + structured_mutants(doc)
