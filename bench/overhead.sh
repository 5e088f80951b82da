#!/bin/sh
# Figure 1: wall time of a seeded WHALE run through Temporal (test server; dev server when
# `temporal` is on the PATH) against the same activity calls in a bare loop. Usage:
#   bench/overhead.sh [repeats] [spec.json]      (default 3, bench/overhead.json)
set -e
. "$(dirname "$0")/lib.sh"
exec java $BENCH_JAVA_OPTS -cp "$CP" bench/OverheadBench.java "$@"
