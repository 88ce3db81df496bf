#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Simulator benchmarks (not ctest: wall-clock figures are measured here, never asserted in tests).
#   bench/sim_bench.sh [BUILD_DIR]   (default: build)
# 1. Scale: GPT-3 175B on 1024 A100s and Llama-3-405B on 16,384 H100s, one step each, folded
#    (targets: <= 10 s and <= 60 s wall, < 4 GiB). `sim_scale_bench CASE --no-fold` runs a case
#    unfolded (every replica, TP rank and ring step: tens of millions of flows, far slower).
# 2. Validation: `hetsim validate --engine sim` vs the analytic engine on the version-1 shared
#    suites (target: sim MAPE no worse than analytic + 1 point; megatron-sc21-table1 <= 120 s).
set -euo pipefail
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")/.." && pwd)
SUITES=${HETSIM_VALIDATION_DIR:-$HERE/../shared/validation}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

echo "== scale"
for c in gpt3-175b-1024 llama3-405b-16384; do "$BUILD/bench/sim_scale_bench" "$c"; done

echo "== validate --engine sim (version-1 suites)"
for s in megatron-sc21-table1 vtrain-a100-multi vtrain-a100-single; do
  f="$SUITES/$s.yaml"
  [ -f "$f" ] || { echo "$s: skipped (no $f)"; continue; }
  start=$(date +%s.%N)
  "$BUILD/cli/hetsim" validate "$f" --engine sim --format json > "$OUT/$s.sim.json" || true
  end=$(date +%s.%N)
  "$BUILD/cli/hetsim" validate "$f" --format json > "$OUT/$s.analytic.json" || true
  /usr/bin/python3 - "$s" "$OUT/$s.sim.json" "$OUT/$s.analytic.json" "$start" "$end" <<'PY'
import json, sys
name, sim_path, ana_path, start, end = sys.argv[1:]
sim, ana = json.load(open(sim_path)), json.load(open(ana_path))
ms, ma = sim["mape"], ana["mape"]
print(f"{name}: rows {sim['suites'][0]['rows_total']}, MAPE sim {ms:.4f} analytic {ma:.4f} "
      f"(diff {100 * (ms - ma):+.2f} points), sim wall {float(end) - float(start):.1f} s")
PY
done
