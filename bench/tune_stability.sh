#!/usr/bin/env bash
# Does `iocpbench tune` give the same answer when rerun? Runs the same tune command N times and
# counts the recommendations (docs/tuning.md).
#
#   bench/tune_stability.sh [-n RERUNS] [-b BINARY] [-o DIR] -- TUNE-ARGS...
#   bench/tune_stability.sh -n 10 -- --workload post --blocking 0.5 --work-us 50
#
# Prints one line per rerun (wall seconds, the recommendation and what the final showed about it
# (shown_within, best, or only not_shown_worse), the best, the number of finalists, the final
# rounds the noise asked for, the median half-width of their 90% ratio CIs and the median CV of
# their final rounds, the machine's 1-minute load average at the start), then the tally, e.g.
# "c=2/p=5: 9 of 10", and the agreement's one-sided 95% lower confidence bound. Each rerun's results file
# is kept in DIR (default: a new temporary directory). Exit 0 when the modal answer has at least
# 9 of 10 (90%) of the finished reruns, 1 otherwise, 2 on bad arguments.
set -euo pipefail

reruns=10
binary=build/release/harness/iocpbench
dir=""
while getopts "n:b:o:" flag; do
  case "$flag" in
    n) reruns=$OPTARG ;;
    b) binary=$OPTARG ;;
    o) dir=$OPTARG ;;
    *) echo "usage: $0 [-n RERUNS] [-b BINARY] [-o DIR] -- TUNE-ARGS..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ "${1:-}" == "--" ]] && shift
if ! [[ "$reruns" =~ ^[1-9][0-9]*$ ]]; then echo "$0: -n: '$reruns' is not a positive whole number" >&2; exit 2; fi
if [[ ! -x "$binary" ]]; then echo "$0: -b: '$binary' is not an executable" >&2; exit 2; fi
if [[ $# -eq 0 ]]; then echo "$0: no tune arguments after --" >&2; exit 2; fi
command -v jq >/dev/null || { echo "$0: jq is required" >&2; exit 2; }
dir=${dir:-$(mktemp -d /tmp/tune_stability.XXXXXX)}
mkdir -p "$dir"

echo "# $binary tune $* --quiet, $reruns reruns, files in $dir"
answers=()
for ((i = 1; i <= reruns; i++)); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  start=$(date +%s.%N)
  rm -f "$dir/rerun-$i.json"  # a rerun into a kept folder: iocpbench refuses to replace results
  if ! "$binary" tune "$@" --quiet --json "$dir/rerun-$i.json" >"$dir/rerun-$i.txt" 2>&1; then
    echo "rerun $i: tune failed (see $dir/rerun-$i.txt)"
    continue
  fi
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  answer=$(jq -r '.tune.recommendation | "c=\(.concurrency.value)/p=\(.pool.value)"' "$dir/rerun-$i.json")
  shown=$(jq -r '.tune.recommendation.shown // "n/a"' "$dir/rerun-$i.json")
  rounds=$(jq -r '.tune.rule | "\(.final_rounds) rounds\(if .final_rounds_capped then " (capped)" else "" end)"' \
    "$dir/rerun-$i.json")
  best=$(jq -r '.tune.best | "c=\(.concurrency.value)/p=\(.pool.value)"' "$dir/rerun-$i.json")
  # How finely the final could tell settings apart: the median half-width of the other
  # finalists' 90% ratio CIs, and the median CV of each finalist's final rounds.
  spread=$(jq -r '.tune as $t | ([$t.finalists[] | select(.id != $t.best.id) | .ratio_to_best
      | if (.ci90_low // 0) > 0 and .ci90_high != null then ((.ci90_high / .ci90_low) | sqrt) - 1 else 9.99 end]
      | sort | if length == 0 then "n/a" else "+-\(.[length / 2 | floor] * 1000 | round / 10)%" end)
      + ", run CV " + ([$t.finalists[].throughput_ops_per_s.cv // empty] | sort
      | if length == 0 then "n/a" else "\(.[length / 2 | floor] * 1000 | round / 10)%" end)' "$dir/rerun-$i.json")
  printf 'rerun %d: %.1f s, recommended %s (%s), best %s, %d finalists x %s, final CI %s, load %s\n' "$i" \
    "$wall" "$answer" "$shown" "$best" "$(jq '.tune.finalists | length' "$dir/rerun-$i.json")" "$rounds" "$spread" \
    "$load"
  answers+=("$answer")
done

echo "# tally"
if [[ ${#answers[@]} -eq 0 ]]; then echo "no rerun finished"; exit 1; fi
printf '%s\n' "${answers[@]}" | sort | uniq -c | sort -rn | awk -v n=${#answers[@]} '{print $2 ": " $1 " of " n}'
modal=$(printf '%s\n' "${answers[@]}" | sort | uniq -c | sort -rn | head -1 | awk '{print $1}')
# How sure the agreement is: the one-sided 95% Clopper-Pearson lower bound on the share of reruns
# that give the modal answer (the p at which k or more agreements in n would happen 5% of the time).
python3 - "$modal" "${#answers[@]}" <<'PY'
import math, sys
k, n = int(sys.argv[1]), int(sys.argv[2])
def upper_tail(p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))
low, high = 0.0, 1.0
for _ in range(60):
    mid = (low + high) / 2
    low, high = (low, mid) if upper_tail(mid) > 0.05 else (mid, high)
print(f"agreement {k} of {n} = {k / n:.2f}, one-sided 95% lower bound {low:.3f} (Clopper-Pearson)")
PY
[[ $((modal * 10)) -ge $((${#answers[@]} * 9)) ]]
