#!/usr/bin/env bash
# Installs ONNX Runtime's Node.js package (onnxruntime-node 1.30.0, CPU provider) into
# bench/ort/node_modules, the peer bench/model_bench times kiln against.
# Idempotent: nothing runs when the pinned version is already there.
# --ignore-scripts skips the package's post-install step, which downloads GPU binaries; the CPU
# library ships in the package itself (bin/napi-v6/linux/x64/libonnxruntime.so.1).
set -euo pipefail

version=1.30.0
dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/bench/ort"
installed="$dir/node_modules/onnxruntime-node/package.json"

command -v npm >/dev/null || { echo "install-ort: npm not found (Node.js 20 provides it)" >&2; exit 1; }
if [ -f "$installed" ] && grep -q "\"version\": \"$version\"" "$installed"; then
  echo "install-ort: onnxruntime-node $version present in $dir/node_modules"
  exit 0
fi
echo "install-ort: installing onnxruntime-node@$version into $dir/node_modules"
cd "$dir"
npm install --ignore-scripts --no-audit --no-fund --save-exact "onnxruntime-node@$version"
