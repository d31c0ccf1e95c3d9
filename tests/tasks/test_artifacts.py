import gzip

import pytest

from referee.errors import StoreError
from referee.tasks.artifacts import ArtifactStore


def test_round_trip_and_deterministic_digest(tmp_path):
    store = ArtifactStore(f"file://{tmp_path}")
    files = {"pkg/__init__.py": b"", "pkg/core.py": "X = 1\n", "data/bin.dat": b"\x00\xff"}
    d1 = store.put_files(files)
    d2 = ArtifactStore(f"file://{tmp_path}/other").put_files(dict(reversed(list(files.items()))))
    assert d1 == d2 and d1.startswith("sha256:")
    fresh = ArtifactStore(f"file://{tmp_path}")  # no in-memory cache
    assert fresh.get_files(d1) == {
        "pkg/__init__.py": b"",
        "pkg/core.py": b"X = 1\n",
        "data/bin.dat": b"\x00\xff",
    }
    assert store.put_files(files) == d1  # idempotent


def test_other_fsspec_backends():
    store = ArtifactStore("memory://referee-test-store")
    d = store.put_files({"a.txt": b"hello"})
    assert ArtifactStore("memory://referee-test-store").get_files(d) == {"a.txt": b"hello"}


def test_missing_and_corrupt_snapshots_are_errors(tmp_path):
    store = ArtifactStore(f"file://{tmp_path}")
    d = store.put_files({"a.txt": b"hello"})
    missing = "sha256:" + "0" * 64
    with pytest.raises(StoreError, match="not in the artifact store"):
        store.get_files(missing)
    with pytest.raises(StoreError, match="not a snapshot digest"):
        store.get_files("sha256:xyz")
    path = next(tmp_path.rglob("*.tar.gz"))
    path.write_bytes(gzip.compress(b"something else"))
    with pytest.raises(StoreError, match="corrupt"):
        ArtifactStore(f"file://{tmp_path}").get_files(d)


@pytest.mark.parametrize("name", ["../x", "/etc/passwd", "a/../../b", ""])
def test_unsafe_names_are_refused(tmp_path, name):
    with pytest.raises(StoreError, match="plain relative path"):
        ArtifactStore(f"file://{tmp_path}").put_files({name: b"x"})


def test_one_store_holds_snapshots_and_blobs_and_is_the_public_one(tmp_path):
    import referee
    from referee.track.artifacts import ArtifactStore as TrackArtifactStore

    assert referee.ArtifactStore is ArtifactStore is TrackArtifactStore
    store = ArtifactStore(f"file://{tmp_path}")
    digest = store.put_files({"a.txt": b"hello"})
    url = store.put("log.txt", b"hello")
    assert store.put("log.txt", b"hello") == url  # content-addressed: a second put is a no-op
    assert store.get(url) == b"hello" and store.get_files(digest) == {"a.txt": b"hello"}
    with pytest.raises(StoreError, match="does not match its SHA-256"):
        store.get(url, sha256="0" * 64)


def test_an_s3_store_holds_snapshots_and_blobs(s3):
    bucket, _ = s3
    store = ArtifactStore(f"s3://{bucket}/artifacts")
    digest = store.put_files({"pkg/core.py": b"X = 1\n"})
    url = store.put("big.txt", b"x" * 100_000)
    assert url.startswith(f"s3://{bucket}/artifacts/")
    fresh = ArtifactStore(f"s3://{bucket}/artifacts")  # no in-memory cache
    assert fresh.get_files(digest) == {"pkg/core.py": b"X = 1\n"}
    assert fresh.get(url) == b"x" * 100_000
    from tests.s3 import s3fs_now

    names = s3fs_now().find(f"{bucket}/artifacts")
    assert len(names) == 2 and not [n for n in names if n.endswith(".tmp")]


def test_a_failed_blob_write_leaves_nothing_under_the_content_name(tmp_path, monkeypatch):
    """A partial blob under its SHA-256 name would be trusted as the content (``put`` skips
    names that exist), so a write that fails must leave no file there."""
    import os as os_module

    store = ArtifactStore(f"file://{tmp_path}")

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os_module, "fsync", disk_full)
    with pytest.raises(StoreError, match="No space left on device"):
        store.put("a.txt", b"hello")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    monkeypatch.undo()
    assert store.get(store.put("a.txt", b"hello")) == b"hello"


def test_a_store_named_by_a_relative_path_is_recorded_absolute(tmp_path, monkeypatch):
    # `referee synth ... --store store` records ArtifactStore(store).url in every task: a
    # relative "store" would name another folder (or none) when verified from elsewhere.
    monkeypatch.chdir(tmp_path)
    assert ArtifactStore("store").url == f"file://{tmp_path.resolve()}/store"
    assert ArtifactStore.at("store/").url == f"file://{tmp_path.resolve()}/store"
    assert ArtifactStore("memory://x/").url == "memory://x"  # URLs are kept as given


def _repo_task(store: str, digest: str):
    from referee.tasks.model import Task

    return Task.create(
        name="t1",
        kind="repo-patch",
        prompt="fix it",
        payload={"repo": {"snapshot": digest, "store": store, "source_roots": [""]}},
        hidden={"fail_to_pass": ["test_a.py::test_a"]},
        answer_format="patch",
    )


def test_a_task_whose_store_is_not_there_is_found_through_referee_artifacts(tmp_path, monkeypatch):
    from referee.verify.pytest_verifier import repo_state

    real = tmp_path / "real"
    digest = ArtifactStore(str(real)).put_files({"a.py": b"X = 1\n"})
    task = _repo_task("store", digest)  # as an older synth recorded it: relative
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REFEREE_ARTIFACTS", raising=False)
    with pytest.raises(StoreError, match="point REFEREE_ARTIFACTS at the store"):
        repo_state(task)
    monkeypatch.setenv("REFEREE_ARTIFACTS", str(real))  # the error's own advice
    assert repo_state(task).files["a.py"] == b"X = 1\n"
    monkeypatch.setenv("REFEREE_ARTIFACTS", str(tmp_path / "elsewhere"))
    with pytest.raises(StoreError, match=r"neither in the task's store .* nor in REFEREE_ARTIF"):
        repo_state(task)
