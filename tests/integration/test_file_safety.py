"""iocpbench never destroys what it did not create (docs/reliability.md, "File safety").

Through the real binary, on real files: an existing --file is never resized, renamed over or
written without --overwrite; a results file another iocpbench process is writing is refused
(and a dead process's lock blocks nothing); every unusable path is exit 2 and a fault while
creating the data file exit 1, each as one line naming the flag. The default data file goes to
TMPDIR, which every test points at its own folder (so the machine's shared default files are
never touched). Every subprocess has a timeout; conftest.py bounds each test as a whole.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

BOUND = 60  # seconds: every run of the binary here ends well within this, or the test fails
IS_ROOT = os.geteuid() == 0
ROOT = Path(__file__).resolve().parents[2]

FILE_RUN = ["run", "--workload", "file", "--pool", "2", "--concurrency", "2", "--outstanding",
            "4", "--warmup", "0.05", "--duration", "0.2", "--buffered"]
SWEEP_SLOW = ["sweep", "--workload", "post", "--pool", "2", "--concurrency", "2", "--blocking",
              "0", "--repetitions", "200", "--duration", "0.2", "--warmup", "0", "--no-probe",
              "--quiet", "--force"]  # --force: some tests start it on a file another run wrote


def call(binary: Path, *args: str, tmpdir: Path, timeout: float = BOUND,
         **kwargs) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TMPDIR=str(tmpdir))
    return subprocess.run([str(binary), *args], capture_output=True, text=True,
                          timeout=timeout, env=env, **kwargs)


def one_line(proc: subprocess.CompletedProcess[str], code: int, flag: str) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got: {proc.stderr!r}"
    assert lines[0].startswith(f"iocpbench: {flag}: "), lines[0]
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def user_file(path: Path, mib: float) -> str:
    """A file the user made (random bytes, no iocpbench marker); returns its digest."""
    path.write_bytes(os.urandom(int(mib * (1 << 20))))
    return digest(path)


def the_stats(out: Path) -> dict:
    doc = json.loads(out.read_text())
    return doc["points"][0]["runs"][0]["workload_stats"]


def leftovers(folder: Path) -> list[str]:
    """Temporary, probe and lock files iocpbench may have left behind."""
    return sorted(p.name for p in folder.iterdir()
                  if ".tmp" in p.name or ".probe." in p.name or p.name.endswith(".lock"))


# ---- 0. a results file is replaced only when the user asks ---------------------------------------

TINY_RUN = ["run", "--duration", "0.05", "--warmup", "0", "--pool", "2", "--concurrency", "2"]
TINY_TUNE = ["tune", "--workload", "post", "--blocking", "0", "--duration", "0.05", "--warmup", "0",
             "--quiet"]
TINY_SWEEP = ["sweep", "--workload", "post", "--pool", "2", "--concurrency", "2", "--blocking",
              "0", "--repetitions", "1", "--duration", "0.05", "--warmup", "0", "--no-probe",
              "--quiet"]


def results_with_points(path: Path, points: int) -> str:
    """A results file holding `points` points (the refusal reads only `points`); its digest."""
    path.write_text(json.dumps({"schema_version": 1, "points": [{"id": f"p{i}"} for i in range(points)]}))
    return digest(path)


@pytest.mark.parametrize("command", ["run", "sweep", "tune"])
def test_a_results_file_with_points_is_refused_and_kept(binary, tmp_path, command):
    out = tmp_path / "precious.json"
    before = results_with_points(out, 36)
    args = {"run": TINY_RUN, "sweep": TINY_SWEEP, "tune": TINY_TUNE}[command]
    proc = call(binary, *args, "--json", str(out), tmpdir=tmp_path)
    line = one_line(proc, 2, "--json")
    assert "36 results points" in line and "--force" in line, line
    if command == "sweep":
        assert "--resume" in line, "a sweep's file may be one to finish"
    assert proc.stdout == ""
    assert digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious.json"], "nothing created"


def test_a_file_that_is_not_a_results_file_is_refused_and_kept(binary, tmp_path):
    out = tmp_path / "notes.json"
    out.write_text("my notes, not JSON\n")
    proc = call(binary, *TINY_RUN, "--json", str(out), tmpdir=tmp_path)
    line = one_line(proc, 2, "--json")
    assert "not an iocpbench results file" in line, line
    assert out.read_text() == "my notes, not JSON\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.json"]


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_force_replaces_a_results_file(binary, tmp_path, command):
    out = tmp_path / "old.json"
    results_with_points(out, 3)
    args = TINY_RUN if command == "run" else TINY_SWEEP
    proc = call(binary, *args, "--json", str(out), "--force", tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert len(doc["points"]) == 1 and doc["points"][0].get("id") != "p0", "replaced, not merged"
    assert leftovers(tmp_path) == []


def test_an_empty_file_or_one_without_points_is_written(binary, tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("")
    proc = call(binary, *TINY_RUN, "--json", str(empty), tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(empty.read_text())["points"]) == 1
    no_points = tmp_path / "none.json"
    results_with_points(no_points, 0)
    proc = call(binary, *TINY_RUN, "--json", str(no_points), tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_a_second_run_onto_the_first_runs_file_is_refused(binary, tmp_path):
    out = tmp_path / "first.json"
    assert call(binary, *TINY_RUN, "--json", str(out), tmpdir=tmp_path).returncode == 0
    before = digest(out)
    proc = call(binary, *TINY_RUN, "--json", str(out), tmpdir=tmp_path)
    assert "1 results point" in one_line(proc, 2, "--json")
    assert digest(out) == before


def test_resume_into_another_file_that_holds_points_is_refused(binary, tmp_path):
    source = tmp_path / "source.json"
    assert call(binary, *TINY_SWEEP, "--json", str(source), tmpdir=tmp_path).returncode == 0
    target = tmp_path / "target.json"
    before = results_with_points(target, 2)
    proc = call(binary, "sweep", "--resume", str(source), "--json", str(target), tmpdir=tmp_path)
    one_line(proc, 2, "--json")
    assert digest(target) == before


# ---- 1. an existing --file is used as it is ----------------------------------------------------

def test_a_small_text_file_is_refused_and_kept(binary, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    out = tmp_path / "out.json"
    proc = call(binary, *FILE_RUN, "--file", str(notes), "--json", str(out), tmpdir=tmp_path)
    line = one_line(proc, 2, "--file")
    assert "less than one block" in line and "notes.txt" in line, line
    assert notes.read_text() == "my notes\n", "the user's file is untouched"
    assert not out.exists()
    assert leftovers(tmp_path) == []


def test_an_existing_file_is_never_resized_or_written_by_reads(binary, tmp_path):
    data = tmp_path / "data.bin"
    before = user_file(data, 1)
    out = tmp_path / "out.json"
    proc = call(binary, *FILE_RUN, "--file", str(data), "--file-size-mib", "8", "--json",
                str(out), tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert data.stat().st_size == 1 << 20, "--file-size-mib applies only to a created file"
    assert digest(data) == before, "a read workload never writes"
    stats = the_stats(out)
    assert stats["file_created"] is False and stats["file_written"] is False, stats
    assert stats["file_bytes"] == 1 << 20, "reads stay within the file's size"
    assert stats["io_errors"] == 0 and stats["short_transfers"] == 0, stats
    assert not Path(str(data) + ".iocpbench").exists(), "no marker for a user's file"


@pytest.mark.parametrize("kind", ["proc", "directory", "fifo", "dangling-symlink"])
def test_an_unusable_path_is_exit_2_naming_file(binary, tmp_path, kind):
    out = tmp_path / "out.json"
    if kind == "proc":
        path, expected = Path("/proc/version"), "less than one block"
    elif kind == "directory":
        path, expected = tmp_path / "folder", "is a directory"
        path.mkdir()
    elif kind == "fifo":
        path, expected = tmp_path / "pipe", "is a FIFO"
        os.mkfifo(path)
    else:
        path, expected = tmp_path / "link", "dangling symbolic link"
        os.symlink(tmp_path / "nowhere" / "target.dat", path)
    for op in ("read", "write"):
        proc = call(binary, *FILE_RUN, "--op", op, "--file", str(path), "--json", str(out),
                    tmpdir=tmp_path)
        line = one_line(proc, 2, "--file")
        assert expected in line and str(path) in line, line
        assert not out.exists()
    if kind == "dangling-symlink":
        assert not (tmp_path / "nowhere").exists(), "nothing is created through the link"
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(path).st_mode)


def test_a_created_file_is_recorded_and_never_extended_later(binary, tmp_path):
    data = tmp_path / "new.dat"
    out = tmp_path / "out.json"
    proc = call(binary, *FILE_RUN, "--file", str(data), "--file-size-mib", "4", "--json",
                str(out), tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert data.stat().st_size == 4 << 20
    assert the_stats(out)["file_created"] is True
    assert Path(str(data) + ".iocpbench").exists(), "the marker that says iocpbench made it"
    assert leftovers(tmp_path) == [], "no temporary, probe or lock file left"
    # An existing --file, even one iocpbench made, keeps its size.
    proc = call(binary, *FILE_RUN, "--file", str(data), "--file-size-mib", "8", "--json",
                str(out), "--force", tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert data.stat().st_size == 4 << 20
    stats = the_stats(out)
    assert stats["file_created"] is True and stats["file_bytes"] == 4 << 20, stats


def test_the_default_file_is_recreated_only_when_iocpbench_made_it(binary, tmp_path):
    default = tmp_path / "iocpbench-4mib.dat"
    out = tmp_path / "out.json"
    args = [*FILE_RUN, "--file-size-mib", "4", "--json", str(out), "--force"]  # one results file, reused
    assert call(binary, *args, tmpdir=tmp_path).returncode == 0
    assert default.stat().st_size == 4 << 20 and the_stats(out)["file_created"] is True
    os.truncate(default, 1 << 20)  # ours, of the wrong size: iocpbench may recreate it
    proc = call(binary, *args, tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert default.stat().st_size == 4 << 20
    # A file at the default name that iocpbench did not make is used as it is, never replaced.
    default.unlink()
    Path(str(default) + ".iocpbench").unlink()
    before = user_file(default, 2)
    proc = call(binary, *args, tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert digest(default) == before and the_stats(out)["file_created"] is False
    proc = call(binary, *args, "--op", "write", tmpdir=tmp_path)
    one_line(proc, 2, "--overwrite")
    assert digest(default) == before


def test_a_file_system_that_refuses_o_direct_is_exit_2_naming_file(binary, tmp_path):
    if not IS_ROOT:
        pytest.skip("mounting ramfs (which refuses O_DIRECT) needs root")
    mnt = tmp_path / "ram"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "ramfs", "ramfs", str(mnt)], capture_output=True,
                      timeout=BOUND).returncode != 0:
        pytest.skip("cannot mount ramfs here")
    try:
        existing = mnt / "data.bin"
        user_file(existing, 1)
        direct = [a for a in FILE_RUN if a != "--buffered"]
        for path in (existing, mnt / "new.dat"):
            proc = call(binary, *direct, "--file", str(path), "--file-size-mib", "1",
                        tmpdir=tmp_path)
            line = one_line(proc, 2, "--file")
            assert "O_DIRECT" in line and "--buffered" in line, line
        assert sorted(p.name for p in mnt.iterdir()) == ["data.bin"], "the probe is removed"
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=BOUND)


def test_a_block_device_is_read_within_its_size_and_written_only_with_consent(binary, tmp_path):
    if not IS_ROOT or shutil.which("losetup") is None:
        pytest.skip("a loop device needs root and losetup")
    image = tmp_path / "disk.img"
    image.write_bytes(os.urandom(4 << 20))
    before = digest(image)
    attach = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True,
                            text=True, timeout=BOUND)
    if attach.returncode != 0:
        pytest.skip(f"cannot attach a loop device: {attach.stderr.strip()}")
    device = attach.stdout.strip()
    try:
        out = tmp_path / "out.json"
        proc = call(binary, *FILE_RUN, "--file", device, "--file-size-mib", "64", "--json",
                    str(out), tmpdir=tmp_path)
        assert proc.returncode == 0, proc.stderr
        stats = the_stats(out)
        assert stats["file_bytes"] == 4 << 20 and stats["file_created"] is False, stats
        assert stats["io_errors"] == 0 and stats["short_transfers"] == 0, stats
        proc = call(binary, *FILE_RUN, "--op", "write", "--file", device, tmpdir=tmp_path)
        one_line(proc, 2, "--overwrite")
    finally:
        subprocess.run(["losetup", "-d", device], capture_output=True, timeout=BOUND)
    assert digest(image) == before, "the device's data is unchanged"


# ---- 2. writes into someone else's file need --overwrite ---------------------------------------

@pytest.mark.parametrize("op", ["write", "mixed"])
def test_writing_a_users_file_needs_overwrite(binary, tmp_path, op):
    data = tmp_path / "data.bin"
    before = user_file(data, 1)
    out = tmp_path / "out.json"
    proc = call(binary, *FILE_RUN, "--op", op, "--file", str(data), "--json", str(out),
                tmpdir=tmp_path)
    line = one_line(proc, 2, "--overwrite")
    assert "not created by iocpbench" in line and str(data) in line, line
    assert digest(data) == before and not out.exists()
    proc = call(binary, *FILE_RUN, "--op", op, "--overwrite", "--file", str(data), "--json",
                str(out), tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    stats = the_stats(out)
    assert stats["file_written"] is True and stats["file_created"] is False, stats
    assert json.loads(out.read_text())["points"][0]["workload_params"]["overwrite"] is True
    assert data.stat().st_size == 1 << 20, "writes stay within the file"
    assert digest(data) != before, "the run did write (with consent)"


def test_iocpbench_writes_its_own_file_but_not_one_renamed_over_it(binary, tmp_path):
    data = tmp_path / "own.dat"
    out = tmp_path / "out.json"
    proc = call(binary, *FILE_RUN, "--op", "write", "--file", str(data), "--file-size-mib", "2",
                "--json", str(out), tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert the_stats(out)["file_created"] is True and the_stats(out)["file_written"] is True
    proc = call(binary, *FILE_RUN, "--op", "write", "--file", str(data), tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr  # made by iocpbench: no consent needed
    # The user renames a file of theirs over it: the marker no longer names this file.
    theirs = tmp_path / "theirs.dat"
    before = user_file(theirs, 2)
    os.replace(theirs, data)
    proc = call(binary, *FILE_RUN, "--op", "write", "--file", str(data), tmpdir=tmp_path)
    one_line(proc, 2, "--overwrite")
    assert digest(data) == before


# ---- 3. a results file that another iocpbench process is writing -------------------------------

def sweep_written(out: Path) -> bool:
    """Whether `out` holds a sweep's results file (not yet, or still another command's)."""
    try:
        doc = json.loads(out.read_text())
    except (OSError, ValueError):
        return False
    return "command" not in doc.get("sweep", {})


@contextlib.contextmanager
def sweep_holding(binary: Path, out: Path, tmpdir: Path, written: bool = False):
    """A long sweep writing `out`; yields it once its lock file names it (and, with `written`,
    once it has written `out` itself: it takes the lock before its first write)."""
    proc = subprocess.Popen([str(binary), *SWEEP_SLOW, "--json", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, TMPDIR=str(tmpdir)))
    lock = Path(str(out) + ".lock")
    try:
        deadline = time.monotonic() + BOUND
        while time.monotonic() < deadline and proc.poll() is None:
            if lock.exists() and lock.read_text() == f"iocpbench pid {proc.pid}\n" and (
                    not written or sweep_written(out)):
                break
            time.sleep(0.02)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert lock.read_text() == f"iocpbench pid {proc.pid}\n"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=BOUND)
        if proc.stderr:
            proc.stderr.close()


def test_a_results_file_in_use_is_refused_by_run_sweep_tune_and_resume(binary, tmp_path):
    out = tmp_path / "shared.json"
    with sweep_holding(binary, out, tmp_path) as first:
        others = {
            "run": ["run", "--duration", "0.1", "--json", str(out)],
            "sweep": ["sweep", "--quick", "--no-probe", "--json", str(out)],
            "tune": ["tune", "--workload", "post", "--blocking", "0", "--json", str(out)],
            "resume": ["sweep", "--resume", str(out)],
            "resume-elsewhere": ["sweep", "--resume", str(out), "--json",
                                 str(tmp_path / "copy.json")],
        }
        for name, args in others.items():
            proc = call(binary, *args, tmpdir=tmp_path)
            flag = "--json" if name in ("run", "sweep", "tune") else "--resume"
            line = one_line(proc, 2, flag)
            assert f"pid {first.pid}" in line and "another iocpbench process" in line, line
        assert not (tmp_path / "copy.json").exists()
        assert first.poll() is None, "the first writer was not disturbed"
        first.send_signal(signal.SIGINT)  # ends it cleanly: the file keeps its finished runs
        first.wait(timeout=BOUND)
        assert first.returncode == 130
    doc = json.loads(out.read_text())
    assert doc["sweep"]["repetitions"] == 200 and doc["sweep"]["complete"] is False
    assert not Path(str(out) + ".lock").exists(), "the lock file is removed on exit"


def test_a_dead_writers_lock_blocks_nothing(binary, tmp_path):
    out = tmp_path / "crash.json"
    with sweep_holding(binary, out, tmp_path) as first:
        first.kill()  # SIGKILL: no chance to clean up
        first.wait(timeout=BOUND)
    lock = Path(str(out) + ".lock")
    assert lock.exists(), "the crash left its lock file behind"
    proc = call(binary, "run", "--duration", "0.1", "--warmup", "0", "--pool", "2", "--json",
                str(out), "--force", tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["sweep"]["command"] == "run"
    assert not lock.exists()
    # A resume after the crash works too (killed once the sweep has written its own file: a
    # kill between its lock and its first write would leave the `run` file above in place).
    with sweep_holding(binary, out, tmp_path, written=True) as first:
        first.kill()
        first.wait(timeout=BOUND)
    proc = call(binary, "sweep", "--resume", str(out), "--repetitions", "1", tmpdir=tmp_path)
    line = one_line(proc, 2, "--resume")  # past the lock: the grid check (a cheap refusal)
    assert "grid differs" in line, line


def test_a_foreign_file_at_the_lock_name_is_refused_and_kept(binary, tmp_path):
    out = tmp_path / "out.json"
    lock = Path(str(out) + ".lock")
    lock.write_text("someone else's file\n")
    proc = call(binary, "run", "--duration", "0.1", "--json", str(out), tmpdir=tmp_path)
    line = one_line(proc, 2, "--json")
    assert "not an iocpbench lock file" in line, line
    assert lock.read_text() == "someone else's file\n" and not out.exists()


def test_bad_input_after_the_lock_leaves_no_lock_file(binary, tmp_path):
    out = tmp_path / "out.json"
    proc = call(binary, "sweep", "--pool", "0", "--json", str(out), tmpdir=tmp_path)
    one_line(proc, 2, "--pool")
    assert list(tmp_path.iterdir()) == []


def test_two_runs_creating_the_default_file_at_once_share_it_whole(binary, tmp_path):
    """Both start with no data file; one creates it under <file>.lock, the other waits and then
    reads the whole file: no short reads, one file of the right size, nothing left over."""
    env = dict(os.environ, TMPDIR=str(tmp_path))
    outs = [tmp_path / f"r{i}.json" for i in range(2)]
    procs = [subprocess.Popen([str(binary), *FILE_RUN, "--file-size-mib", "64", "--json",
                               str(o)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, env=env) for o in outs]
    errors = [p.communicate(timeout=BOUND)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    assert (tmp_path / "iocpbench-64mib.dat").stat().st_size == 64 << 20
    created = []
    for out in outs:
        stats = the_stats(out)
        assert stats["short_transfers"] == 0 and stats["io_errors"] == 0, stats
        assert stats["file_bytes"] == 64 << 20
        created.append(stats["file_created"])
    assert created == [True, True], "both use the file iocpbench made"
    assert leftovers(tmp_path) == []


# ---- 4. file-system errors on a path the user gave ---------------------------------------------

@contextlib.contextmanager
def mounted(where: Path, *options: str):
    where.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", *options, "tmpfs", str(where)],
                          capture_output=True, text=True, timeout=BOUND)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=BOUND)


def test_a_read_only_mount_is_exit_2_naming_file(binary, tmp_path):
    if not IS_ROOT:
        pytest.skip("a read-only mount needs root (root ignores a read-only file's mode)")
    with mounted(tmp_path / "ro", "-o", "ro,size=8m") as mnt:
        proc = call(binary, *FILE_RUN, "--file", str(mnt / "new.dat"), "--file-size-mib", "1",
                    tmpdir=tmp_path)
        line = one_line(proc, 2, "--file")
        assert "Read-only file system" in line and "new.dat" in line, line
    with mounted(tmp_path / "ro2", "-o", "size=8m") as mnt:
        data = mnt / "data.bin"
        before = user_file(data, 1)
        proc = subprocess.run(["mount", "-o", "remount,ro", str(mnt)], capture_output=True,
                              text=True, timeout=BOUND)
        assert proc.returncode == 0, proc.stderr
        for op in ("write", "mixed"):
            proc = call(binary, *FILE_RUN, "--op", op, "--overwrite", "--file", str(data),
                        tmpdir=tmp_path)
            line = one_line(proc, 2, "--file")
            assert "read-only file system" in line, line
        proc = call(binary, *FILE_RUN, "--file", str(data), tmpdir=tmp_path)
        assert proc.returncode == 0, proc.stderr  # reads still run
        assert digest(data) == before


def test_a_file_size_limit_while_creating_is_exit_1_naming_file(binary, tmp_path):
    """ENOSPC-like: RLIMIT_FSIZE of 4 MiB below a 16 MiB file, SIGXFSZ ignored (so the write
    fails with EFBIG instead of killing the process). A fault during the run: exit 1."""
    data = tmp_path / "big.dat"
    out = tmp_path / "out.json"
    limit = 4 << 20

    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = call(binary, *FILE_RUN, "--file", str(data), "--file-size-mib", "16", "--json",
                str(out), tmpdir=tmp_path, preexec_fn=limit_file_size)
    line = one_line(proc, 1, "--file")
    assert "cannot fill" in line and "File too large" in line and str(data) in line, line
    assert not data.exists() and not out.exists()
    assert leftovers(tmp_path) == [], "the partial temporary file and the lock are removed"


def unprivileged_runner() -> list[str] | None:
    """A command prefix that runs as nobody, or None."""
    if not IS_ROOT:
        return None
    if shutil.which("setpriv"):
        return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    if shutil.which("runuser"):
        return ["runuser", "-u", "nobody", "--"]
    return None


def test_permission_denied_as_a_non_root_user_is_exit_2_naming_file(binary):
    runner = unprivileged_runner()
    if runner is None:
        pytest.skip("needs root with setpriv or runuser to run as nobody" if IS_ROOT else
                    "runs as root only (to switch to nobody); as a non-root user the "
                    "permission checks are the user's own")
    if not all(os.stat(p).st_mode & stat.S_IXOTH for p in [binary, *binary.resolve().parents]):
        pytest.skip(f"{binary} is not reachable by other users (a folder above it lacks o+x)")
    folder = Path(tempfile.mkdtemp(prefix="iocpbench-perm-"))
    try:
        os.chmod(folder, 0o755)  # root's folder: nobody may read it, not create files in it
        private = folder / "private.dat"
        private.write_bytes(os.urandom(1 << 20))
        os.chmod(private, 0o600)
        env = dict(os.environ, TMPDIR=str(folder))
        cases = {folder / "new.dat": "Permission denied", private: "Permission denied"}
        for path, expected in cases.items():
            proc = subprocess.run([*runner, str(binary), *FILE_RUN, "--file", str(path)],
                                  capture_output=True, text=True, timeout=BOUND, env=env)
            line = one_line(proc, 2, "--file")
            assert expected in line and str(path) in line, line
        assert sorted(p.name for p in folder.iterdir()) == ["private.dat"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---- 5. bench/anchors.py: its --scratch folder and bad arguments -------------------------------

ANCHORS = ROOT / "bench" / "anchors.py"


def anchors(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ANCHORS), *args], capture_output=True, text=True,
                          timeout=BOUND)


def test_anchors_creates_a_missing_scratch_folder(tmp_path):
    scratch = tmp_path / "not" / "yet"
    # P7 with a program that has no sweep: reported "not available", nothing run.
    proc = anchors("--targets", "P7", "--program", "/bin/false", "--scratch", str(scratch))
    assert proc.returncode == 0, proc.stderr
    assert scratch.is_dir()


@pytest.mark.parametrize("args,flag", [
    (["--pairs", "x"], "--pairs"),
    (["--pairs", "2"], "--pairs"),
    (["--min-time", "nan"], "--min-time"),
    (["--timeout", "0"], "--timeout"),
    (["--p4-file-mib", "0"], "--p4-file-mib"),
    (["--targets", "P9"], "--targets"),
    (["--targets", "P7", "--program", "/nonexistent/iocpbench"], "--program"),
    (["--bogus"], "--bogus"),
    (["--scratch", "/proc/self/no/such"], "--scratch"),
])
def test_anchors_bad_arguments_are_one_line_exit_2(args, flag, tmp_path):
    if flag == "--scratch" and not Path("/proc/self").exists():
        pytest.skip("needs /proc")
    proc = anchors(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("anchors: ") and flag in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
