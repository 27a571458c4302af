#!/usr/bin/env bash
# The Windows part of the tests, on Linux: cross-builds iocpbench.exe, the test programs and
# bench/ (Google Benchmark from third_party/) with MinGW-w64 (preset mingw, build/mingw) and runs
# every test under Wine (the two benchmark smoke runs included), inside one persistent
# wineserver (started before ctest, stopped after: ~0.05 s a test instead of ~2.6 s). Then
# checks that `iocpbench.exe probe` reports the kernel's port under Wine, and `info` the
# Windows version and the machine's topology (each field a value or null with the reason).
# Installs MinGW-w64 and Wine when missing. Under Wine the conformance suite skips, with the
# reason, each known Wine deviation it observes (docs/windows.md).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

scripts/setup-deps.sh --windows

build="$PWD/build/mingw"
export WINEPREFIX="$build/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
mkdir -p "$WINEPREFIX"
wineserver -k 2>/dev/null || true   # a server left over from an interrupted run
wineserver -p
trap 'wineserver -k 2>/dev/null || true' EXIT
# Creates or updates the prefix once (~5 s the first time) instead of inside a timed test.
wine cmd /c exit 0 >/dev/null 2>&1 || true

echo "== Windows (MinGW-w64 cross build, tests under Wine $(wine --version)): configure, build, test"
cmake --workflow --preset mingw

exe="$build/harness/iocpbench.exe"
echo "== iocpbench.exe info (under Wine)"
wine "$exe" info --json "Z:$build/info-wine.json" >/dev/null
echo "== iocpbench.exe probe --json (under Wine; every probe is time-bounded)"
timeout 120 wine "$exe" probe --json "Z:$build/probe-wine.json"
python3 - "$build/info-wine.json" "$build/probe-wine.json" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))["machine"]
probe = json.load(open(sys.argv[2]))
assert info["os"] == "Windows" and info["os_version"], info
assert info["wine"] is True and info["wine_version"], info
# The configuration built, read from the build (not CMAKE_BUILD_TYPE, which multi-config
# generators leave empty).
assert json.load(open(sys.argv[1]))["tool"]["build_type"] == "Release"
# The machine's shape: every field present, each a value or null with the reason (Wine may
# list fewer relations than Windows, and gives no clock but ~MHz).
topology = info["topology"]
fields = ("sockets", "physical_cores", "logical_cpus", "threads_per_core", "numa_nodes",
          "numa_node_cpus", "caches", "cpu_model", "base_mhz", "max_mhz", "current_mhz")
for name in fields:
    assert name in topology, (name, topology)
    assert (topology[name] is None) == (name in topology["unavailable"]), (name, topology)
assert all(topology["unavailable"].values()), topology
assert topology["max_mhz"] is None and topology["current_mhz"] is None, topology
if topology["physical_cores"] is not None:
    assert info["cores"] == topology["physical_cores"] <= topology["logical_cpus"], topology
assert probe["backend"] == "win32" and probe["wine"] is True, probe
semantics = probe["semantics"]
for name in ("lifo_wakeup", "concurrency_cap", "abandon_on_close"):
    assert semantics[name]["value"] is False and semantics[name]["evidence"], (name, semantics[name])
assert semantics["fifo_packets"]["value"] is True, semantics["fifo_packets"]
print(f"info: {info['os_version']}, Wine {info['wine_version']}, "
      f"topology {topology['sockets']} socket(s), {topology['physical_cores']} core(s), "
      f"not told: {sorted(topology['unavailable'])}; "
      "probe: backend win32, wine true, Wine's missing semantics reported false with evidence")
PY

# Each workload through the real program under Wine: a valid results file (the analysis
# package's loader checks it against results/schema/results.schema.json), conservation, and
# context switches reported unavailable (null + the reason), never 0.
scripts/setup-python.sh
for workload in post file socket; do
  echo "== iocpbench.exe run --workload $workload (under Wine)"
  timeout 120 wine "$exe" run --workload "$workload" --file-size-mib 16 --concurrency 2 --pool 3 \
    --duration 0.3 --warmup 0.1 --force --json "Z:$build/run-$workload-wine.json"
done
echo "== iocpbench.exe run --workload file --skip-port-share 0.5 (under Wine)"
timeout 120 wine "$exe" run --workload file --file-size-mib 16 --skip-port-share 0.5 \
  --concurrency 2 --pool 3 --duration 0.3 --warmup 0.1 --force --json "Z:$build/run-skip-wine.json"
