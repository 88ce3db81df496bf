#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GPU checks that need a real device, prepared here and run there in one go.
#
#   scripts/device_check.sh bundle           # on the build machine (nvcc, Debian packages)
#   scripts/device_check.sh run [OUT_DIR]    # on the GPU machine (CUDA driver, no Debian packages)
#
# `bundle` builds the CUDA backend without HIP into build-device/ and copies `hetsim`, the GPU
# test binary and every shared library they load that is not part of glibc or the CUDA driver
# into build-device/bundle/{bin,lib} (about 55 MB: small enough to carry to a lent machine).
# `run` uses that bundle and prints one table:
#   1. the `gpu`-labelled kernel tests (tests/exec/gpu_backend_test.cpp) on the device;
#   1b. with HETSIM_DEVICE_SANITIZE=1, those tests under compute-sanitizer's memcheck;
#   3. with HETSIM_DEVICE_FULL_GRID=1, the full calibration grid and both plans checked with it;
#   2. a calibration of the device (`hetsim calibrate --quick`), then two training-step plans on
#      one GPU (a small and a large GPT), each predicted from the catalog (`hetsim predict
#      --as-executed`), run for real (`hetsim run`: GEMMs on the vendor's BLAS, then again on
#      hetsim's own kernel, HETSIM_GPU_GEMM=own) and checked (`hetsim check`: run again, predict
#      with the profile, compare).
# HETSIM_DEVICE_GPU names the catalog type of the device (default h200-sxm-141gb; any catalog
# name, or cpu-avx2 to rehearse the whole script on a machine without a GPU).
# Each phase has its own time limit (HETSIM_DEVICE_TIMEOUTS="tests run calibrate check" seconds,
# default "120 90 240 90", run and check once per plan), so a hung phase cannot eat a lent
# machine's budget, and each phase's wall time is printed in the table. On an H200 the whole
# run takes about 140 s (tests 1 s, calibrate 6 s, the large plan's runs and check 35-40 s each).
# The vendor's BLAS comes from the device machine's CUDA (cuBLAS is too big to carry).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUNDLE=$ROOT/build-device/bundle

bundle() {
  cmake -S "$ROOT" -B "$ROOT/build-device" -DCMAKE_BUILD_TYPE=Release -DHETSIM_WITH_CUDA=ON -DHETSIM_WITH_HIP=OFF \
    >/dev/null
  cmake --build "$ROOT/build-device" -j"$(nproc)" --target hetsim hetsim_exec_gpu_tests
  rm -rf "$BUNDLE"
  mkdir -p "$BUNDLE/bin" "$BUNDLE/lib"
  cp "$ROOT/build-device/cli/hetsim" "$ROOT/build-device/tests/exec/hetsim_exec_gpu_tests" "$BUNDLE/bin/"
  # glibc and the driver come from the device machine; everything else travels.
  local skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libcuda\.so)'
  for exe in "$BUNDLE"/bin/*; do
    ldd "$exe" | awk '/=> \// {print $1, $3}' | while read -r name path; do
      [[ $name =~ $skip ]] || cp -nL "$path" "$BUNDLE/lib/"
    done
  done
  du -sh "$BUNDLE"
  echo "carry build-device/bundle, then run: scripts/device_check.sh run \"\$OUT\""
}

# Prints "KEY VALUE" pairs of a Report JSON document (stdin) for the table.
report_field() { /usr/bin/env python3 -c "import json,sys; d=json.load(sys.stdin); print(d.get('$1', ''))"; }

run() {
  local out=${1:-${OUT:-$ROOT/build-device/out}}
  local gpu=${HETSIM_DEVICE_GPU:-h200-sxm-141gb}
  mkdir -p "$out"
  [ -x "$BUNDLE/bin/hetsim" ] || { echo "no bundle: run 'scripts/device_check.sh bundle' first" >&2; exit 2; }
  export LD_LIBRARY_PATH=$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # The GEMMs run on the vendor's BLAS, which hetsim loads at run time (exec/gpu/vendor_blas.hpp).
  # cuBLAS is too big to carry (libcublasLt alone is 540 MB): the device machine's CUDA has it.
  local blas
  blas=$(ls /usr/local/cuda*/lib64/libcublas.so.13 /usr/local/cuda*/targets/*/lib/libcublas.so.13 2>/dev/null | head -1 ||
    true)
  [ -n "$blas" ] || blas=$(find /usr/local /opt /usr/lib -name libcublas.so.13 2>/dev/null | head -1 || true)
  [ -n "$blas" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$blas")
  local hetsim=$BUNDLE/bin/hetsim
  local limits
  read -r -a limits <<<"${HETSIM_DEVICE_TIMEOUTS:-120 90 240 90}"
  local t_tests=${limits[0]} t_run=${limits[1]} t_cal=${limits[2]} t_check=${limits[3]}
  local t0=$SECONDS walls=()
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true

  # 1. Kernel tests against the CPU backend.
  local tests="not run"
  if timeout "$t_tests" "$BUNDLE/bin/hetsim_exec_gpu_tests" --gtest_output="json:$out/gpu_tests.json" >"$out/gpu_tests.log" 2>&1
  then tests=ok; else tests="FAILED (see gpu_tests.log)"; fi
  tests="$tests: $(/usr/bin/env python3 - "$out/gpu_tests.json" 2>/dev/null <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cases = [t for s in d["testsuites"] for t in s["testsuite"]]
skipped = sum(1 for t in cases if t.get("result") == "SKIPPED")
failed = sum(1 for t in cases if t.get("failures"))
print(f"{len(cases) - skipped - failed} passed, {failed} failed, {skipped} skipped")
PY
)" || tests="$tests: no test report (the binary did not start: see gpu_tests.log)"
  walls+=("tests $((SECONDS - t0)) s"); t0=$SECONDS
  # 1b. With HETSIM_DEVICE_SANITIZE=1: the CUDA kernel tests under compute-sanitizer's memcheck
  # (out-of-bounds and misaligned accesses; racecheck takes minutes, run it by hand).
  local sanitize="not run (HETSIM_DEVICE_SANITIZE=1 runs it)"
  if [ "${HETSIM_DEVICE_SANITIZE:-0}" = 1 ]; then
    local cs
    cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1 || true)
    if [ -z "$cs" ]; then sanitize="no compute-sanitizer on this machine"
    elif timeout "$t_tests" "$cs" --tool memcheck --leak-check no --error-exitcode 9 "$BUNDLE/bin/hetsim_exec_gpu_tests" \
      --gtest_filter='Runtimes/*/cuda_*' >"$out/memcheck.log" 2>&1
    then sanitize="memcheck: $(grep -o 'ERROR SUMMARY: [0-9]* error[s]*' "$out/memcheck.log" | tail -1)"
    else sanitize="memcheck FAILED or timed out (exit $?, memcheck.log)"; fi
    walls+=("memcheck $((SECONDS - t0)) s"); t0=$SECONDS
  fi

  # 2. One GPU: the cluster, calibrated once; then two plans, each predicted from the catalog, run
  # for real and checked against the profile's prediction.
  cat >"$out/cluster.yaml" <<EOF
