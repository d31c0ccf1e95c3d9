"""Without a reachable (or installed) Ray: one-line refusals naming the fix; ``import referee``
unaffected. Each case runs in a fresh interpreter (no Ray initialised there)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"},
    )


def test_referee_imports_and_refuses_cluster_work_when_ray_is_missing():
    p = _python(
        "import sys; sys.modules['ray'] = None\n"
        "import referee, referee.cluster as c\n"
        "assert c.SandboxPool and c.connect and referee.Verdict\n"
        "try:\n"
        "    c.connect('local')\n"
        "except referee.ConfigError as e:\n"
        "    print(e)\n"
    )
    assert p.returncode == 0, p.stderr
    assert "pip install 'referee[ray]'" in p.stdout


def test_an_unreachable_address_is_a_config_error_naming_the_fix():
    p = _python(
        "import referee.cluster as c, referee, ray\n"
        "for address in ('127.0.0.1:1', 'no-port'):\n"
        "    try:\n"
        "        c.connect(address)\n"
        "    except referee.ConfigError as e:\n"
        "        print(str(e))\n"
        "print(ray.is_initialized())\n"
    )
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert "no Ray cluster answers at 127.0.0.1:1" in lines[0] and "ray start --head" in lines[0]
    assert "is not a Ray address" in lines[1]
    assert json.loads(lines[2].lower()) is False
