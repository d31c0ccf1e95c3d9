"""The UNSAFE local backend. Only trusted, harmless programs run here (it has no isolation)."""

import pytest

from referee.sandbox import Limits, Sandbox
from referee.sandbox.local import UnsafeBackendWarning


@pytest.fixture(scope="module")
def local():
    with pytest.warns(UnsafeBackendWarning):
        sb = Sandbox(backend="local")
    yield sb
    sb.close()


def test_local_backend_must_be_named_and_warns(capsys):
    with pytest.warns(UnsafeBackendWarning, match="WITHOUT ANY ISOLATION"):
        Sandbox(backend="local").close()
    assert "WITHOUT ANY ISOLATION" in capsys.readouterr().err


def test_local_backend_runs_and_reports_no_isolation(local):
    r = local.run_python("print(6 * 7)")
    assert r.stdout == "42\n" and r.isolation == ["none"] and r.backend == "local"


def test_local_backend_still_enforces_the_timeout(local):
    r = local.run_python("import time; time.sleep(5)", limits=Limits(timeout_s=0.5))
    assert r.timed_out


def test_unknown_backend_is_a_config_error():
    from referee.errors import ConfigError

    with pytest.raises(ConfigError, match="bwrap"):
        Sandbox(backend="docker")  # type: ignore[arg-type]


def test_local_backend_warning_is_shown_once_per_start():
    """A person sees the warning once for each start, not once as a line and once as a warning."""
    import subprocess
    import sys

    code = (
        "from referee.sandbox import Sandbox\n"
        "for _ in range(2):\n"
        "    with Sandbox(backend='local') as sb:\n"
        "        sb.run(['true'])\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("WITHOUT ANY ISOLATION") == 2, p.stderr
