#!/bin/sh
# SmolLM2-135M-Instruct sampled three ways on the same 64 requests (chat-rendered arithmetic
# questions as token ids, greedy, at most 64 new tokens, stopping at EOS): vLLM alone (its OpenAI
# endpoint driven directly by bench/vllm_bench.py), whale driving vLLM (VllmGenerator, the path of
# rollouts.backend vllm), and whale's own KV-cache sampler. One server, started here with whale's
# CPU settings (float32, one OpenMP thread); whale's sampler at one intra-op thread. Build first:
#   ./mvnw -o install -DskipTests && ./whale models fetch smollm2-135m-instruct && deploy/vllm/install-cpu.sh
# With a GPU (bench/gpu-check): VLLM=/path/to/cuda/venv/bin/vllm DTYPE=float16 (the server's KV cache
# and threads are then its own defaults).
set -e
cd "$(dirname "$0")/.."
VLLM=${VLLM:-$HOME/.cache/whale/vllm-venv/bin/vllm}
PY=${PY:-$(dirname "$VLLM")/python}
MODEL=${MODEL:-$(./whale models fetch smollm2-135m-instruct | tail -1)}
IN=${IN:-/tmp/whale-smollm2-bench.json}
PORT=${PORT:-8123}
DTYPE=${DTYPE:-float32}
"$PY" bench/smollm2_bench.py inputs "$MODEL" "$IN"
LOG=/tmp/whale-vllm-bench.log
HF_HUB_OFFLINE=1 VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1} VLLM_CPU_OMP_THREADS_BIND=nobind \
  OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} "$VLLM" serve "$MODEL" --served-model-name smollm2 --host 127.0.0.1 \
  --port "$PORT" --dtype "$DTYPE" --max-model-len 2048 --max-num-seqs 64 --enforce-eager >"$LOG" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null' EXIT
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do
  kill -0 $SERVER 2>/dev/null || { tail -20 "$LOG"; exit 1; }
  sleep 1
done
export REPEATS=${REPEATS:-3}
"$PY" bench/vllm_bench.py "http://127.0.0.1:$PORT" smollm2 "$IN"
./mvnw -B -q -o -pl activities dependency:build-classpath -Dmdep.outputFile=target/bench.cp >/dev/null
CP="model-api/target/classes:harness-api/target/classes:model/target/classes:$(cat activities/target/bench.cp)"
java -Dwhale.bench.repeats="$REPEATS" -Dai.djl.pytorch.num_threads=1 -Dai.djl.pytorch.num_interop_threads=1 \
  -Dai.djl.offline=true -cp "$CP" bench/VllmBench.java "$MODEL" "$IN" "http://127.0.0.1:$PORT" smollm2
