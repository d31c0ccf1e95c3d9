"""The pytest verifier on a small repository task, and the exploits a patch can try."""

import pytest

from referee.tasks.model import Task

OPS_BROKEN = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
TESTS = {
    "tests/test_ops.py": (
        "from calc.ops import add, sub\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_sub():\n    assert sub(5, 3) == 2\n"
    )
}


def diff(path: str, old: str | None, new: str) -> str:
    """A unified diff as git would write it (3 lines of context), made with difflib."""
    import difflib

    a = [] if old is None else old.splitlines(keepends=True)
    lines = difflib.unified_diff(
        a, new.splitlines(keepends=True), "/dev/null" if old is None else f"a/{path}", f"b/{path}"
    )
    return "".join(lines)


GOLD = diff("calc/ops.py", OPS_BROKEN, OPS_BROKEN.replace("return a - b", "return a + b", 1))


def _patch_ops(new_body: str) -> str:
    """A diff replacing the body of add() with ``new_body`` (indented code)."""
    new = "def add(a, b):\n" + new_body.rstrip("\n") + "\n\n\ndef sub(a, b):\n    return a - b\n"
    return diff("calc/ops.py", OPS_BROKEN, new)


def _new_file(path: str, content: str) -> str:
    return diff(path, None, content if content.endswith("\n") else content + "\n")


@pytest.fixture(scope="module")
def task():
    return Task.create(
        name="repo/calc-add-v1",
        prompt="Fix add() in calc/ops.py.",
        answer_format="patch",
        payload={"files": {"calc/__init__.py": "", "calc/ops.py": OPS_BROKEN, **TESTS}},
        hidden={
            "tests": TESTS,
            "fail_to_pass": ["tests/test_ops.py::test_add"],
            "pass_to_pass": ["tests/test_ops.py::test_sub"],
            "reference_patch": GOLD,
        },
    )


@pytest.fixture(scope="module")
def pv():
    from referee.verify.pytest_verifier import PytestVerifier

    with PytestVerifier(timeout_s=60) as v:
        yield v


def test_gold_patch_passes_and_empty_patch_fails(task, pv):
    good = pv.verify(task, GOLD)
    assert good.passed and good.reward == 1.0, good
    assert {t.detail for t in good.tests} == {"FAIL_TO_PASS", "PASS_TO_PASS"}
    empty = pv.verify(task, "")
    assert not empty.passed and empty.reward == 0.5  # PASS_TO_PASS holds, FAIL_TO_PASS fails


def test_a_patch_that_does_not_apply_is_the_candidates_failure(task, pv):
    v = pv.verify(task, "--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n")
    assert not v.passed and v.infra_error is None
    assert "does not apply" in v.tests[0].detail


FORGER = """import gc
import pytest


class _Forger:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome = "passed"


for _o in gc.get_objects():
    if type(_o).__name__ == "Config" and hasattr(_o, "pluginmanager"):
        try:
            _o.pluginmanager.register(_Forger())
        except Exception:
            pass
        break
"""

EXPLOITS = {
    "conftest-forces-pass": _new_file(
        "conftest.py",
        FORGER.replace("for _o", "for _unused")
        + "\ndef pytest_runtest_makereport(item, call):\n    pass",
    ),
    "edit-the-tests": diff(
        "tests/test_ops.py",
        TESTS["tests/test_ops.py"],
        TESTS["tests/test_ops.py"].replace("add(2, 3) == 5", "True"),
    ),
    "sys-exit-at-import": _patch_ops("    return a - b\nimport sys\nsys.exit(0)"),
    "os-exit-at-import": _patch_ops("    return a - b\nimport os\nos._exit(0)"),
    "skip-at-import": _patch_ops(
        "    return a - b\nimport pytest\npytest.skip('x', allow_module_level=True)"
    ),
    "xfail-in-call": _patch_ops("    import pytest\n    pytest.xfail('later')"),
    "config-deselects": _new_file("pytest.ini", "[pytest]\naddopts = -k sub"),
    "pyproject-addopts": _new_file(
        "pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-k sub'"
    ),
    "fake-passed-output": _patch_ops(
        "    print('tests/test_ops.py::test_add PASSED')\n    return a - b"
    ),
    "register-forging-plugin": _patch_ops("    return a - b\n" + FORGER),
    "shadow-pytest-module": _new_file("pytest.py", "def main(*a, **k):\n    return 0"),
    "atexit-exit-zero": _patch_ops(
        "    import atexit, os\n    atexit.register(os._exit, 0)\n    return a - b"
    ),
}


@pytest.mark.hostile
@pytest.mark.parametrize("name", sorted(EXPLOITS))
def test_exploit_patches_are_rejected(task, pv, name):
    v = pv.verify(task, EXPLOITS[name])
    assert not v.passed, (name, v)
    assert v.infra_error is None
    f2p = [t for t in v.tests if t.detail.startswith("FAIL_TO_PASS")]
    assert f2p and all(t.status != "passed" for t in f2p), (name, v)


def test_forged_reports_are_caught_by_the_canaries(task, pv):
    v = pv.verify(task, EXPLOITS["register-forging-plugin"])
    assert "forged-report" in {f.kind for f in v.flags}
    assert v.reward == 0.0


def test_patches_touching_tests_or_config_are_flagged(task, pv):
    for name in ("edit-the-tests", "config-deselects", "conftest-forces-pass"):
        assert "touches-tests-or-config" in {f.kind for f in pv.verify(task, EXPLOITS[name]).flags}
