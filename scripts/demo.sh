#!/usr/bin/env bash
# The README's demo, on the embedded defaults: kiln tunes a dense layer end to end (xgb tuner, builder
# processes, an isolated runner checking every kernel against the reference, records in a
# SQLite file), prints its best config, then measures a conv2d layer's fallback config.
set -euo pipefail
kiln=${1:-build/cli/kiln}
db=${KILN_DEMO_DB:-kiln-demo.db}
"$kiln" tune --workload dense:M=512,N=512,K=512 --template dense_pack.x86 --trials 128 --db "$db"
"$kiln" best --db "$db" --workload dense:M=512,N=512,K=512 --template dense_pack.x86
"$kiln" measure --workload conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1 --threads 1
echo "records are in $db: try '$kiln export --db $db --format tvm --best-only'"
