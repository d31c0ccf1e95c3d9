"""Task files are re-read when they change on disk, even by a same-size rewrite within one tick
of the filesystem's clock; a deleted file is a clear error."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from referee.errors import TaskError
from referee.tasks.model import Task, write_tasks
from referee.tasks.watched import RACY_NS, Signature, TaskFileCache, file_signature


def _task(n: int) -> Task:
    return Task.create(name=f"t/task{n:02d}-v1", prompt=f"Do thing {n:02d}.")


def _rewrite_in_place(path: Path, task: Task) -> None:
    """Overwrite ``path`` in place (same inode) and put its mtime back where it was: what a
    same-second rewrite looks like on a filesystem with one-second timestamps."""
    before = path.stat()
    with path.open("r+") as f:
        f.write(task.model_dump_json() + "\n")
        f.truncate()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_same_size_rewrite_with_the_same_mtime_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, [_task(1)])
    cache = TaskFileCache()
    assert list(cache.get(path)) == ["t/task01-v1"]
    size = path.stat().st_size
    _rewrite_in_place(path, _task(2))
    assert path.stat().st_size == size
    assert list(cache.get(path)) == ["t/task02-v1"]


def test_a_rewrite_the_stat_cannot_see_is_caught_by_the_hash(tmp_path: Path) -> None:
    """A filesystem whose stat shows nothing of the rewrite (coarse mtime, no ctime change):
    the file changed moments before it was read, so its bytes are compared."""
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, [_task(1)])
    frozen = file_signature(str(path))

    def stat(_: str) -> Signature:
        return frozen

    now = [frozen[1]]  # the clock reads the file's own mtime: a same-tick rewrite
    cache = TaskFileCache(stat=stat, clock=lambda: now[0])
    assert "t/task01-v1" in cache.get(path)
    _rewrite_in_place(path, _task(2))
    assert list(cache.get(path)) == ["t/task02-v1"]
    assert cache.reads == 2


def test_an_old_file_is_trusted_on_its_stat_alone(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, [_task(1)])
    mtime = file_signature(str(path))[1]
    os.utime(path, ns=(mtime - 10 * RACY_NS, mtime - 10 * RACY_NS))
    cache = TaskFileCache()
    for _ in range(100):
        assert "t/task01-v1" in cache.get(path)
    assert cache.reads == 1


def test_a_deleted_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, [_task(1)])
    cache = TaskFileCache()
    assert cache.get(path)
    path.unlink()
    with pytest.raises(TaskError, match=r"tasks\.jsonl' is gone \(deleted or moved\)"):
        cache.get(path)


def test_a_url_is_checked_again_after_its_interval() -> None:
    url = "memory://referee-test-watched/tasks.jsonl"
    write_tasks(url, [_task(1)])
    now = [0]
    cache = TaskFileCache(remote_check_s=5.0, clock=lambda: now[0])
    assert list(cache.get(url)) == ["t/task01-v1"]
    write_tasks(url, [_task(2)])
    assert list(cache.get(url)) == ["t/task01-v1"]  # within the interval: not fetched
    now[0] = 6 * 10**9
    assert list(cache.get(url)) == ["t/task02-v1"]


def test_threads_looking_up_while_the_file_is_rewritten_never_see_a_missing_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tasks.jsonl"
    write_tasks(path, [_task(0)])
    cache = TaskFileCache()
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                assert len(cache.get(path)) == 1
            except BaseException as e:  # reported by the test below
                errors.append(e)
                return

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for n in range(1, 30):
        write_tasks(path, [_task(n)])  # atomic: readers see the old file or the new one
        assert list(cache.get(path)) == [f"t/task{n:02d}-v1"]
    stop.set()
    for t in threads:
        t.join()
    assert not errors
