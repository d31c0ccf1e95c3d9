"""The whole synthesis pipeline on the small fixture repository (tests/fixtures/minirepo)."""

import ast
import hashlib
from pathlib import Path

import pytest

from referee.synth.pipeline import synthesize
from referee.tasks.artifacts import ArtifactStore
from referee.tasks.split import check_split
from referee.verify.pytest_verifier import PytestVerifier
from referee.verify.testgen_verifier import TestgenVerifier

MINIREPO = Path(__file__).resolve().parents[1] / "fixtures" / "minirepo"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return ArtifactStore("file://" + str(tmp_path_factory.mktemp("artifacts")))


@pytest.fixture(scope="module")
def report(store):
    return synthesize(str(MINIREPO), seed=3, store=store.url)


@pytest.fixture(scope="module")
def verifiers(store):
    with PytestVerifier(store=store) as pv, TestgenVerifier(store=store) as tv:
        yield pv, tv


def _by_kind(report, kind):
    return [t for t in report.tasks if t.payload["kind"] == kind]


def is_testgen(task):
    return task.kind == "test-writing"  # the typed kind (referee.tasks.kinds.TaskKind)


def test_every_kind_yields_validated_tasks(report):
    assert report.baseline_excluded == {
        "tests/test_textutil.py::test_known_failure": "failed",
        "tests/test_textutil.py::test_skipped": "skipped",
    }
    for kind in ("bugfix", "implement", "testgen"):
        assert report.kept_by_kind[kind] >= 2, report.to_json()
    combined = [t for t in _by_kind(report, "bugfix") if len(t.hidden["functions"]) > 1]
    assert combined, "combinations of validated bugs are made"
    assert sum(report.kept_by_kind.values()) == len(report.tasks)
    assert report.validation_test_s > 0 and report.validation_variants > 0


def test_tasks_are_well_formed_and_never_show_the_answer(report):
    excluded = set(report.baseline_excluded)
    for t in report.tasks:
        t.verify_hash()
        assert t.answer_format == "patch"
        # What synth made decides the typed kind, and a new task says so outright.
        expected = "test-writing" if t.payload["kind"] == "testgen" else "repo-patch"
        assert t.kind == expected and t.model_dump(mode="json")["kind"] == expected
        assert t.schema_version == 2 and "kind" not in t.hidden
        assert t.payload["repo"]["snapshot"].startswith("sha256:")
        assert 0.0 <= t.difficulty.estimate <= 1.0
        if is_testgen(t):
            continue
        f2p, p2p = t.hidden["fail_to_pass"], t.hidden["pass_to_pass"]
        assert f2p and not set(f2p) & set(p2p)
        assert not (set(f2p) | set(p2p)) & excluded
        fix = t.hidden["reference_patch"]
        added = [
            ln[1:] for ln in fix.splitlines() if ln.startswith("+") and not ln.startswith("+++")
        ]
        for line in added:
            if line.strip():
                assert line not in t.user_prompt, "the prompt quotes a line of the fix"


def test_no_duplicate_starting_states(report):
    states = [
        str(sorted(t.payload["overrides"].items())) for t in report.tasks if not is_testgen(t)
    ]
    assert len(states) == len(set(states))


def test_held_out_split_has_no_leaks(report):
    r = check_split(report.tasks)
    assert r.ok
    assert {t.provenance.unit for t in report.tasks} <= {
        "minilib:minilib/textutil.py",
        "minilib:minilib/stats.py",
    }


def test_gold_passes_and_empty_patch_fails(report, verifiers):
    pv, tv = verifiers
    sample = (
        _by_kind(report, "bugfix")[:5]
        + _by_kind(report, "implement")[:2]
        + _by_kind(report, "testgen")  # every one: an empty answer must earn nothing
    )
    for t in sample:
        v = (tv if is_testgen(t) else pv).verify
        gold = v(t, t.hidden["reference_patch"])
        assert gold.passed and gold.reward == 1.0 and gold.infra_error is None, (t.id, gold)
        empty = v(t, "")
        assert not empty.passed and empty.reward == 0.0 and empty.infra_error is None, t.id
        if not is_testgen(t):
            # The starting state is what validation claimed: FAIL_TO_PASS fail, and every
            # PASS_TO_PASS passes, including those selected out by line coverage and never run
            # during validation.
            status = {o.name: o.status for o in empty.tests}
            assert all(status[n] != "passed" for n in t.hidden["fail_to_pass"]), t.id
            assert all(status[n] == "passed" for n in t.hidden["pass_to_pass"]), t.id


def test_testgen_rejects_weak_fingerprinting_and_failing_tests(report, verifiers):
    _, tv = verifiers
    t = _by_kind(report, "testgen")[0]
    target = t.hidden["target_test_file"]
    start = t.payload["overrides"][target]
    module, qual = t.hidden["function"].split("::")
    mod = module.removesuffix(".py").replace("/", ".")
    from referee.verify.redteam_pytest import diff

    def patch(extra):
        return diff(target, start, start + "\n\n" + extra)

    weak = f"def test_exists():\n    import {mod} as m\n    assert callable(m.{qual})\n"
    v = tv.verify(t, patch(weak))
    assert v.reward == 0.0 and not v.passed  # passes everywhere, kills nothing
    fingerprint = (
        f"def test_source():\n    import hashlib, inspect, {mod} as m\n"
        f"    src = inspect.getsource(m.{qual})\n"
        f"    assert hashlib.sha256(src.encode()).hexdigest() == "
        f"{hashlib.sha256(_source_of(module, qual).encode()).hexdigest()!r}\n"
    )
    v = tv.verify(t, patch(fingerprint))
    assert v.reward == 0.0 and not v.passed, v  # fails on the equivalent variant
    assert any(f.kind == "fingerprints-source" for f in v.flags)
    v = tv.verify(t, patch("def test_always_fails():\n    assert False\n"))
    assert v.reward == 0.0  # must pass on the original first


def _source_of(module, qual):
    """What inspect.getsource returns for a top-level function, read without running it."""
    text = (MINIREPO / module).read_text()
    node = next(n for n in ast.parse(text).body if getattr(n, "name", None) == qual)
    return "".join(text.splitlines(keepends=True)[node.lineno - 1 : node.end_lineno])


def test_limit_caps_the_candidates_of_each_kind_all_stages_together(store):
    r = synthesize(str(MINIREPO), seed=4, store=store.url, limit=2)
    # bugfix validates single bugs, then their combinations: 2 in all (seed 4 made 2 + 1).
    assert r.candidates_by_kind["bugfix"] == 2
    assert all(n <= 2 for n in r.candidates_by_kind.values()), r.candidates_by_kind
    assert sum(r.kept_by_kind.values()) == len(r.tasks) <= 6
