"""Files at any fsspec URL (issue 13): read whole, written whole or not at all, on local paths,
memory:// and s3:// against an S3-compatible server on 127.0.0.1 (moto; tests/s3.py)."""

from __future__ import annotations

import doctest
import os
from pathlib import Path

import pytest
from fsspec.implementations.memory import MemoryFileSystem

import referee.storage
from referee.errors import ConfigError, StoreError
from referee.storage import (
    atomic_writer,
    check_output,
    fs_write,
    is_local,
    is_url,
    local_path,
    read_bytes,
    write_bytes,
)
from tests.s3 import Proxy, fresh_s3fs, s3fs_now

MiB = 2**20


def test_the_module_examples_run():
    assert doctest.testmod(referee.storage).failed == 0


def test_urls_and_local_paths_are_told_apart():
    assert is_url("s3://b/k") and is_url("memory://x") and is_url("file:///tmp/x")
    assert not is_url("runs/t.jsonl") and not is_url(Path("s3://b/k")) and not is_url("C:\\x")
    assert is_local("t.jsonl") and is_local("file:///tmp/x") and not is_local("s3://b/k")
    assert local_path("file:///tmp/x.jsonl") == Path("/tmp/x.jsonl")


def test_a_local_write_replaces_the_file_whole_and_an_error_keeps_the_old_one(tmp_path):
    target = tmp_path / "t.jsonl"
    write_bytes(target, b"old\n")
    with pytest.raises(RuntimeError), atomic_writer(target) as f:
        f.write("new, half")
        raise RuntimeError("the rows ran out half way")
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]  # no temporary file left
    with pytest.raises(StoreError, match=r"cannot write .*nowhere/t.jsonl: No such file"):
        write_bytes(tmp_path / "nowhere" / "t.jsonl", b"x")
    write_bytes(tmp_path / "made" / "t.jsonl", b"x", parents=True)
    assert read_bytes(f"file://{tmp_path}/made/t.jsonl") == b"x"


def test_memory_urls_are_written_in_one_call_so_an_error_leaves_nothing():
    url = f"memory://referee-test-{os.getpid()}/rows.jsonl"
    with pytest.raises(RuntimeError), atomic_writer(url) as f:
        f.write("a row\n")
        raise RuntimeError("boom")
    with pytest.raises(FileNotFoundError):
        read_bytes(url)


class _InPlaceFS(MemoryFileSystem):
    """A file system that writes in place, as sftp does: the object is there, partial, while
    it is being written. It fails after the first bytes of a file named *.jsonl.*.tmp."""

    protocol = ("inplace-test",)
    root_marker = "/"
    fail = False

    def pipe_file(self, path, value, **kwargs):  # type: ignore[no-untyped-def]
        super().pipe_file(path, value[:3], **kwargs)  # visible at once, as on sftp
        if self.fail:
            raise ConnectionResetError("the server went away")
        super().pipe_file(path, value, **kwargs)


def test_a_file_system_that_writes_in_place_gets_a_temporary_name_then_a_rename():
    fs, folder = _InPlaceFS(), f"/inplace-{os.getpid()}"
    fs_write(fs, f"{folder}/t.jsonl", b"old\n", parents=True)
    fs.fail = True
    with pytest.raises(StoreError, match=r"cannot write /inplace-\d+/t.jsonl: the server went"):
        fs_write(fs, f"{folder}/t.jsonl", b"new and longer\n")
    assert fs.cat_file(f"{folder}/t.jsonl") == b"old\n"  # never 3 bytes a reader could see
    assert fs.ls(folder, detail=False) == [f"{folder}/t.jsonl"]  # the temporary one went too


def test_a_scheme_without_its_backend_is_refused_naming_the_package(monkeypatch):
    from fsspec.registry import known_implementations

    monkeypatch.setitem(known_implementations, "nosuch", {"class": "no_such_backend.FS"})
    with pytest.raises(ConfigError, match=r"task file nosuch://b/t.jsonl needs .*no_such_backend"):
        read_bytes("nosuch://b/t.jsonl", option="task file")
    with pytest.raises(ConfigError, match="no_such_backend"):
        write_bytes("nosuch://b/t.jsonl", b"x")


# --- s3:// against moto -----------------------------------------------------------------------


def test_s3_round_trip_and_a_missing_key_is_file_not_found(s3):
    bucket, _ = s3
    write_bytes(f"s3://{bucket}/a/t.jsonl", b"one\n")
    assert read_bytes(f"s3://{bucket}/a/t.jsonl") == b"one\n"
    with atomic_writer(f"s3://{bucket}/a/t.jsonl", "wb") as f:
        f.write(b"two\n")
    assert read_bytes(f"s3://{bucket}/a/t.jsonl") == b"two\n"
    with pytest.raises(FileNotFoundError):
        read_bytes(f"s3://{bucket}/a/missing.jsonl")


