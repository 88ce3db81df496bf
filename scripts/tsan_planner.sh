#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ThreadSanitizer check of the planner's threads (not in CI: a TSan build of models/ takes
# ~10 minutes on 2 cores). The `hetsim` binary and the gtest executables cannot run under TSan
# here (the CUDA/HIP runtimes they link map memory where TSan wants its shadow), so a small
# driver linked against libhetsim_models.a alone plans each example cluster on 4 threads.
#   scripts/tsan_planner.sh [BUILD_DIR]   (default: /tmp/hetsim-tsan; reused when present)
# Exit code 1 when TSan reports anything.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-/tmp/hetsim-tsan}
cmake -S "$HERE" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETSIM_WITH_CUDA=OFF -DHETSIM_WITH_HIP=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" > "$BUILD.configure.log"
cmake --build "$BUILD" -j"$(nproc)" --target hetsim_models > "$BUILD.build.log"
cat > "$BUILD/tsan_plan.cpp" <<'CPP'
#include <cstdio>
#include "catalog.hpp"
#include "input_loader.hpp"
#include "planner.hpp"
using namespace hetsim::models;
int main(int argc, char** argv) {
  const Cluster c = load_cluster(argv[1], Catalog::builtin());
  const Workload w = load_workload(argv[2]);
  PlannerOptions o;
  o.threads = 4;
  o.time_limit_s = 0;
  const PlannerResult r = plan_training(c, w, o);
  std::printf("%s: %s\n", argv[1], r.top.empty() ? r.reason.c_str() : r.top[0].shape.c_str());
}
CPP
g++ -std=c++20 -fsanitize=thread -g -O1 -I"$HERE/models" "$BUILD/tsan_plan.cpp" "$BUILD/models/libhetsim_models.a" \
  -lyaml-cpp -o "$BUILD/tsan_plan"
status=0
for c in h100-mi300x geo-two-zones mixed-a100-v100 spot-mix consumer-4090-a100; do
  log="$BUILD/tsan_$c.log"
  (cd "$HERE" && TSAN_OPTIONS="halt_on_error=0" "$BUILD/tsan_plan" "clusters/$c.yaml" workloads/gpt3-6.7b.yaml) > "$log" 2>&1 || true
  n=$(grep -c "WARNING: ThreadSanitizer" "$log" || true)
  echo "$c: $n ThreadSanitizer reports ($log)"
  [ "$n" = 0 ] || status=1
done
exit $status
