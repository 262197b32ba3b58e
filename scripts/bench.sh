#!/usr/bin/env bash
# Runs the benchmarks (make bench). Arguments after the build dir go to kernel_bench.
set -euo pipefail
build=${1:-build}
shift || true
"$build/bench/kernel_bench" "$@"