kind: cluster
name: one-device
node_types:
  box:
    gpu: $gpu
    gpus: 1
    intra: {kind: pcie, bandwidth: "32GB/s", latency: "5us"}
    nics: {count: 1, bandwidth: "10GB/s", kind: ethernet, latency: "10us", gpu_direct: false}
    host_link: "32GB/s"
zones:
  - name: dc
    fabric: {kind: switch}
    nodes: [{type: box, count: 1}]
EOF
  local profile_ok=1
  timeout "$t_cal" "$hetsim" calibrate --cluster "$out/cluster.yaml" --quick --out "$out/profile.yaml" \
    >"$out/calibrate.log" 2>&1 || profile_ok=0
  walls+=("calibrate $((SECONDS - t0)) s"); t0=$SECONDS

  # fp32: the execution engine's GPU kernels are fp32 on the CUDA cores, never TF32 (exec/README.md),
  # hence allow_tf32: false for the catalog prediction. "small" is tens of milliseconds of GEMMs
  # whose grids about fill the GPU once; "large" a second of GEMMs many waves deep.
  local rows=()
  one_plan small "{layers: 4, hidden: 1024, heads: 16, ffn_hidden: 4096, vocab: 8192, seq_len: 512, activation: gelu, tied_embeddings: true}" 4
  one_plan large "{layers: 8, hidden: 2048, heads: 16, ffn_hidden: 8192, vocab: 32768, seq_len: 1024, activation: gelu, tied_embeddings: true}" 8

  # 3. With HETSIM_DEVICE_FULL_GRID=1: the full calibration grid (108 GEMMs; ~16 s on an H200),
  # and both plans checked against that profile too (the GPU GEMM fit's least squares was made
  # on such a grid's samples: calibration/gemm_fit.cpp).
  if [ "${HETSIM_DEVICE_FULL_GRID:-0}" = 1 ]; then
    local full="calibrate failed or timed out (full.log)"
    if timeout "$t_cal" "$hetsim" calibrate --cluster "$out/cluster.yaml" --out "$out/full.yaml" >"$out/full.log" 2>&1; then
      full=$(grep -o 'e [0-9.]*, half work' "$out/full.log" | head -1 | sed 's/, half work//')
      for name in small large; do
        local verdict err
        timeout "$t_check" "$hetsim" check --cluster "$out/cluster.yaml" --workload "$out/$name.workload.yaml" \
          --plan "$out/$name.plan.yaml" --profile "$out/full.yaml" --steps 4 --format json \
          >"$out/$name.fullcheck.json" 2>"$out/$name.fullcheck.err" && verdict=pass || verdict="FAIL (exit $?)"
        err=$(report_field relative_error <"$out/$name.fullcheck.json" 2>/dev/null || true)
        rows+=("$(printf '%-34s %s' "$name: check, full-grid profile" "$verdict, error ${err:-?}")")
      done
    fi
    rows+=("$(printf '%-34s %s' "full-grid GEMM fit" "$full")")
    walls+=("full grid $((SECONDS - t0)) s"); t0=$SECONDS
  fi

  echo
  local gemm
  gemm=$(/usr/bin/env python3 -c "import json,sys; print('; '.join(json.load(sys.stdin).get('notes', [])))" \
    <"$out/small.run.json" 2>/dev/null || true)
  printf '%-34s %s\n' "device type" "$gpu" "gpu kernel tests" "$tests" "compute-sanitizer" "$sanitize" \
    "hetsim run's GEMMs" "${gemm:-unknown (small.run.json)}" "cuBLAS found at" "${blas:-nowhere}"
  printf '%s\n' "${rows[@]}"
  printf '%-34s %s\n' "wall time per phase" "${walls[*]}"
}

