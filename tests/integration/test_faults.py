"""R5 faults through the real binary (docs/reliability.md): the file workload on a full and on a
read-only file system, a file truncated mid-run, a peer that resets its sockets mid-run.

Every fault is injected from outside the program: a small tmpfs (buffered I/O: tmpfs refuses
O_DIRECT) or a loop-mounted ext4 image (O_DIRECT), a read-only remount, another process that
truncates the file, `ss -K` killing the load generator's sockets (the kernel aborts them and
sends the server an RST). What each must produce: a clear one-line error with exit 1, or a run
that finishes with the errors counted in the results; never a crash, never a hang (every
subprocess has a timeout). Mounting needs root and a loop device; without them the full file
system falls back to RLIMIT_FSIZE (SIGXFSZ ignored, so a write past it fails with EFBIG) and
the read-only cases are skipped, saying why.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from binary_runner import run

BOUND = 60  # seconds: every run of the binary here ends well within this, or the test fails
IS_ROOT = os.geteuid() == 0


def sh(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=BOUND)


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got: {proc.stderr!r}"
    assert lines[0].startswith("iocpbench: "), lines[0]
    return lines[0]


def the_run(path: Path) -> dict:
    doc = json.loads(path.read_text())
    assert len(doc["points"]) == 1
    return doc["points"][0]["runs"][0]


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "2m"):
    where.mkdir(parents=True, exist_ok=True)
    proc = sh("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where))
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {proc.stderr.strip()}")
    try:
        yield where
    finally:
        sh("umount", "-l", str(where))


@contextlib.contextmanager
def ext4_loop(where: Path, image: Path, size_mib: int = 8):
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 is not installed")
    where.mkdir(parents=True, exist_ok=True)
    with open(image, "wb") as f:
        f.truncate(size_mib << 20)
    proc = sh("mkfs.ext4", "-q", "-F", "-m", "0", str(image))
    assert proc.returncode == 0, proc.stderr
    proc = sh("mount", "-o", "loop", str(image), str(where))
    if proc.returncode != 0:
        pytest.skip(f"cannot loop-mount an ext4 image: {proc.stderr.strip()}")
    try:
        yield where
    finally:
        sh("umount", "-l", str(where))


def small_fs(kind: str, tmp_path: Path):
    """A small file system; ("tmpfs", buffered I/O) or ("ext4", O_DIRECT)."""
    if not IS_ROOT:
        pytest.skip("mounting needs root (the RLIMIT_FSIZE test covers the full case)")
    if kind == "tmpfs":
        return tmpfs(tmp_path / "mnt")
    return ext4_loop(tmp_path / "mnt", tmp_path / "ext4.img")


FS_KINDS = [pytest.param("tmpfs", ["--buffered"], id="tmpfs-buffered"),
            pytest.param("ext4", [], id="ext4-loop-direct")]

FILE_RUN = ["run", "--workload", "file", "--pool", "4", "--concurrency", "2",
            "--outstanding", "8", "--warmup", "0.1"]


# ---- a full file system ----------------------------------------------------------------------

@pytest.mark.parametrize("kind,io", FS_KINDS)
def test_full_fs_when_creating_the_data_file_is_one_line_exit_1(binary, tmp_path, kind, io):
    with small_fs(kind, tmp_path) as mnt:
        out = tmp_path / "out.json"
        data = mnt / "data.dat"
        proc = run(binary, *FILE_RUN, *io, "--op", "write", "--file", str(data),
                   "--file-size-mib", "16", "--duration", "0.3", "--json", str(out), timeout=BOUND)
        assert proc.returncode == 1, (proc.returncode, proc.stderr)
        line = one_line_error(proc)
        assert "No space left on device" in line and str(data) in line, line
        assert not out.exists(), "no results file for a run that never started"
        assert list(mnt.iterdir()) == [] or all(p.name == "lost+found" for p in mnt.iterdir()), \
            "the partial temporary data file is removed"


@pytest.mark.parametrize("kind,io", FS_KINDS)
def test_full_fs_mid_run_counts_the_failed_writes(binary, tmp_path, kind, io):
    """A sparse data file larger than the file system: the writes that land in holes fill it,
    and from then on every such write fails with ENOSPC."""
    with small_fs(kind, tmp_path) as mnt:
        out = tmp_path / "out.json"
        data = mnt / "sparse.dat"
        with open(data, "wb") as f:
            f.truncate(64 << 20)
        proc = run(binary, *FILE_RUN, *io, "--op", "write", "--overwrite", "--pattern",
                   "sequential",
                   "--file", str(data), "--file-size-mib", "64", "--duration", "1.5",
                   "--json", str(out), timeout=BOUND)
        assert proc.returncode in (0, 1), (proc.returncode, proc.stderr)
        assert out.exists(), proc.stderr
        r = the_run(out)
        stats = r["workload_stats"]
        assert stats["io_errors"] > 0, stats
        assert r["errors"] > 0 and r["error_detail"]["completions_failed"] > 0, r["error_detail"]
        assert r["accounting"]["drained"] is True
        FINDINGS[f"full-{kind}"] = (f"exit {proc.returncode}, {stats['io_errors']} failed writes "
                                    f"counted, {r['ops']} good")


def test_full_fs_by_rlimit_fsize_counts_the_failed_writes(binary, tmp_path):
    """The fallback where mounting is impossible: RLIMIT_FSIZE below the file's end, SIGXFSZ
    ignored (so a write past the limit fails with EFBIG instead of killing the process)."""
    out = tmp_path / "out.json"
    data = tmp_path / "data.dat"
    with open(data, "wb") as f:
        f.truncate(16 << 20)
    limit = 4 << 20

    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run([str(binary), *FILE_RUN, "--buffered", "--op", "write", "--overwrite",
                           "--file",
                           str(data), "--file-size-mib", "16", "--duration", "1", "--json",
                           str(out)], capture_output=True, text=True, timeout=BOUND,
                          preexec_fn=limit_file_size)
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr)
    r = the_run(out)
    assert r["workload_stats"]["io_errors"] > 0, r["workload_stats"]
    assert r["errors"] > 0
    FINDINGS["full-rlimit"] = (f"exit {proc.returncode}, {r['workload_stats']['io_errors']} "
                               f"failed writes (EFBIG) counted, {r['ops']} good")


# ---- a read-only file system -----------------------------------------------------------------

@contextlib.contextmanager
def read_only_fs(tmp_path: Path):
    if not IS_ROOT:
        pytest.skip("a read-only mount needs root (root ignores a read-only file's mode, so "
                    "there is no unprivileged equivalent here)")
    with tmpfs(tmp_path / "ro", "8m") as mnt:
        with open(mnt / "data.dat", "wb") as f:
            f.write(os.urandom(4 << 20))
        proc = sh("mount", "-o", "remount,ro", str(mnt))
        assert proc.returncode == 0, proc.stderr
        yield mnt


@pytest.mark.parametrize("op", ["write", "mixed"])
def test_read_only_fs_refuses_writes_in_one_line(binary, tmp_path, op):
    with read_only_fs(tmp_path) as mnt:
        out = tmp_path / "out.json"
        proc = run(binary, *FILE_RUN, "--buffered", "--op", op, "--overwrite", "--file",
                   str(mnt / "data.dat"), "--file-size-mib", "4", "--duration", "0.3", "--json",
                   str(out), timeout=BOUND)
        assert proc.returncode == 2, (proc.returncode, proc.stderr)  # unusable: docs/reliability.md
        line = one_line_error(proc)
        assert "read-only file system" in line.lower() and "--file" in line, line
        assert not out.exists()


def test_read_only_fs_cannot_create_the_data_file(binary, tmp_path):
    with read_only_fs(tmp_path) as mnt:
        proc = run(binary, *FILE_RUN, "--buffered", "--file", str(mnt / "new.dat"),
                   "--file-size-mib", "4", "--duration", "0.3", timeout=BOUND)
        assert proc.returncode == 2, (proc.returncode, proc.stderr)  # unusable: docs/reliability.md
        line = one_line_error(proc)
        assert "Read-only file system" in line and "new.dat" in line, line


def test_read_only_fs_still_serves_reads(binary, tmp_path):
    with read_only_fs(tmp_path) as mnt:
        out = tmp_path / "out.json"
        proc = run(binary, *FILE_RUN, "--buffered", "--op", "read", "--file",
                   str(mnt / "data.dat"), "--file-size-mib", "4", "--duration", "0.3",
                   "--json", str(out), timeout=BOUND)
        assert proc.returncode == 0, proc.stderr
        r = the_run(out)
        assert r["errors"] == 0 and r["ops"] > 0


# ---- a file truncated mid-run ----------------------------------------------------------------

@pytest.mark.parametrize("io,new_size", [pytest.param([], 0, id="direct-to-0"),
                                         pytest.param(["--buffered"], 8 << 20 | 100,
                                                      id="buffered-to-8MiB+100")])
def test_file_truncated_mid_run_counts_the_short_reads(binary, tmp_path, io, new_size):
    data = tmp_path / "data.dat"
    with open(data, "wb") as f:
        for _ in range(32):
            f.write(os.urandom(1 << 20))
    out = tmp_path / "out.json"
    proc = subprocess.Popen([str(binary), *FILE_RUN, *io, "--op", "read", "--file", str(data),
                             "--file-size-mib", "32", "--duration", "2", "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.8)  # inside the measured window (0.1 s warm-up, 2 s window)
        os.truncate(data, new_size)  # another process shrinks the file under the reads
        stdout, stderr = proc.communicate(timeout=BOUND)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=BOUND)
    if stderr.startswith("iocpbench: --buffered") or "refuses O_DIRECT" in stderr:
        pytest.skip(f"the temporary directory refuses O_DIRECT: {stderr.strip()}")
    assert proc.returncode in (0, 1), (proc.returncode, stderr)
    r = the_run(out)
    stats = r["workload_stats"]
    assert stats["short_transfers"] + stats["io_errors"] > 0, stats
    assert r["errors"] > 0 and r["error_detail"]["completions_failed"] > 0, r["error_detail"]
    assert r["accounting"]["drained"] is True
    FINDINGS[f"truncate-{'buffered' if io else 'direct'}"] = (
        f"exit {proc.returncode}, {stats['short_transfers']} short reads + "
        f"{stats['io_errors']} I/O errors counted, {r['ops']} good")


# ---- a peer that resets its sockets mid-run --------------------------------------------------

def listening_port(pid: int) -> int | None:
    proc = sh("ss", "-Htlnp")
    for line in proc.stdout.splitlines():
        if f"pid={pid}," in line:
            m = re.search(r"127\.0\.0\.1:(\d+)", line)
            if m:
                return int(m.group(1))
    return None


@pytest.mark.skipif(shutil.which("ss") is None, reason="ss (iproute2) is not installed")
@pytest.mark.parametrize("which", ["one", "all"])
def test_peer_reset_mid_run_is_counted_or_clear(binary, tmp_path, which):
    """`ss -K` destroys load-generator sockets of this process only (their destination is its
    listening port): the generator sees ECONNABORTED, the server an RST (ECONNRESET)."""
    out = tmp_path / "out.json"
    proc = subprocess.Popen([str(binary), "run", "--workload", "socket", "--connections", "4",
                             "--pool", "4", "--concurrency", "2", "--warmup", "0.1",
                             "--duration", "2", "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.monotonic() + 10
        while port is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            port = listening_port(proc.pid)
        assert port is not None, "the socket workload's listening port never showed up"
        time.sleep(0.6)  # inside the measured window
        if which == "one":
            conns = [line.split() for line in sh("ss", "-Htn", "dst", "127.0.0.1",
                                                  "dport", "=", f":{port}").stdout.splitlines()]
            assert conns, "no connections to kill"
            local_port = conns[0][3].rsplit(":", 1)[1]
            kill = sh("ss", "-K", "dst", "127.0.0.1", "dport", "=", f":{port}",
                      "sport", "=", f":{local_port}")
        else:
            kill = sh("ss", "-K", "dst", "127.0.0.1", "dport", "=", f":{port}")
        killed = [line for line in kill.stdout.splitlines()[1:] if line.strip()]
        if not killed:
            pytest.skip(f"ss -K destroyed nothing (kernel without SOCK_DESTROY?): {kill.stderr}")
        stdout, stderr = proc.communicate(timeout=BOUND)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=BOUND)
    assert proc.returncode in (0, 1), (proc.returncode, stderr)  # never a signal
    if proc.returncode == 1 and not out.exists():
        line = one_line_error(subprocess.CompletedProcess([], 1, stdout, stderr))
        FINDINGS[f"reset-{which}"] = f"exit 1: {line}"
        return
    r = the_run(out)
    stats = r["workload_stats"]
    assert r["errors"] > 0, (r["error_detail"], stats)
    assert stats["generator_errors"] + stats["server_errors"] + stats["unexpected_eof"] > 0, stats
    FINDINGS[f"reset-{which}"] = (
        f"exit {proc.returncode}, errors {r['errors']} (generator {stats['generator_errors']}, "
        f"server {stats['server_errors']}, eof {stats['unexpected_eof']}), {r['ops']} good")


# What each fault produced, printed at the end (pytest -s, or the -rA summary), for
# docs/reliability.md.
FINDINGS: dict[str, str] = {}


def teardown_module(module):
    for name, what in sorted(FINDINGS.items()):
        print(f"fault {name}: {what}")
