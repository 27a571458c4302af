#!/usr/bin/env bash
# Bad input to `iocpbench run`, through the real binary: exit 2, one line on stderr naming the
# flag ("iocpbench: --flag: reason"), nothing on stdout, and no output file created.
set -u
bin="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out="$dir/out.json"
failures=0

check() {  # check FLAG ARGS...
  local flag="$1"
  shift
  local extra=(--duration 0.2)
  [[ " $* " == *" --duration "* ]] && extra=()
  "$bin" run "$@" "${extra[@]}" --json "$out" >"$dir/stdout" 2>"$dir/stderr"
  local rc=$?
  local lines
  lines=$(wc -l <"$dir/stderr")
  if [[ $rc -ne 2 || $lines -ne 1 || -s "$dir/stdout" || -e "$out" ]] ||
     ! grep -q "^iocpbench: $flag: " "$dir/stderr"; then
    echo "FAIL: run $* -> rc=$rc, stderr: $(cat "$dir/stderr"), output file: $([[ -e $out ]] && echo yes || echo no)"
    failures=$((failures + 1))
    rm -f "$out"
  else
    echo "ok   $flag: $(cat "$dir/stderr")"
  fi
}

check --workload --workload disk
check --port --port nosuch
check --concurrency --concurrency -1
check --concurrency --concurrency 2N+
check --concurrency --concurrency abc
check --pool --pool 0
check --pool --pool -3
check --pool --pool N,2N
check --blocking --blocking 1
check --blocking --blocking -0.5
check --blocking --blocking nan
check --blocking --blocking x
check --blocking-kind --blocking-kind spin
check --work-us --work-us -5
check --work-us --work-us inf
check --duration --duration 0
check --duration --duration -1
check --warmup --warmup -1
check --repetitions --repetitions 0
check --posters --posters -1
check --posters --posters two
check --in-flight --in-flight 0
check --block-size --workload file --block-size 1000
check --block-size --workload file --block-size 0
check --file-size-mib --workload file --file-size-mib 0
check --outstanding --workload file --outstanding 0
check --pattern --workload file --pattern zigzag
check --op --workload file --op erase
check --file --workload file --file /nonexistent-dir/x.dat
# Linux has no kernel completion port, so no tagged-event I/O: refused, naming the flag.
check --skip-port-share --workload file --skip-port-share 0.5
check --skip-port-share --workload file --skip-port-share 1.5
check --connections --workload socket --connections 0
check --message-size --workload socket --message-size 0
check --messages-in-flight --workload socket --messages-in-flight -2

# An unwritable --json path: checked before anything runs.
"$bin" run --duration 0.2 --json /nonexistent-dir/out.json >"$dir/stdout" 2>"$dir/stderr"
rc=$?
if [[ $rc -ne 2 ]] || ! grep -q '^iocpbench: --json: ' "$dir/stderr"; then
  echo "FAIL: unwritable --json -> rc=$rc $(cat "$dir/stderr")"
  failures=$((failures + 1))
else
  echo "ok   --json: $(cat "$dir/stderr")"
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures bad-input case(s) failed"
  exit 1
fi
echo "all bad-input cases exit 2 with one line naming the flag"