# one_plan NAME MODEL LAYERS: writes NAME.{workload,plan}.yaml, predicts, runs and checks them;
# appends the table's rows to `rows` and the phases' wall times to `walls` (run()'s locals).
one_plan() {
  local name=$1 model=$2 layers=$3
  cat >"$out/$name.workload.yaml" <<EOF
kind: workload
name: gpt-fp32-device-check-$name
model: $model
training: {global_batch: 8, dtype: fp32, optimizer: adam, allow_tf32: false}
EOF
  cat >"$out/$name.plan.yaml" <<EOF
kind: plan
name: one-device-tp1
micro_batch: 2
schedule: 1f1b
replicas:
  - micro_batches: 4
    stages:
      - {layers: $layers, gpus: "gpu[0]"}
EOF
  local args=(--cluster "$out/cluster.yaml" --workload "$out/$name.workload.yaml" --plan "$out/$name.plan.yaml")
  local predicted measured own calibrated check="calibrate failed or timed out (calibrate.log)"
  # The reports are kept next to the table: the breakdown per op is what a miss is read from.
  "$hetsim" predict "${args[@]}" --as-executed --format json >"$out/$name.predict.json" 2>"$out/$name.predict.err" || true
  predicted=$(report_field iteration_time_s <"$out/$name.predict.json" 2>/dev/null || true)
  timeout "$t_run" "$hetsim" run "${args[@]}" --steps 4 --format json --out "$out/$name.run_ops.jsonl" \
    >"$out/$name.run.json" 2>"$out/$name.run.err" || true
  measured=$(report_field iteration_time_s <"$out/$name.run.json" 2>/dev/null || true)
  walls+=("$name run $((SECONDS - t0)) s"); t0=$SECONDS
  # The same step on hetsim's own GEMM kernel, for the vendor library's share of it.
  HETSIM_GPU_GEMM=own timeout "$t_run" "$hetsim" run "${args[@]}" --steps 4 --format json \
    >"$out/$name.run_own.json" 2>"$out/$name.run_own.err" || true
  own=$(report_field iteration_time_s <"$out/$name.run_own.json" 2>/dev/null || true)
  walls+=("$name run, own GEMM $((SECONDS - t0)) s"); t0=$SECONDS
  if [ "$profile_ok" = 1 ]; then
    timeout "$t_check" "$hetsim" check "${args[@]}" --profile "$out/profile.yaml" --steps 4 --format json \
      >"$out/$name.check.json" 2>"$out/$name.check.err" && check=pass || check="FAIL (exit $?)"
    calibrated=$(report_field predicted_iteration_time_s <"$out/$name.check.json" 2>/dev/null || true)
    walls+=("$name check $((SECONDS - t0)) s"); t0=$SECONDS
  fi
  rows+=("$(printf '%-34s %s' "$name: step, catalog prediction" "${predicted:-error ($name.predict.err)} s")"
         "$(printf '%-34s %s' "$name: step, measured (hetsim run)" "${measured:-error ($name.run.err)} s")"
         "$(printf '%-34s %s' "$name: step, measured, own GEMM" "${own:-error ($name.run_own.err)} s")"
         "$(printf '%-34s %s' "$name: step, profile prediction" "${calibrated:-n/a} s")"
         "$(printf '%-34s %s' "$name: hetsim check (tol. 0.25)" "$check")")
}

case "${1:-}" in
  bundle) bundle ;;
  run) shift; run "$@" ;;
  *) echo "usage: $0 bundle | run [OUT_DIR]" >&2; exit 2 ;;
esac
