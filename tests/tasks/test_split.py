import re

import pytest

from referee.tasks.model import Provenance, Task
from referee.tasks.split import assign_split, check_split


def _task(i, unit, split):
    return Task.create(
        name=f"t/{i}", prompt="p", split=split, provenance=Provenance(source="s", unit=unit)
    )


def test_assignment_is_deterministic_and_near_the_fraction():
    units = [f"repo:mod{i}.py" for i in range(2000)]
    splits = [assign_split(u, 0.2) for u in units]
    assert splits == [assign_split(u, 0.2) for u in units]
    share = splits.count("heldout") / len(units)
    assert 0.17 < share < 0.23
    assert all(assign_split(u, 0.0) == "train" for u in units[:50])
    assert all(assign_split(u, 1.0) == "heldout" for u in units[:50])


def test_leaks_are_reported_by_unit():
    ok = [_task(1, "r:a.py", "train"), _task(2, "r:a.py", "train"), _task(3, "r:b.py", "heldout")]
    report = check_split(ok)
    assert report.ok and report.counts == {"train": 2, "heldout": 1}
    assert report.units == {"train": 1, "heldout": 1}
    leaky = check_split([*ok, _task(4, "r:b.py", "train")])
    assert not leaky.ok
    assert leaky.leaks == {"r:b.py": {"heldout": ["t/3"], "train": ["t/4"]}}


def _repo_task(i, unit, function):
    return Task.create(
        name=f"r/{i}",
        prompt="p",
        kind="repo-patch",
        answer_format="patch",
        hidden={"functions": [function]},
        provenance=Provenance(source="s", unit=unit),
    )


def test_units_by_module_function_and_structure():
    from referee.tasks.procedural import generate
    from referee.tasks.split import unit_by

    bug = _repo_task(1, "lib:pkg/text.py", "pkg/text.py::slugify")
    assert unit_by(bug, "module") == "lib:pkg/text.py"
    assert unit_by(bug, "function") == "lib:pkg/text.py::slugify"
    assert unit_by(bug, "structure") == "lib:pkg/text.py"  # as synth recorded it
    by_function = _repo_task(2, "lib:pkg/text.py::wrap", "pkg/text.py::wrap")
    assert unit_by(by_function, "module") == "lib:pkg/text.py"
    listops = generate("list-ops", difficulty=0.5, seed=3)
    assert unit_by(listops, "structure") == listops.provenance.unit.startswith("list-ops:") * (
        listops.provenance.unit
    )
    assert unit_by(listops, "module") == unit_by(listops, "function") == f"task:{listops.id}"


def test_split_tasks_keeps_units_whole_and_both_splits_filled():
    from referee.tasks.split import split_tasks

    tasks = [_repo_task(i, f"lib:m{i % 7}.py", f"m{i % 7}.py::f{i}") for i in range(40)]
    out = split_tasks(tasks, 0.3, by="module")
    assert [t.id for t in out] == [t.id for t in tasks]
    assert [t.content_hash for t in out] == [t.content_hash for t in tasks]  # split: not hashed
    assert check_split(out).ok
    assert {t.split for t in out} == {"train", "heldout"}
    by_function = split_tasks(tasks, 0.3, by="function")
    assert check_split(by_function, by="function").ok
    assert not check_split(by_function).ok  # the recorded units are modules: some leak
    # A tiny file whose units all hash to one side still gets one unit on each side.
    for fraction in (0.01, 0.99):
        two = split_tasks(tasks[:2], fraction, by="module")
        assert sorted(t.split for t in two) == ["heldout", "train"]
    assert {t.split for t in split_tasks(tasks, 0.0, by="module")} == {"train"}
    assert {t.split for t in split_tasks(tasks, 1.0, by="module")} == {"heldout"}


@pytest.mark.parametrize(("fraction", "by", "message"), [
    (0.2, "file", "--by must be module, function or structure, got 'file'"),
    (1.5, "module", "--heldout must be a share in [0, 1], got 1.5"),
])  # fmt: skip
def test_split_tasks_refuses_bad_options(fraction, by, message):
    from referee.errors import ConfigError
    from referee.tasks.split import split_tasks

    with pytest.raises(ConfigError, match=re.escape(message)):
        split_tasks([_task(1, "r:a.py", "train")], fraction, by=by)