def test_an_error_inside_an_s3_writer_publishes_nothing(s3):
    """s3fs commits a file opened with ``fs.open(url, "wb")`` when its ``with`` block raises
    (fsspec's ``__exit__`` closes it); the writer stages the bytes and uploads only when the
    block ended well, so the object keeps its old content."""
    bucket, _ = s3
    url = f"s3://{bucket}/rows.jsonl"
    write_bytes(url, b"old\n")
    with pytest.raises(RuntimeError), atomic_writer(url) as f:
        f.write("new " * 1000)
        raise RuntimeError("the rows ran out half way")
    assert read_bytes(url) == b"old\n"
    with pytest.raises(RuntimeError), atomic_writer(f"s3://{bucket}/new.jsonl") as f:
        f.write("half")
        raise RuntimeError("boom")
    assert not s3fs_now().exists(f"{bucket}/new.jsonl")


def test_a_server_killed_mid_upload_leaves_no_object(s3, monkeypatch):
    """The S3 server dies (SIGKILL) in the middle of a 20 MiB multipart upload (5 MiB parts).

    What dies is a proxy process in front of moto (tests/tcp_proxy.py), killed by SIGKILL after
    8 MiB of the upload went through it: to s3fs that is a server process killed mid-upload
    (connections reset, then refused). moto behind it keeps its state, so a proxy started again
    on the same port is the same store after a restart, and this test can look at what the
    failed upload left. It checks that the call fails with a StoreError naming the URL and
    what to check (not botocore's exception), that the key is absent after the restart while
    an object written before the crash is still there (so the listing is not of an empty new
    store) and its upload is still pending (it was multipart and never completed), and that
    the same write then succeeds.
    """
    bucket, _ = s3
    moto_port = int(os.environ["AWS_ENDPOINT_URL"].rsplit(":", 1)[1])
    proxy = Proxy.start(moto_port, die_after=8 * MiB)
    try:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        fresh_s3fs()  # s3fs caches file systems: forget the one for moto's own port
        write_bytes(f"s3://{bucket}/before.txt", b"written before the crash")
        url = f"s3://{bucket}/big.bin"
        data = os.urandom(20 * MiB)
        with pytest.raises(StoreError) as failed:
            write_bytes(url, data, part_size=5 * MiB)
        message = str(failed.value)
        assert message.startswith(f"cannot write {url}: ") and "AWS_ENDPOINT_URL" in message
        killed, said = proxy.died_by_sigkill()
        assert killed and said.startswith("dying after "), said
        assert int(said.split()[2]) < len(data)  # it died before the upload was through

        proxy = Proxy.start(moto_port, port=proxy.port)  # the server is back, state kept
        fs = fresh_s3fs()
        assert fs.ls(bucket, detail=False) == [f"{bucket}/before.txt"]
        # It was a multipart upload, started and never completed (nor aborted: the server was
        # gone). Its parts are invisible to readers; on S3 a lifecycle rule
        # (AbortIncompleteMultipartUpload) deletes them.
        assert [u["Key"] for u in fs.list_multipart_uploads(bucket)] == ["big.bin"]
        write_bytes(url, data, part_size=5 * MiB)
        assert fs.cat_file(f"{bucket}/big.bin") == data
    finally:
        proxy.stop()


def test_an_unreachable_endpoint_is_a_store_error_naming_the_url(s3, monkeypatch):
    from tests.s3 import free_port

    bucket, _ = s3
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    fresh_s3fs()
    with pytest.raises(StoreError, match=rf"cannot read s3://{bucket}/t.jsonl: .*AWS_ENDPOINT_URL"):
        read_bytes(f"s3://{bucket}/t.jsonl")
    with pytest.raises(ConfigError, match=r"--out s3://.*cannot reach the store"):
        check_output(f"s3://{bucket}/t.jsonl", option="--out")


def test_check_output_wants_an_existing_bucket(s3):
    bucket, _ = s3
    check_output(f"s3://{bucket}/new/t.jsonl", option="--out")  # a new prefix is fine
    with pytest.raises(ConfigError, match=r"--out s3://no-such-bucket-x/t.jsonl: the bucket"):
        check_output("s3://no-such-bucket-x/t.jsonl", option="--out")
    check_output("memory://anything/t.jsonl", option="--out")


def test_missing_credentials_are_a_config_error(s3, monkeypatch, tmp_path):
    bucket, _ = s3
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(key)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    fresh_s3fs()
    with pytest.raises(ConfigError, match=r"cannot write s3://.*credentials.*AWS_ACCESS_KEY_ID"):
        write_bytes(f"s3://{bucket}/t.jsonl", b"x")
