#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# AddressSanitizer + UndefinedBehaviorSanitizer run of the CPU tests (not in CI: the build takes
# ~10 minutes on 2 cores). CUDA and HIP are left out of this build: their runtimes and hipcc's
# link step do not load the ASan runtime first. Tests that exhaust threads or memory on purpose
# (resource-limit checks, and the mutation test that caps its address space at 8 GiB) are
# skipped: ASan reserves terabytes of shadow address space, so they fail for that reason.
#   scripts/asan_tests.sh [BUILD_DIR]   (default: /tmp/hetsim-asan; reused when present)
# Exit code: ctest's (any sanitizer report fails the test that triggered it).
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-/tmp/hetsim-asan}
FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S "$HERE" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHETSIM_WITH_CUDA=OFF -DHETSIM_WITH_HIP=OFF \
  -DHETSIM_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="$FLAGS" -DCMAKE_EXE_LINKER_FLAGS="$FLAGS" > "$BUILD.configure.log"
cmake --build "$BUILD" -j"$(nproc)" > "$BUILD.build.log"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
export HETSIM_CLI_TIMEOUT_S=600  # sanitized runs take several times longer
ctest --test-dir "$BUILD" -L cpu -j"$(nproc)" --timeout 1200 \
  -E 'more_ranks_than_threads|more_threads_than_the_process|address_space_limit|time_limit_beyond_the_clock|EveryMutantLoadsOrFailsWithAConfigError'
