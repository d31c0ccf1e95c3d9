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
