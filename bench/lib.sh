# Sourced by the bench scripts: builds whale once (unless BENCH_BUILT=1) and sets CP, the classpath
# of the workers module's tests (every module's classes first, then every dependency), so that a
# benchmark is one Java source file run with `java -cp "$CP" bench/X.java` and can use the e2e
# helpers (whale.workers.e2e.DevServer, WorkerProcess, Temporal).
cd "$(dirname "$0")/.."
export DJL_OFFLINE=true OPT_OUT_TRACKING=true
MVN_OFFLINE=${MVN_OFFLINE:-}
[ -d "$HOME/.m2/repository/ai/djl" ] && MVN_OFFLINE=${MVN_OFFLINE:--o}
if [ "${BENCH_BUILT:-0}" != 1 ]; then
  # one reactor, nothing installed: the classpath names this checkout's modules, never ~/.m2's
  ./mvnw -B -ntp -q $MVN_OFFLINE -pl workers -am package -DskipTests dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.cp >/dev/null
  export BENCH_BUILT=1
fi
CP="workers/target/test-classes:workers/target/classes:activities/target/classes:harness-api/target/classes:model-api/target/classes:model/target/classes:sandbox/target/classes:store/target/classes:tasks/target/classes:workflows/target/classes:proto/target/classes:$(cat workers/target/bench.cp)"
export CP
# the whale jar the worker processes run (WorkerProcess reads -Dwhale.jar)
BENCH_JAVA_OPTS="-Dai.djl.offline=true -Dwhale.jar=$(pwd)/workers/target/whale-workers.jar"
export BENCH_JAVA_OPTS
# each benchmark appends its markdown section to BENCH_OUT (bench/run collects them)
BENCH_OUT=${BENCH_OUT:-/dev/stdout}
export BENCH_OUT
