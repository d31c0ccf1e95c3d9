"""Refactoring tasks: inverse refactorings of the fixture repository, validated and attacked."""

from pathlib import Path

import pytest

from referee.synth.candidates import stub_function
from referee.synth.pipeline import synthesize
from referee.synth.refactor import refactor_candidates
from referee.synth.repo import open_repository
from referee.tasks.artifacts import ArtifactStore
from referee.verify.pytest_verifier import STRUCTURE, PytestVerifier
from referee.verify.redteam_pytest import diff
from referee.verify.structure import check_structure

MINIREPO = Path(__file__).resolve().parents[1] / "fixtures" / "minirepo"
STATS = "minilib/stats.py"


class _Covered:
    """A baseline in which every function is covered by one test."""

    def covering(self, key):
        return ["tests/test_stats.py::test_describe"]


def _holds(source, candidate):
    return all(r.ok for r in check_structure(source, candidate.extra["structure"]["rules"]))


def test_three_inverse_refactorings_of_the_fixture():
    repo = open_repository(str(MINIREPO))
    got = {c.id.split("::")[1]: c for c in refactor_candidates(repo, _Covered())}
    assert set(got) == {
        "_spread:inline-helper",
        "_spread:duplicate-block",
        "_summary:merge-helper",
        "_summary:duplicate-block",  # describe's ``return _summary(...)`` takes the return too
    }
    original = repo.text(STATS)
    inline, merge = got["_spread:inline-helper"], got["_summary:merge-helper"]
    dup = got["_spread:duplicate-block"]
    assert inline.extra["callers"] == ["describe", "midrange", "value_range"]
    assert inline.extra["call_sites"] == 3
    assert "def _spread" not in inline.broken[STATS]
    assert inline.broken[STATS].count("smallest = ordered[0]") == 3
    assert merge.extra["callers"] == ["describe"] and "def _summary" not in merge.broken[STATS]
    assert "def _spread" in dup.broken[STATS]
    assert dup.broken[STATS].count("smallest = ordered[0]") == 2
    for c in got.values():
        compile(c.broken[STATS], STATS, "exec")
        assert c.kind == "refactor" and c.selected
        assert _holds(original, c), c.id  # the reference meets the predicate
        assert not _holds(c.broken[STATS], c), c.id  # the starting state does not
        assert c.broken[STATS].endswith("\n") and not c.broken[STATS].endswith("\n\n")


def test_a_change_no_test_runs_is_rejected_before_any_run():
    class _Uncovered(_Covered):
        def covering(self, key):
            return [] if key.endswith("::value_range") else super().covering(key)

    from referee.synth.validate import validate

    repo = open_repository(str(MINIREPO))
    cands = [c for c in refactor_candidates(repo, _Uncovered()) if "_spread" in c.id]
    assert {c.id.rsplit(":", 1)[1] for c in cands} == {"inline-helper", "duplicate-block"}
    # No sandbox: nothing is left to run once both are rejected.
    report = validate(None, repo, _Uncovered(), cands)
    assert report.rejected == {"refactor: a changed function no test runs": 2} and not report.kept


