#!/usr/bin/env bash
# make bench: the codegen-speed benchmark, then the kernel benchmark (kiln tuned by random
# search vs oneDNN and OpenBLAS, one thread). Extra arguments go to kernel_bench.
set -euo pipefail
build=${1:-build}
shift || true
"$build/bench/build_bench" --configs 100
db=$(mktemp -d)/kernel_bench.db
"$build/bench/kernel_bench" --db "$db" "$@"
