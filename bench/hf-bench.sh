#!/bin/sh
# New tokens/s (KV cache, no cache, transformers generate) and SFT tokens/s (whale, transformers) on
# the llama fixture and a ~10M-parameter Llama, one intra-op thread each. Build first:
#   ./mvnw -o install -DskipTests
# PY: a python with torch and transformers (see activities/src/test/python/make_hf_fixtures.py).
set -e
cd "$(dirname "$0")/.."
PY=${PY:-python3}
BIG=${BIG:-/tmp/whale-bench-10m}
[ -d "$BIG" ] || "$PY" bench/hf_bench.py make "$BIG"
SMALL=activities/src/test/resources/hf/llama
./mvnw -B -q -o -pl activities dependency:build-classpath -Dmdep.outputFile=target/bench.cp >/dev/null
CP="activities/target/classes:harness-api/target/classes:model-api/target/classes:model/target/classes:sandbox/target/classes:store/target/classes:tasks/target/classes:workflows/target/classes:proto/target/classes:$(cat activities/target/bench.cp)"
# DEVICE=cuda (bench/gpu-check): both sides on the GPU
# REPEATS: timed runs of each figure after two warm-ups, best taken, the same on both sides
export REPEATS=${REPEATS:-10}
java -Dwhale.bench.repeats="$REPEATS" -Dai.djl.pytorch.num_threads=1 -Dai.djl.pytorch.num_interop_threads=1 -Dai.djl.offline=true \
  -Dwhale.bench.device="${DEVICE:-cpu}" -cp "$CP" bench/HfBench.java "$SMALL" "$BIG"
DEVICE="${DEVICE:-cpu}" "$PY" bench/hf_bench.py time "$SMALL" "$BIG"
