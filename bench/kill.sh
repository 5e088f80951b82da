#!/bin/sh
# Kill detection (issue 13, item 3): kill -9 a gpu worker in the middle of an RSFT step, time the
# retry's start on the other gpu worker, count the steps redone. Appends its section to $BENCH_OUT.
# Usage: bench/kill.sh [kills]   (default 3)
set -e
. "$(dirname "$0")/lib.sh"
exec java $BENCH_JAVA_OPTS -cp "$CP" bench/KillBench.java "$@"
