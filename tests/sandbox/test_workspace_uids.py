"""Session workspaces give their sandbox uid back when closed (no leak across many episodes)."""

import os

import pytest

from referee.errors import SandboxError
from referee.sandbox import Sandbox, Workspace
from referee.sandbox.host import UidPool

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="uid allocation needs root")


@pytest.fixture
def small_pool(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> UidPool:
    """The shared sandbox's workspaces draw from a pool of 3 uids for the length of a test."""
    pool = UidPool(base=64100, size=3)
    monkeypatch.setattr(sandbox, "uids", pool)
    return pool


@root_only
def test_more_workspaces_than_the_pool_holds_can_be_opened_and_closed(sandbox, small_pool):
    seen = set()
    for i in range(3 * small_pool.size + 1):
        with sandbox.workspace() as ws:
            assert ws.owner is not None
            seen.add(ws.owner)
            ws.write({"n.txt": str(i)})
    assert seen == {small_pool.base + k for k in range(small_pool.size)}
    # A reissued uid still runs programs that may change the files the host wrote.
    with sandbox.workspace() as ws:
        ws.write({"n.txt": "ok"})
        r = sandbox.run(["sh", "-c", "cat n.txt && echo more >> n.txt"], workspace=ws)
        assert (r.exit_code, r.stdout) == (0, "ok"), r.stderr
        assert ws.read("n.txt") == b"okmore\n"


@root_only
def test_open_workspaces_hold_their_uids_until_closed(sandbox, small_pool):
    held = [sandbox.workspace() for _ in range(small_pool.size)]
    assert len({ws.owner for ws in held}) == small_pool.size
    with pytest.raises(SandboxError, match="in use"):
        sandbox.workspace()
    held[0].close()
    again = sandbox.workspace()
    for ws in (again, *held[1:]):
        ws.close()


@root_only
def test_closing_twice_or_releasing_by_hand_after_close_frees_nothing_twice(sandbox, small_pool):
    first = sandbox.workspace()
    uid = first.owner
    assert uid is not None
    first.close()
    assert first.owner is None  # a closed workspace owns no uid
    others = [sandbox.workspace() for _ in range(small_pool.size)]  # one of them gets `uid` again
    assert uid in {ws.owner for ws in others}
    # What CodeEnv did by hand before workspaces gave their uid back themselves:
    first.close()
    if first.owner is not None:
        small_pool.release(first.owner)
    with pytest.raises(SandboxError, match="in use"):
        sandbox.workspace()  # the reissued uid is still held by its new workspace
    for ws in others:
        ws.close()
    assert not os.path.exists(first.root)


def test_a_workspace_runs_its_close_callback_once(tmp_path):
    calls: list[int] = []
    ws = Workspace(tmp_path / "w", owner=None, cleanup=True, on_close=lambda: calls.append(1))
    ws.close()
    ws.close()
    with ws:
        pass
    assert calls == [1]
    assert not ws.root.exists()
