#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Set-up, build, and run hetsim's main job on a bundled heterogeneous cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target hetsim >/dev/null
exec build/cli/hetsim describe clusters/h100-mi300x.yaml "$@"
