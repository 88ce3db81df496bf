#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `hetsim simulate` end to end: same input, same output byte for byte (report and trace), the
# trace is JSON with GPU and link tracks, and `predict --engine sim` gives the same time.
#   simulate_cli_test.sh HETSIM_BINARY SOURCE_DIR
set -euo pipefail
HETSIM=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
args=(--cluster "$SRC/clusters/mixed-a100-v100.yaml" --workload "$SRC/workloads/gpt3-6.7b.yaml"
      --tp 8 --pp 3 --dp 2 --micro 32 --recompute full --format json)
"$HETSIM" simulate "${args[@]}" --trace "$TMP/a.json" > "$TMP/a.out"
"$HETSIM" simulate "${args[@]}" --trace "$TMP/b.json" > "$TMP/b.out"
cmp "$TMP/a.out" "$TMP/b.out"
cmp "$TMP/a.json" "$TMP/b.json"
grep -q '"engine": "sim"' "$TMP/a.out"
"$HETSIM" predict "${args[@]}" --engine sim > "$TMP/p.out"
cmp "$TMP/a.out" "$TMP/p.out"
/usr/bin/python3 - "$TMP/a.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"]
assert sum(n.startswith("gpu ") for n in names) == 48, names[:5]
assert any(e["ph"] == "C" for e in ev), "no link counters"
assert all(e["ph"] in "XMC" for e in ev)
print("trace ok:", len(ev), "events")
PY
echo "simulate: deterministic, trace valid, predict --engine sim agrees"
