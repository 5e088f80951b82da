#!/bin/sh
# Figure 2: episodes/s through the sandbox pool against in-process on the math task. Usage:
#   bench/sandbox.sh [problems] [samples] [repeats]      (default 64 8 5)
set -e
. "$(dirname "$0")/lib.sh"
exec java $BENCH_JAVA_OPTS -Dwhale.sandbox.classpath="$CP" -cp "$CP" bench/SandboxBench.java "$@"
