#!/usr/bin/env bash
# The S3 artifact store against the directory store (docs/running.md#artifact-store-on-s3), on
# S3Proxy (filesystem store) on loopback, one script run:
#  1. transfer rates of a 500 MB checkpoint-sized object (bench/S3Bench.java): put through the
#     store (sha256 + multipart upload), first read from another worker's empty cache (streamed
#     download + check), cached read;
#  2. the demo spec (./whale demo, examples/demo-math.json) on a directory store, then on the S3
#     store with a fresh prefix and an empty cache: wall times and their ratio (goal <= 1.05).
# Build first: ./mvnw -o install -DskipTests. MB=500 by default; DEMO=0 skips part 2.
set -e
cd "$(dirname "$0")/.."
MB=${MB:-500}
WORK=$(mktemp -d /tmp/whale-s3-bench.XXXXXX)
trap 'rc=$?; kill $S3 2>/dev/null; wait $S3 2>/dev/null; rm -rf "$WORK"; exit $rc' EXIT
JAR=${S3PROXY_JAR:-store/target/s3proxy/s3proxy.jar}
[ -f "$JAR" ] || ./mvnw -B -q -o -pl store generate-test-resources
PORT=${PORT:-18123}
mkdir -p "$WORK/data/whale-bench"
cat >"$WORK/s3proxy.conf" <<CONF
s3proxy.endpoint=http://127.0.0.1:$PORT
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=bench
s3proxy.credential=bench-secret
jclouds.provider=filesystem
jclouds.filesystem.basedir=$WORK/data
CONF
java -Xmx512m -jar "$JAR" --properties "$WORK/s3proxy.conf" >"$WORK/s3proxy.log" 2>&1 &
S3=$!
until (echo >/dev/tcp/127.0.0.1/$PORT) 2>/dev/null; do
  kill -0 $S3 2>/dev/null || { tail -20 "$WORK/s3proxy.log"; exit 1; }
  sleep 0.2
done
export AWS_ENDPOINT_URL=http://127.0.0.1:$PORT AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret \
  AWS_REGION=us-east-1
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
./mvnw -B -q -o -pl store dependency:build-classpath -Dmdep.outputFile=target/bench.cp >/dev/null
java -Xmx1g -cp "store/target/classes:$(cat store/target/bench.cp)" bench/S3Bench.java \
  s3://whale-bench/transfer "$MB" "$WORK"
[ "${DEMO:-1}" = 0 ] && exit 0
t0=$(date +%s.%N)
./whale demo --artifacts "$WORK/dir-store" >"$WORK/demo-dir.log" 2>&1 || { tail -30 "$WORK/demo-dir.log"; exit 1; }
t1=$(date +%s.%N)
./whale demo --artifacts s3://whale-bench/demo --cache "$WORK/demo-cache" >"$WORK/demo-s3.log" 2>&1 \
  || { tail -30 "$WORK/demo-s3.log"; exit 1; }
t2=$(date +%s.%N)
grep -h 'best mean@8\|wall time\|artifacts at' "$WORK/demo-dir.log" "$WORK/demo-s3.log"
python3 - "$t0" "$t1" "$t2" <<'PY'
import sys
t0, t1, t2 = map(float, sys.argv[1:])
d, s = t1 - t0, t2 - t1
print(f"demo wall: directory store {d:.1f} s, S3 store {s:.1f} s, ratio {s / d:.3f} (goal <= 1.05)")
PY
