#!/usr/bin/env bash
# make bench: the codegen-speed benchmark, the kernel benchmark (kiln tuned by random search vs
# oneDNN and OpenBLAS, one thread), the device farm's benchmark (runner throughput, the tracker's
# lease rate, the remote runner's overhead), then the model benchmark (the shared models compiled
# untuned (default configs) vs ONNX Runtime, 1 and 2 threads; `make ort` installs ONNX Runtime).
# Extra arguments go to kernel_bench.
set -euo pipefail
build=${1:-build}
shift || true
"$build/bench/build_bench" --configs 100
db=$(mktemp -d)/kernel_bench.db
"$build/bench/kernel_bench" --db "$db" "$@"
"$build/bench/farm_bench"
"$build/bench/model_bench"
