#!/usr/bin/env bash
# The cost of the instruction-set pins (whale.model.CpuPins): the seeded work of
# CrossProcessDeterminismTest (pretraining the probe's base, 400 steps, then one RSFT step of
# 16 prompts x 8 samples through the sandbox pool) with WHALE_CPU_PINS=avx2 and =off, alternated,
# each in a fresh JVM and a fresh store. Usage: bench/pins.sh [pairs]   (default 3)
# Reports wall(avx2)/wall(off) per pair (median, min-max) and checks that each mode gives the same
# bytes every time. Appends "## 6. Instruction-set pins" to $BENCH_OUT.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pairs=${1:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # mode i -> "seconds base step"
  local mode=$1 i=$2 t0 t1
  t0=$(date +%s.%N)
  env -u ATEN_CPU_CAPABILITY -u MKL_CBWR -u ONEDNN_MAX_CPU_ISA WHALE_CPU_PINS=$mode \
    java -Xmx1g -cp "activities/target/test-classes:$CP" whale.activities.DeterminismProbe \
    "$tmp/$mode$i" >"$tmp/$mode$i.log" 2>&1
  t1=$(date +%s.%N)
  echo "$(echo "$t1 - $t0" | bc) $(grep '^base=' "$tmp/$mode$i.log" | cut -c6-) $(grep '^step=' "$tmp/$mode$i.log" | cut -d' ' -f1 | cut -c6-)"
}
ratios=(); rows=""; fail=0
declare -A first
for i in $(seq 1 "$pairs"); do
  # alternate which mode goes first
  if (( i % 2 )); then order="avx2 off"; else order="off avx2"; fi
  declare -A wall=()
  for mode in $order; do
    read -r s base step < <(run "$mode" "$i")
    wall[$mode]=$s
    if [[ -z "${first[$mode]:-}" ]]; then first[$mode]="$base $step";
    elif [[ "${first[$mode]}" != "$base $step" ]]; then echo "pins: $mode run $i gave other bytes" >&2; fail=1; fi
    rows+="| $i | $mode | $(printf %.1f "$s") | ${base:7:12} | ${step:7:12} |"$'\n'
  done
  ratios+=("$(echo "scale=4; ${wall[avx2]} / ${wall[off]}" | bc)")
done
sorted=($(printf '%s\n' "${ratios[@]}" | sort -n))
median=${sorted[$(( ${#sorted[@]} / 2 ))]}
{
  echo "## 6. Instruction-set pins (bench/pins.sh)"
  echo
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), vector extensions: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|amx.*)$' | xargs); load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "wall(avx2) / wall(off): **$median** (${sorted[0]}-${sorted[-1]}, n=$pairs); same bytes within each mode: $([ $fail = 0 ] && echo yes || echo NO)"
  echo
  echo "| pair | WHALE_CPU_PINS | wall (s) | base | step |"
  echo "|---|---|---:|---|---|"
  printf '%s' "$rows"
} >>"$BENCH_OUT"
exit $fail
