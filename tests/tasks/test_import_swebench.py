"""SWE-bench instances as repo-patch tasks from a local checkout; judged by the pytest verifier
with the hidden test_patch applied at verification time."""

import json
import subprocess
from pathlib import Path

import pytest

from referee.errors import ConfigError, TaskError
from referee.tasks.artifacts import ArtifactStore
from referee.tasks.kinds import TaskKind
from referee.tasks.sources import load_source

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports" / "swebench"


@pytest.fixture
def checkout(tmp_path):
    """The fixture repository, cloned from its bundle as example__calc (SWE-bench's naming)."""
    root = tmp_path / "repos"
    root.mkdir()
    subprocess.run(
        ["git", "clone", "-q", str(FIXTURES / "calc.bundle"), str(root / "example__calc")],
        check=True,
    )
    return root


def _load(checkout, tmp_path, name="test.jsonl"):
    store = f"file://{tmp_path / 'store'}"
    return load_source("swebench", "heldout", FIXTURES / name, repo_dir=str(checkout), store=store)


def test_instances_become_repo_patch_tasks_over_a_snapshot_of_base_commit(checkout, tmp_path):
    first, second = _load(checkout, tmp_path)
    row = json.loads((FIXTURES / "test.jsonl").read_text().splitlines()[0])
    assert [first.id, second.id] == ["swebench/example__calc-1", "swebench/example__calc-2"]
    assert first.kind is TaskKind.REPO_PATCH and first.answer_format == "patch"
    assert first.provenance.source == "swebench" and first.split == "heldout"
    repo = first.payload["repo"]
    assert repo["name"] == "example/calc" and repo["source_roots"] == [""]
    assert repo["test_files"] == ["tests/test_ops.py"] and repo["conftests"] == []
    assert first.payload["base_commit"] == row["base_commit"]
    files = ArtifactStore.at(repo["store"]).get_files(repo["snapshot"])
    assert set(files) == {"calc/__init__.py", "calc/ops.py", "tests/test_ops.py"}
    assert b"return a + b" in files["calc/ops.py"].split(b"def sub")[1]  # the bug, unfixed
    assert first.hidden["fail_to_pass"] == [
        "tests/test_ops.py::test_sub",
        "tests/test_extra.py::test_sub_twice",
    ]
    assert first.hidden["pass_to_pass"] == ["tests/test_ops.py::test_add"]
    assert first.hidden["test_patch"] == row["test_patch"]
    assert first.hidden["reference_patch"] == row["patch"]
    # The hidden tests are nowhere the model looks: not in the prompt, payload or snapshot.
    visible = first.user_prompt + json.dumps(first.payload) + str(files)
    assert "test_sub_twice" not in visible and "sub(3, 1) returns 4" in first.user_prompt
    assert second.hidden["fail_to_pass"] == ["tests/test_ops.py::test_sub"]  # a list, as is
    assert 'Print "naïve\\path"' in second.user_prompt
    assert second.payload["repo"]["snapshot"] == repo["snapshot"]  # one commit, one snapshot


def test_rows_without_a_checkout_or_with_other_test_ids_are_refused(checkout, tmp_path):
    with pytest.raises(TaskError, match=r"test\.jsonl:1: field 'repo_dir': no checkout"):
        load_source("swebench", "train", FIXTURES / "test.jsonl")
    with pytest.raises(ConfigError, match="is not a git checkout of example/calc"):
        _load(tmp_path, tmp_path)
    with pytest.raises(TaskError, match=r"malformed\.jsonl:2: field 'FAIL_TO_PASS': 'test_sub"):
        _load(checkout, tmp_path, "malformed.jsonl")


def test_a_base_commit_missing_from_the_checkout_is_named(checkout, tmp_path):
    row = json.loads((FIXTURES / "test.jsonl").read_text().splitlines()[0])
    (tmp_path / "r.jsonl").write_text(json.dumps({**row, "base_commit": "0" * 40}) + "\n")
    with pytest.raises(TaskError, match=r"r\.jsonl:1: field 'base_commit': 0{40} is not in"):
        load_source("swebench", "train", tmp_path / "r.jsonl", repo_dir=str(checkout),
                    store=f"file://{tmp_path / 'store'}")  # fmt: skip


def test_the_pytest_verifier_applies_the_hidden_tests(checkout, tmp_path):
    from referee.verify.pytest_verifier import PytestVerifier

    task = _load(checkout, tmp_path)[0]
    with PytestVerifier(timeout_s=60) as pv:
        gold = pv.verify(task, task.hidden["reference_patch"])
        assert gold.passed and gold.reward == 1.0, gold
        assert {t.name for t in gold.tests} == {
            "tests/test_ops.py::test_sub",
            "tests/test_extra.py::test_sub_twice",
            "tests/test_ops.py::test_add",
        }
        empty = pv.verify(task, "")
        assert not empty.passed and empty.reward == 0.0 and empty.infra_error is None
        # A candidate writing the hidden test file itself: its version is replaced.
        cheat = (
            "--- /dev/null\n+++ b/tests/test_extra.py\n@@ -0,0 +1,2 @@\n"
            "+def test_sub_twice():\n+    pass\n"
        )
        v = pv.verify(task, cheat)
        assert not v.passed and v.infra_error is None, v
