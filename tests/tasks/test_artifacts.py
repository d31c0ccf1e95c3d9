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