.venv/bin/python - "$build" <<'PY'
import sys
from iocpbench_analysis.load import load_results
build = sys.argv[1]
for name in ("post", "file", "socket", "skip"):
    data = load_results(f"{build}/run-{name}-wine.json").data
    assert data["machine"]["wine"] is True, data["machine"]
    point = data["points"][0]
    run = point["runs"][0]
    assert point["port"] == "win32", point["port"]
    assert run["errors"] == 0 and run["ops"] > 0, (name, run["errors"], run["error_detail"])
    assert run["accounting"]["drained"] and run["accounting"]["left_in_port"] == 0, run["accounting"]
    switches = run["context_switches"]
    assert run["context_switches_per_kop"] is None and switches["voluntary"] is None, switches
    assert "Wine" in switches["unavailable"], switches
    stats = run["workload_stats"]
    if name in ("file", "skip"):
        assert run["bytes"] == run["ops"] * 4096, (run["bytes"], run["ops"])
    if name == "socket":
        assert stats["mismatched_bytes"] == 0, stats
        assert stats["messages_verified"] == stats["messages_sent"] > 0, stats
        # Wine's TCP provider declares XP1_IFS_HANDLES (SO_PROTOCOL_INFOW), so every server
        # socket is asked for, and granted, skip on success; a socket whose provider is not IFS
        # would be counted in non_ifs_provider_sockets and left in the usual packet mode.
        assert stats["non_ifs_provider_sockets"] == 0, stats
        assert stats["skip_completion_port_on_success_sockets"] == stats["connections"] > 0, stats
    if name == "skip":
        assert stats["skip_port"]["ops"] > 0 and stats["skip_port"]["packets_seen"] == 0, stats
    print(f"run {name}: valid results, {run['ops']} ops, errors 0, context switches unavailable")
PY
# --skip-on-success on and off for the file and socket workloads under Wine: what each asked,
# what Wine granted, and that every completion, packet or inline, is counted exactly once.
for workload in file socket; do
  for mode in on off; do
    echo "== iocpbench.exe run --workload $workload --skip-on-success $mode (under Wine)"
    timeout 120 wine "$exe" run --workload "$workload" --file-size-mib 16 --concurrency 2 \
      --pool 3 --duration 0.3 --warmup 0.1 --skip-on-success "$mode" --force \
      --json "Z:$build/run-$workload-skip-$mode-wine.json"
  done
done
.venv/bin/python - "$build" <<'PY'
import sys
from iocpbench_analysis.load import load_results
build = sys.argv[1]
for workload in ("file", "socket"):
    for mode in ("on", "off"):
        data = load_results(f"{build}/run-{workload}-skip-{mode}-wine.json").data
        point = data["points"][0]
        run = point["runs"][0]
        assert point["skip_on_success"] == {"requested": mode, "asked": mode == "on"}, point
        assert run["errors"] == 0 and run["ops"] > 0, (workload, mode, run["error_detail"])
        accounting = run["accounting"]
        assert accounting["drained"] and accounting["left_in_port"] == 0, accounting
        stats = run["workload_stats"]
        block = stats["skip_on_success"]
        assert block["requested"] == mode and block["asked"] == (mode == "on"), block
        assert block["immediate"] == block["handled_inline"] + block["posted_by_issuer"], block
        if mode == "off":
            # Nothing asked: every completion is a packet.
            assert block["granted"] == 0 and block["immediate"] == 0, block
            assert accounting["completions_inline_total"] == 0, accounting
        if workload == "file":
            assert run["bytes"] == run["ops"] * 4096, (run["bytes"], run["ops"])
            # Every inline completion the transport handed back was handled by the pool.
            assert accounting["completions_inline_total"] == block["handled_inline"], (block, accounting)
            # Every completion once: a packet or inline.
            assert (accounting["completions_handled_total"]
                    == accounting["packets_handled_total"] + accounting["completions_inline_total"]), accounting
            assert block["immediate"] <= stats["immediate_successes"], (block, stats)
            if mode == "on":
                # Wine grants the mode on the file. Where an I/O completes at once, a worker's
                # re-issue is handled inline (Wine 8 returns every overlapped file I/O pending,
                # so there are none: docs/windows.md).
                assert block["handles"] == block["granted"] == 1, block
                if block["immediate"] > 0:
                    assert block["handled_inline"] > 0, block
        else:
            assert stats["mismatched_bytes"] == 0, stats
            assert stats["messages_verified"] == stats["messages_sent"] > 0, stats
            if mode == "on":
                assert block["granted"] == block["handles"] == stats["connections"] > 0, block
            else:
                assert stats["skip_completion_port_on_success_sockets"] == 0, stats
                assert stats["immediate"]["sends_completed_inline"] == 0, stats
                assert stats["immediate"]["recvs_completed_inline_posted"] == 0, stats
        print(f"run {workload} --skip-on-success {mode}: {run['throughput_ops_per_s']:.0f} ops/s, "
              f"granted {block['granted']}/{block['handles']}, immediate {block['immediate']} "
              f"(inline {block['handled_inline']}, posted {block['posted_by_issuer']}), "
              f"packets {accounting['packets_handled_total']}, "
              f"inline completions {accounting['completions_inline_total']}")
PY
echo "== Windows tests passed in $((SECONDS - start)) s"
