#!/bin/sh
# Peak resident memory of `whale compare examples/math-compare.json` and of `whale demo`: the
# whole process tree (the CLI's JVM, its sandbox JVMs, the Temporal dev server when one is on the
# PATH), sampled every 0.5 s from ps. Also checks that the compare prints the expected table
# (bench/expected/math-compare.txt) under the pins its first line names. Appends a markdown section to $BENCH_OUT.
#   bench/memory.sh          # both; MEMORY_SKIP_DEMO=1 for the compare only
#   MEMORY_SPEC=x.json MEMORY_EXPECTED=x.txt bench/memory.sh   # another comparison and its table
#   MEMORY_RUN=examples/smollm2-math.json MEMORY_GOAL_GB=3 bench/memory.sh   # one run (whale demo
#       --spec) instead of the compare and the default demo, against its own bound
# Takes what the two runs take: about 10 min for the compare and 5 for the demo on 2 idle cores.
set -e
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GOAL_GB=${MEMORY_GOAL_GB:-4}
spec=${MEMORY_SPEC:-examples/math-compare.json}
expected=${MEMORY_EXPECTED:-bench/expected/math-compare.txt}

# peak_kb LOG CMD...: runs CMD (stdout and stderr to LOG), prints the peak summed RSS (KiB) of CMD
# and its descendants; fails if CMD fails.
peak_kb() {
  log=$1
  shift
  "$@" >"$log" 2>&1 &
  root=$!
  peak=0
  while kill -0 "$root" 2>/dev/null; do
    now=$(ps -e -o pid= -o ppid= -o rss= | awk -v root="$root" '
      { parent[$1] = $2; rss[$1] = $3 }
      END { for (p in rss) { q = p; while (q != root && q in parent && q > 1) q = parent[q]
                             if (q == root) total += rss[p] }
            print total + 0 }')
    [ "$now" -gt "$peak" ] && peak=$now
    sleep 0.5
  done
  if ! wait "$root"; then
    echo "memory.sh: '$*' failed; its output:" >&2
    tail -40 "$log" >&2
    exit 1
  fi
  echo "$peak"
}

gb() { awk -v kb="$1" 'BEGIN { printf "%.2f", kb / 1024 / 1024 }'; }
met() { awk -v kb="$1" -v goal="$GOAL_GB" 'BEGIN { print (kb <= goal * 1024 * 1024 ? "yes" : "no") }'; }

whale() { java $BENCH_JAVA_OPTS -jar workers/target/whale-workers.jar "$@"; }

if [ -n "${MEMORY_RUN:-}" ]; then
  # one run of a spec, in process (the model fetched first when the spec names one)
  start=$(date +%s)
  run_kb=$(peak_kb "$tmp/run.log" whale demo --spec "$MEMORY_RUN" --artifacts "$tmp/run-artifacts")
  run_s=$(( $(date +%s) - start ))
  {
    echo "## 4. Memory of one run"
    echo
    echo "| figure | measured | goal | met |"
    echo "|---|---:|---:|---|"
    echo "| \`whale demo --spec $MEMORY_RUN\` peak RSS (GB, process tree; ${run_s} s) | $(gb "$run_kb") | <= $GOAL_GB | $(met "$run_kb") |"
    echo
    echo '```'
    grep -E '^(cpu pins|\[test|wall time|accepted|best)' "$tmp/run.log" || true
    sed -n '/^| /p' "$tmp/run.log"
    echo '```'
    echo
  } >> "$BENCH_OUT"
  exit 0
fi

start=$(date +%s)
compare_kb=$(peak_kb "$tmp/compare.log" whale compare "$spec" \
  --artifacts "$tmp/compare-artifacts")
compare_s=$(( $(date +%s) - start ))
# The tables compared by what they state per schedule: name, seeds, base and best means, rollouts
# (marks like "(best)" and the spread columns' format left out: the expected tables predate the
# 95 % intervals, and both follow from the same per-seed values).
table_key() {
  grep '^| ' "$1" | grep -v '^| schedule ' | awk -F' [|] ' '{
    name = $1; sub(/^[|] /, "", name); gsub(/[*]/, "", name); sub(/ [(](best|tied)[)]$/, "", name)
    split($3, base, " "); split($4, best, " "); gsub(/[*]/, "", best[1])
    rest = $6; sub(/ [|]$/, "", rest)
    print name, $2, base[1], best[1], $5, rest }'
}
table_key "$tmp/compare.log" > "$tmp/table.txt" || true
# An expected table holds for the instruction-set pins its first line names and the CPU kind its
# second names (whale.model.CpuPins): a run under other pins, or on a CPU of another vendor or
# vector width, computes other floats, so its table is not compared.
want_pins=$(sed -n '1s/^# //p' "$expected")
want_cpu=$(sed -n '2s/^# cpu //p' "$expected")
got_pins=$(grep -m1 '^cpu pins' "$tmp/compare.log" | sed 's/ (this CPU.*//' || true)
got_cpu=$(grep -m1 '^cpu pins' "$tmp/compare.log" | sed -n 's/.*(this CPU: \([^)]*\)).*/\1/p' || true)
table_key "$expected" > "$tmp/expected.txt"
if [ "$want_pins" != "$got_pins" ] || [ "$want_cpu" != "$got_cpu" ]; then
  same=pins
  table="was not compared with $expected: the run had '$got_pins' on '$got_cpu', the table needs '$want_pins' on '$want_cpu'"
elif cmp -s "$tmp/table.txt" "$tmp/expected.txt"; then
  same=yes
  table="equals $expected ($got_pins)"
else
  same=no
  table="DIFFERS from $expected:"
fi
demo_row=""
if [ "${MEMORY_SKIP_DEMO:-0}" != 1 ]; then
  start=$(date +%s)
  demo_kb=$(peak_kb "$tmp/demo.log" whale demo --artifacts "$tmp/demo-artifacts")
  demo_s=$(( $(date +%s) - start ))
  demo_row="| \`whale demo\` peak RSS (GB, process tree; ${demo_s} s) | $(gb "$demo_kb") | <= $GOAL_GB | $(met "$demo_kb") |"
fi

{
  echo "## 4. Memory"
  echo
  echo "| figure | measured | goal | met |"
  echo "|---|---:|---:|---|"
  echo "| \`whale compare $spec\` peak RSS (GB, process tree; ${compare_s} s) | $(gb "$compare_kb") | <= $GOAL_GB | $(met "$compare_kb") |"
  [ -n "$demo_row" ] && echo "$demo_row"
  echo
  echo "The compare's results table $table"
  if [ "$same" = no ]; then
    echo
    echo '```'
    diff "$tmp/expected.txt" "$tmp/table.txt" || true
    echo '```'
  fi
  echo
} >> "$BENCH_OUT"
