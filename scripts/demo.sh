#!/usr/bin/env bash
# make demo: shows the main job on a throw-away vault in a temporary directory.
set -euo pipefail
bin=${1:-.build/release/vault}
echo "vault demo (binary: $bin)"
"$bin" --version