def test_unsafe_helpers_are_left_alone(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(
        "def _early(x):\n"
        "    if x:\n"
        "        return 1\n"
        "    y = x + 1\n"
        "    return y * 2 + 3\n\n\n"
        "def _clash(x):\n"
        "    y = x * 2 + 1\n"
        "    z = y - 3\n"
        "    return y + z\n\n\n"
        "def _rec(n):\n"
        "    return n and _rec(n - 1) + n * 2\n\n\n"
        "def _passed(x):\n"
        "    return x * 2 + x * 3\n\n\n"
        "def _safe(x):\n"
        "    return x * 3 + x // 2\n\n\n"
        "def a(x):\n"
        "    y = 0\n"
        "    return _early(x) + _clash(x) + y + _rec(x) + _safe(x)\n\n\n"
        "def b(x):\n"
        "    return _early(x) + _clash(x) + _rec(x) + sum(map(_passed, [x])) + _safe(y)\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text("def test_a():\n    pass\n")
    repo = open_repository(str(tmp_path))
    # _early returns early; _clash binds y, which a uses (and a helper with one call site it
    # cannot take is left whole); _rec recurses; _passed is passed as a value. Only _safe, an
    # expression of its argument, is inlined (as y in b shows, arguments are substituted).
    [c] = refactor_candidates(repo, _Covered())
    assert c.id == "pkg/mod.py::_safe:inline-helper"
    assert (
        "(y * 3 + y // 2)" in c.broken["pkg/mod.py"] and "def _safe" not in c.broken["pkg/mod.py"]
    )


def _repo(tmp_path, source):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text(source)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text("def test_a():\n    pass\n")
    return open_repository(str(tmp_path))


def test_early_returns_inline_at_return_sites_and_calls_in_expressions_are_hoisted(tmp_path):
    source = (
        "def _first_even(xs):\n"
        "    for x in xs:\n"
        "        if x % 2 == 0:\n"
        "            return x\n"
        "    return None\n\n\n"
        "def p(xs):\n"
        "    return _first_even(xs)\n\n\n"
        "def q(items):\n"
        "    return _first_even(items)\n\n\n"
        "def _pair(a):\n"
        "    doubled = a * 2\n"
        "    shifted = doubled + 1\n"
        "    return (doubled, shifted)\n\n\n"
        "def r(v):\n"
        "    print(len(_pair(v)))\n\n\n"
        "def s(v):\n"
        "    if sum(_pair(v)) > 3:\n"
        "        return 1\n"
        "    return 0\n"
    )
    repo = _repo(tmp_path, source)
    got = {c.id.split("::")[1]: c for c in refactor_candidates(repo, _Covered())}
    assert set(got) == {"_first_even:inline-helper", "_pair:inline-helper"}
    early = got["_first_even:inline-helper"].broken["pkg/mod.py"]
    assert (
        "    for x in items:\n        if x % 2 == 0:\n            return x\n    return None\n"
        in early
    )
    hoisted = got["_pair:inline-helper"].broken["pkg/mod.py"]
    assert (
        "    doubled = v * 2\n    shifted = doubled + 1\n    pair_result = (doubled, shifted)\n"
        "    print(len(pair_result))\n" in hoisted
    )
    assert "    if sum(pair_result) > 3:\n" in hoisted
    for c in got.values():
        namespace: dict = {}
        exec(compile(c.broken["pkg/mod.py"], "mod", "exec"), namespace)
        reference: dict = {}
        exec(compile(source, "mod", "exec"), reference)
        for f, arg in (("p", [1, 4]), ("q", [3]), ("s", 1), ("s", 2)):
            assert namespace[f](arg) == reference[f](arg)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return ArtifactStore("file://" + str(tmp_path_factory.mktemp("artifacts")))


@pytest.fixture(scope="module")
def report(store):
    return synthesize(str(MINIREPO), kinds=("refactor",), seed=1, store=store.url)


@pytest.fixture(scope="module")
def verifier(store):
    with PytestVerifier(store=store) as pv:
        yield pv


def _task(report, op, helper="_spread"):
    [t] = [
        t
        for t in report.tasks
        if t.hidden["operators"] == [op] and t.hidden["description"] == f"{op} {helper}"
    ]
    return t


def test_pipeline_keeps_one_task_per_inverse_refactoring(report):
    assert report.candidates_by_kind["refactor"] == 4
    assert report.kept_by_kind["refactor"] == 4 == len(report.tasks), report.to_json()
    assert dict(report.kept_by_operator) == {
        "inline-helper": 1,
        "merge-helper": 1,
        "duplicate-block": 2,
    }
    assert report.to_json()["kept_by_operator"] == dict(report.kept_by_operator)
    for t in report.tasks:
        t.verify_hash()
        assert t.kind == "repo-patch" and t.payload["kind"] == "refactor"
        assert t.hidden["fail_to_pass"] == [] and t.hidden["pass_to_pass"]
        assert t.hidden["structure"]["path"] == STATS
        assert t.difficulty.features["lines"] > 0
        assert "def " not in t.user_prompt  # the prompt names the helper, never shows it
    assert "`_spread`" in _task(report, "inline-helper").user_prompt
    assert "`_summary`" in _task(report, "merge-helper", "_summary").user_prompt


def _patch(t, new_text):
    return diff(STATS, t.payload["overrides"][STATS], new_text)


def _verdict(verifier, t, patch):
    v = verifier.verify(t, patch)
    assert v.infra_error is None, v.infra_error
    return v


def test_gold_scores_one_and_the_empty_patch_zero(report, verifier):
    for t in report.tasks:
        gold = _verdict(verifier, t, t.hidden["reference_patch"])
        assert gold.reward == 1.0 and gold.passed, gold
        assert any(o.detail == STRUCTURE for o in gold.tests)
        empty = _verdict(verifier, t, "")
        assert empty.reward == 0.0 and not empty.passed
        # Behaviour was preserved: every test passes; only the structure fails.
        tests = [o for o in empty.tests if o.detail == "PASS_TO_PASS"]
        assert tests and all(o.status == "passed" for o in tests)
        assert any(o.detail.startswith(STRUCTURE + ":") for o in empty.tests)


def test_red_team_patches_score_zero(report, verifier, tmp_path):
    original = (MINIREPO / STATS).read_text()
    inline = _task(report, "inline-helper")
    start = inline.payload["overrides"][STATS]
    # The helper and its calls restored, but its body deleted: the structure holds, the
    # behaviour does not.
    hollow = original.replace(
        '    if not values:\n        raise ValueError("no values")\n'
        "    ordered = sorted(values)\n    smallest = ordered[0]\n    largest = ordered[-1]\n"
        "    return smallest, largest\n",
        "    return 0, 0\n",
    )
    assert hollow != original
    v = _verdict(verifier, inline, _patch(inline, hollow))
    assert v.reward == 0.0 and all(o.status == "passed" for o in v.tests if o.detail == STRUCTURE)
    assert any(o.status == "failed" for o in v.tests if o.detail == "PASS_TO_PASS")
    # The callers' bodies deleted.
    gutted = start
    for name in ("value_range", "midrange", "describe"):
        gutted = stub_function(gutted, name)
    assert _verdict(verifier, inline, _patch(inline, gutted)).reward == 0.0
    # A helper added but never called: the tests pass, the copies stay.
    helper = original[original.index("def _spread") : original.index("def value_range")]
    unused = start.replace("def value_range", helper + "def value_range")
    v = _verdict(verifier, inline, _patch(inline, unused))
    assert v.reward == 0.0 and all(
        o.status == "passed" for o in v.tests if o.detail == "PASS_TO_PASS"
    )
    # The helper called, beside a changed copy of what it does (which no-clone does not see):
    # the callers are larger than they were.
    sneaky = start.replace(
        "    largest = ordered[-1]\n",
        "    largest = ordered[len(ordered) - 1]\n    _spread(values)\n",
    ).replace("def value_range", helper + "def value_range")
    v = _verdict(verifier, inline, _patch(inline, sneaky))
    failed = {o.name for o in v.tests if o.status != "passed"}
    assert v.reward == 0.0 and failed and all(n.startswith("structure: ") for n in failed), v
    assert failed == {o.name for o in v.tests if "has complexity <=" in o.name}  # bounded
    # Edits to the tests are undone before grading (and flagged).
    test_file = "tests/test_stats.py"
    tests = (MINIREPO / test_file).read_text()
    v = _verdict(verifier, inline, diff(test_file, tests, tests + "\n\ndef test_x():\n    pass\n"))
    assert v.reward == 0.0 and any(f.kind == "touches-tests-or-config" for f in v.flags)
    # duplicate-block: deleting the helper and keeping the copy is not removing duplication.
    dup = _task(report, "duplicate-block")
    dstart = dup.payload["overrides"][STATS]
    cut = dstart[dstart.index("def _spread") : dstart.index("def value_range")]
    no_helper = dstart.replace(cut, "").replace("_spread(values)", "(min(values), max(values))")
    v = _verdict(verifier, dup, _patch(dup, no_helper))
    assert v.reward == 0.0, v


def test_a_call_after_another_call_in_its_statement_is_not_hoisted(tmp_path):
    # Hoisting _trip's body before the statement would run it before xs.pop(): not done, and a
    # helper with one call site inlining cannot take is not inlined anywhere.
    repo = _repo(
        tmp_path,
        "def _trip(a):\n"
        "    doubled = a * 2\n"
        "    tripled = doubled + a\n"
        "    return tripled\n\n\n"
        "def t(v, xs):\n"
        "    return xs.pop() + _trip(v)\n\n\n"
        "def u(v):\n"
        "    y = _trip(v)\n"
        "    return y\n",
    )
    assert refactor_candidates(repo, _Covered()) == []
