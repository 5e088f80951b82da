#!/bin/sh
# A sandbox JVM's start and memory on the worker's whole class path against the sandbox module's own
# jars (SandboxClasspath). Usage: bench/sandbox-start.sh [repeats]      (default 5)
set -e
. "$(dirname "$0")/lib.sh"
exec java $BENCH_JAVA_OPTS -cp "$CP" bench/SandboxStartBench.java "$@"
