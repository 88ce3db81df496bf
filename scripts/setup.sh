#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages hetsim needs, only those that are missing.
# Idempotent and silent when everything is present. Runs as root (no sudo assumed);
# uses sudo only when not root and sudo exists.
set -euo pipefail

packages=(
  cmake g++ pkg-config libsimgrid-dev libeigen3-dev libcli11-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev openmpi-bin libopenmpi-dev
  hipcc libamdhip64-dev
  python3-matplotlib python3-pandas python3-yaml python3-nbformat python3-nbconvert
  python3-ipykernel jupyter-nbconvert
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup: need root to install: ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
echo "setup: installing ${#missing[@]} missing package(s): ${missing[*]}" >&2
"${as_root[@]}" apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
