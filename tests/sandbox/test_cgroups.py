"""The cgroup layer on its own, with harmless processes only."""

import os
import subprocess

import pytest

from referee.sandbox.cgroups import detect_cgroups

cgroups = detect_cgroups()
pytestmark = pytest.mark.skipif(cgroups is None, reason="no writable cgroup hierarchy here")


@pytest.fixture(scope="module", autouse=True)
def _close_cgroups():
    yield
    if cgroups is not None:
        cgroups.close()


def test_group_limits_membership_and_kill_all():
    group = cgroups.create("unit")
    try:
        group.set_limits(memory_bytes=64 << 20, pids_max=8)
        procs = [str(p) for p in group.procs_files()]
        child = subprocess.Popen(
            ["sleep", "30"],
            preexec_fn=lambda: [open(p, "w").write("0") for p in procs] and None,
        )
        assert child.pid in group.pids()
        assert group.kill_all() == 1
        assert child.wait(timeout=5) == -9
        assert group.pids() == []
        stats = group.stats()
        assert stats.oom_kills == 0 and stats.peak_bytes >= 0
    finally:
        group.remove()
    for path in group.procs_files():
        assert not path.parent.exists()


def test_raising_and_lowering_the_memory_limit():
    group = cgroups.create("unit")
    try:
        for limit in (32 << 20, 1 << 30, 16 << 20):
            group.set_limits(memory_bytes=limit, pids_max=4)
    finally:
        group.remove()


def test_parent_group_is_per_process():
    assert all(f"referee-{os.getpid()}-" in str(p) for p in cgroups._parents.values())
    other = detect_cgroups()
    assert other is not None
    assert set(other._parents.values()).isdisjoint(cgroups._parents.values())
    other.close()


def test_groups_of_dead_processes_are_cleaned_up():
    import subprocess as sp

    from referee.sandbox.cgroups import clean_stale

    dead = sp.Popen(["true"])
    dead.wait()
    parent = next(iter(cgroups._parents.values())).parent
    stale = parent / f"referee-{dead.pid}-1"
    (stale / "run-1").mkdir(parents=True)
    clean_stale(parent)
    assert not stale.exists()
