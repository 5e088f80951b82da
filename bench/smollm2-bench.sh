#!/bin/sh
# SmolLM2-135M-Instruct, whale against transformers on the same batch, one intra-op thread each:
# new tokens/s (batch 64 chat-rendered prompts, 64 new tokens, greedy) and LoRA SFT tokens/s (16
# rows). whale runs twice, under its default CPU pins and with WHALE_CPU_PINS=off. Build first:
#   ./mvnw -o install -DskipTests && ./whale models fetch smollm2-135m-instruct
# PY: a python with torch, transformers and peft (see activities/src/test/python/make_hf_fixtures.py).
set -e
cd "$(dirname "$0")/.."
PY=${PY:-python3}
MODEL=${MODEL:-$(./whale models fetch smollm2-135m-instruct | tail -1)}
IN=${IN:-/tmp/whale-smollm2-bench.json}
"$PY" bench/smollm2_bench.py inputs "$MODEL" "$IN"
./mvnw -B -q -o -pl activities dependency:build-classpath -Dmdep.outputFile=target/bench.cp >/dev/null
CP="activities/target/classes:harness-api/target/classes:model-api/target/classes:model/target/classes:sandbox/target/classes:store/target/classes:tasks/target/classes:workflows/target/classes:proto/target/classes:$(cat activities/target/bench.cp)"
export REPEATS=${REPEATS:-3}
for pins in avx2 off; do
  WHALE_CPU_PINS=$pins java -Dwhale.bench.repeats="$REPEATS" -Dai.djl.pytorch.num_threads=1 \
    -Dai.djl.pytorch.num_interop_threads=1 -Dai.djl.offline=true -cp "$CP" bench/SmolLm2Bench.java "$MODEL" "$IN"
done
"$PY" bench/smollm2_bench.py time "$MODEL" "$IN"
