#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Set-up, build, and run hetsim's main job on bundled inputs: describe a heterogeneous
# H100 + MI300X cluster, then plan Llama-2 70B training on it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target hetsim >/dev/null
build/cli/hetsim describe clusters/h100-mi300x.yaml
echo
exec build/cli/hetsim plan --cluster clusters/h100-mi300x.yaml --workload workloads/llama2-70b.yaml --top 5 "$@"
