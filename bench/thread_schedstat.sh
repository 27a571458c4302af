#!/bin/bash
# Usage: bench/thread_schedstat.sh [WORKLOAD [BLOCKING]]  (IOCPBENCH_BIN: the binary; default build/release)
# Per thread of one run: CPU, run-queue wait (schedstat run_delay) and timeslices over 2 s.
# Where a handler's runnable wait comes from.
cd "$(dirname "$0")/.."
w=${1:-socket}; b=${2:-0.5}
rm -f "${TMPDIR:-/tmp}/schedstat-$w.json"; "${IOCPBENCH_BIN:-build/release/harness/iocpbench}" run --workload $w --concurrency N --pool N --blocking $b --duration 3 --warmup 0.3 --json "${TMPDIR:-/tmp}/schedstat-$w.json" >/dev/null 2>&1 &
p=$!
sleep 1.2  # past the 0.3 s warm-up
declare -A a
for t in /proc/$p/task/*; do a[$(basename $t)]="$(cat $t/schedstat)"; done
sleep 2
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tid cpu_ms run_delay_ms slices run_delay_per_slice_us"
for t in /proc/$p/task/*; do
  id=$(basename $t); read c1 d1 n1 <<< "${a[$id]}"; read c2 d2 n2 < $t/schedstat
  [ -z "$c1" ] && continue  # a thread started after the first sample
  dn=$((n2-n1)); [ $dn -le 0 ] && dn=1
  echo "$id $(( (c2-c1)/1000000 )) $(( (d2-d1)/1000000 )) $((n2-n1)) $(( (d2-d1)/1000/dn ))"
done
wait
