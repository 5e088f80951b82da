#!/bin/sh
# Episodes/s through the sandbox vs in-process on the math task. Build first: ./mvnw -o install -DskipTests
set -e
cd "$(dirname "$0")/.."
./mvnw -B -q -o -pl activities dependency:build-classpath -Dmdep.outputFile=target/bench.cp >/dev/null
CP="activities/target/classes:workflows/target/classes:proto/target/classes:$(cat activities/target/bench.cp)"
exec java -Dwhale.sandbox.classpath="$CP" -cp "$CP" bench/SandboxBench.java "$@"
