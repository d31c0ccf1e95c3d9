"""Batched variants: each state runs its own code, never a stale bytecode cache of another."""

from referee.verify.repo_run import Variant, run_variants

FILES = {
    "pkg/__init__.py": "",
    "pkg/ops.py": "def f(a, b):\n    return a + b\n",
    "tests/test_ops.py": "from pkg.ops import f\n\n\ndef test_f():\n    assert f(2, 3) == 5\n",
}


def test_same_size_edits_in_one_second_each_run_their_own_code(repo_sandbox):
    plus, minus = FILES["pkg/ops.py"], FILES["pkg/ops.py"].replace("+", "-")
    assert len(plus) == len(minus)
    variants = [
        Variant(id=f"v{i}", files={"pkg/ops.py": minus if i % 2 else plus}, ids=["tests"])
        for i in range(6)
    ]
    got, base = run_variants(repo_sandbox, FILES, variants, conftests=[])
    assert base.ready
    assert [got[f"v{i}"].status("tests/test_ops.py::test_f") for i in range(6)] == [
        "passed",
        "failed",
    ] * 3


def test_a_hanging_variant_times_out_alone(repo_sandbox):
    hang = "def f(a, b):\n    while True:\n        pass\n"
    variants = [
        Variant(id="hang", files={"pkg/ops.py": hang}, ids=["tests"], timeout_s=1.0),
        Variant(id="ok", files={}, ids=["tests"]),
    ]
    got, _ = run_variants(repo_sandbox, FILES, variants, conftests=[])
    assert got["hang"].timed_out and got["hang"].status("tests/test_ops.py::test_f") == "timeout"
    assert got["ok"].status("tests/test_ops.py::test_f") == "passed"


def test_a_test_far_past_its_budget_ends_the_variant_early(repo_sandbox):
    import time

    hang = "def f(a, b):\n    while True:\n        pass\n"
    variants = [
        Variant(
            id="hang",
            files={"pkg/ops.py": hang},
            ids=["tests"],
            timeout_s=30.0,
            budgets={"tests/test_ops.py::test_f": 0.5},
        ),
        Variant(id="ok", files={}, ids=["tests"]),
    ]
    t0 = time.perf_counter()
    got, _ = run_variants(repo_sandbox, FILES, variants, conftests=[])
    assert time.perf_counter() - t0 < 10  # not the 30 s deadline
    assert got["hang"].timed_out and got["ok"].status("tests/test_ops.py::test_f") == "passed"
    assert got["hang"].timed_out_in == "tests/test_ops.py::test_f"


def test_a_hang_at_import_ends_at_the_collection_budget(repo_sandbox):
    import time

    # Module-level code that never returns: no test has started, so no per-test budget runs.
    hang = "while True:\n    pass\n"
    variants = [
        Variant(
            id="hang",
            files={"pkg/ops.py": hang},
            ids=["tests"],
            timeout_s=30.0,
            budgets={"tests/test_ops.py::test_f": 0.5},
            collect_budget_s=1.0,
        ),
        Variant(id="ok", files={}, ids=["tests"], collect_budget_s=1.0),
    ]
    t0 = time.perf_counter()
    got, _ = run_variants(repo_sandbox, FILES, variants, conftests=[])
    assert time.perf_counter() - t0 < 10  # not the 30 s deadline
    assert got["hang"].timed_out and got["hang"].timed_out_in == "collection"
    # The budget ends with collection: the healthy variant's test runs to completion.
    assert got["ok"].status("tests/test_ops.py::test_f") == "passed" and not got["ok"].timed_out


def test_failure_reports_use_the_native_traceback_style(repo_sandbox):
    wrong = FILES["pkg/ops.py"].replace("+", "-")
    got, _ = run_variants(
        repo_sandbox, FILES, [Variant(id="x", files={"pkg/ops.py": wrong}, ids=["tests"])],
        conftests=[],
    )  # fmt: skip
    report = got["x"].results["tests/test_ops.py::test_f"].report
    assert "Traceback (most recent call last)" in report and "assert -1 == 5" in report
    assert 'tests/test_ops.py", line 5, in test_f' in report
    assert "_pytest" not in report and "pluggy" not in report  # the grader's frames are cut


def test_first_failure_stops_the_run(repo_sandbox):
    files = {
        **FILES,
        "tests/test_more.py": "def test_a():\n    assert False\n\n\ndef test_b():\n    pass\n",
    }
    got, _ = run_variants(
        repo_sandbox, files,
        [Variant(id="x", files={}, ids=["tests/test_more.py"], first_failure=True)],
        conftests=[],
    )  # fmt: skip
    assert got["x"].status("tests/test_more.py::test_a") == "failed"
    assert got["x"].status("tests/test_more.py::test_b") == "missing"


# ---- the warm path (issue 19): a fork of a worker that imported pytest, same TestRun ----------

_PROBE = """import os, sys, __main__


def test_probe():
    seen = (sys.path, os.getcwd(), sys.flags.isolated, sys.argv[0], len(sys.argv),
            hasattr(__main__, "__file__"), sorted(os.environ.items()), "tests" in sys.modules)
    assert seen is None, repr(seen)
"""


def _fixture_files():
    from pathlib import Path

    root = Path(__file__).parents[1] / "fixtures" / "minirepo"
    return {
        str(p.relative_to(root)): p.read_text()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _same(a, b):
    assert a.ready and b.ready
    assert a.collected == b.collected
    assert {k: v.status for k, v in a.results.items()} == {
        k: v.status for k, v in b.results.items()
    }


def test_the_warm_path_forks_a_worker_and_reports_what_the_fresh_path_does(repo_sandbox):
    from referee.verify.repo_run import run_pytest, warm_capable

    assert warm_capable(repo_sandbox)
    files = {**_fixture_files(), "tests/test_probe.py": _PROBE}
    fresh = run_pytest(repo_sandbox, files, ["tests"], conftests=["tests/conftest.py"], warm=False)
    warm = run_pytest(repo_sandbox, files, ["tests"], conftests=["tests/conftest.py"], warm=True)
    assert fresh.exec.backend == "bwrap" and warm.exec.backend == "bwrap-forkserver"
    _same(fresh, warm)
    assert len(fresh.results) > 5 and fresh.status("tests/test_probe.py::test_probe") == "failed"
    # sys.path, cwd, isolated mode, argv, __main__ and the environment seen by a test: the same.
    probe = "tests/test_probe.py::test_probe"
    assert fresh.results[probe].report == warm.results[probe].report
    assert "'/workspace'" in warm.results[probe].report


def test_the_warm_path_carries_no_state_from_one_run_to_the_next(repo_sandbox):
    from referee.verify.repo_run import run_pytest

    files = dict(_fixture_files())
    first = run_pytest(repo_sandbox, files, ["tests"], conftests=["tests/conftest.py"], warm=True)
    broken = {**files, "minilib/stats.py": "raise ImportError('broken')\n"}
    second = run_pytest(repo_sandbox, broken, ["tests"], conftests=["tests/conftest.py"], warm=True)
    third = run_pytest(repo_sandbox, files, ["tests"], conftests=["tests/conftest.py"], warm=True)
    _same(first, third)
    assert first.passed() and not (second.passed() & {k for k in first.passed() if "stats" in k})
