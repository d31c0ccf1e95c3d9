import os

import pytest

from referee.errors import UnsafePathError
from referee.sandbox import Workspace


@pytest.fixture
def ws(tmp_path):
    w = Workspace(tmp_path / "ws")
    yield w
    w.close()


def test_write_read_and_nested_dirs(ws):
    ws.write({"a/b/c.txt": "x", "d.bin": b"\x00\xff"})
    assert ws.read_all() == {"a/b/c.txt": b"x", "d.bin": b"\x00\xff"}
    assert ws.read("a/b/c.txt") == b"x"


def test_snapshot_restore_and_branching(ws):
    ws.write({"state.txt": "1"})
    snap = ws.snapshot()
    ws.write({"state.txt": "2", "new/file": "n"})
    ws.restore(snap)
    assert ws.read_all() == {"state.txt": b"1"}
    assert snap.size_bytes == 1


def test_symlink_planted_inside_is_never_followed_on_write(ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, ws.root / "link")
    with pytest.raises(UnsafePathError):
        ws.write({"link/evil.txt": "x"})
    assert list(outside.iterdir()) == []


def test_symlink_to_a_host_file_is_replaced_not_written_through(ws, tmp_path):
    target = tmp_path / "host-file"
    target.write_text("precious")
    os.symlink(target, ws.root / "out.txt")
    ws.write({"out.txt": "new"})
    assert target.read_text() == "precious"
    assert ws.read("out.txt") == b"new"


def test_symlinks_and_fifos_are_not_read(ws, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s3cret")
    os.symlink(secret, ws.root / "leak")
    os.mkfifo(ws.root / "fifo")
    ws.write({"ok.txt": "fine"})
    assert ws.read_all() == {"ok.txt": b"fine"}
    with pytest.raises(UnsafePathError):
        ws.read("leak")
    with pytest.raises(UnsafePathError):
        ws.read("fifo")
    assert ws.snapshot().files == (("ok.txt", b"fine", 0o644),)


def test_clear_does_not_follow_directory_links(ws, tmp_path):
    outside = tmp_path / "keep"
    outside.mkdir()
    (outside / "f").write_text("keep me")
    os.symlink(outside, ws.root / "dirlink")
    ws.clear()
    assert (outside / "f").read_text() == "keep me"
    assert list(ws.root.iterdir()) == []
