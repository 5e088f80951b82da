#!/bin/sh
# Many runs, long runs (issue 13, item 5): 20 concurrent tiny runs on one worker per queue (drain
# time, peak RSS per worker), then one run of 30 rounds (largest history, continue-as-new count).
# Appends its section to $BENCH_OUT. Usage: bench/runs.sh [concurrent] [rounds]  (default 20 30)
set -e
. "$(dirname "$0")/lib.sh"
exec java $BENCH_JAVA_OPTS -cp "$CP" bench/RunsBench.java "$@"
