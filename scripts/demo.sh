#!/usr/bin/env bash
# The README's demo: builds, checks and times the fallback config of a few workloads with the
# embedded defaults (local builder, this machine, one thread).
set -euo pipefail
kiln=${1:-build/cli/kiln}
workloads=(
  "dense:M=1024,N=1024,K=1024"
  "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"
  "depthwise_conv2d:N=1,C=32,H=112,W=112,R=3,S=3,stride=1,pad=1"
  "batch_matmul:B=12,M=128,N=128,K=64"
)
for w in "${workloads[@]}"; do
  "$kiln" measure --workload "$w" --threads 1
done
