"""`referee ui` announces the dashboard only once it listens (issue 20: it said "dashboard at
..." and then failed on a busy port)."""

from __future__ import annotations

import socket

from typer.testing import CliRunner

from referee.cli import app
from referee.track.store import TrackStore


def test_a_busy_port_is_one_error_line_and_no_announcement(tmp_path):
    TrackStore(tmp_path / "run").close()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = CliRunner().invoke(app, ["ui", "--run", str(tmp_path / "run"), "--port", str(port)])
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and lines[0].startswith("referee: cannot listen on"), r.output
    assert "dashboard" not in r.output
