import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from referee.sandbox.host import Scratch, UidPool, clean_stale_scratch

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="uid allocation needs root")


@root_only
def test_uids_are_exclusive_across_pools_and_processes():
    a, b = UidPool(base=64000, size=4), UidPool(base=64000, size=4)
    got = [a.acquire(), a.acquire(), b.acquire(), b.acquire()]
    assert len(set(got)) == 4
    with pytest.raises(Exception, match="in use"):
        b.acquire()
    a.release(got[0])
    assert b.acquire() == got[0]
    # Another process sees the same locks.
    code = (
        "from referee.sandbox.host import UidPool\n"
        "p = UidPool(base=64000, size=4)\n"
        "try:\n    p.acquire(); print('got one')\nexcept Exception: print('all taken')"
    )
    out = subprocess.run([os.sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "all taken"


def test_scratch_of_a_dead_process_is_removed_and_live_ones_kept():
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = Path(tempfile.gettempdir()) / f"referee-{dead.pid}-abc"
    stale.mkdir()
    (stale / "ws").mkdir()
    live = Scratch(size_mb=16)
    try:
        clean_stale_scratch()
        assert not stale.exists()
        assert live.path.exists()
    finally:
        live.close()
    assert not live.path.exists()
