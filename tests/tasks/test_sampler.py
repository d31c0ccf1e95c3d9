"""The held-out guard: no path through the training sampler yields a held-out task."""

import doctest
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import referee.tasks.sampler as sampler_module
from referee.errors import ConfigError, TaskError
from referee.tasks.curriculum import Curriculum, CurriculumConfig, Group
from referee.tasks.model import Task
from referee.tasks.sampler import TrainingSampler, heldout_tasks

POOL = 24
# Built once: pydantic validation is the slow part of a property example otherwise.
TRAIN = [Task.create(name=f"train/{i}", prompt=f"train task {i}") for i in range(POOL)]
HELDOUT = [
    Task.create(name=f"heldout/{i}", prompt=f"held-out task {i}", split="heldout")
    for i in range(POOL)
]


def _mix(n_train, n_heldout):
    return [*TRAIN[:n_train], *HELDOUT[:n_heldout]]


def test_docstring_examples_run():
    result = doctest.testmod(sampler_module)
    assert result.attempted > 0 and result.failed == 0


# ---- the property ------------------------------------------------------------------------------

rewards = st.lists(st.one_of(st.none(), st.booleans(), st.floats(0.0, 1.0)), max_size=6)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("sample"), st.integers(0, 2 * POOL), st.booleans()),
        st.tuples(st.just("update"), st.integers(0, POOL - 1), rewards),
        st.tuples(st.just("observe"), st.lists(st.tuples(st.integers(0, POOL - 1), rewards))),
        st.tuples(st.just("feed_curriculum"), st.integers(0, POOL - 1), rewards),
        st.tuples(st.just("resume")),
    ),
    max_size=25,
)


@st.composite
def scenarios(draw):
    splits = draw(st.lists(st.sampled_from(["train", "heldout"]), min_size=1, max_size=POOL))
    tasks = [TRAIN[i] if s == "train" else HELDOUT[i] for i, s in enumerate(splits)]
    tasks = draw(st.permutations(tasks))
    config = CurriculumConfig(
        mode=draw(st.sampled_from(["pass_rate", "uniform"])),
        window=8,
        retire_threshold=draw(st.sampled_from([None, 0.5, 1.0])),
        retire_min_attempts=draw(st.integers(1, 8)),
    )
    return tasks, config, draw(st.integers(0, 2**32)), draw(ops)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_sample_never_yields_a_held_out_task(scenario):
    tasks, config, seed, operations = scenario
    train = {t.id: t for t in tasks if t.split == "train"}
    heldout = {t.id for t in tasks if t.split != "train"}
    by_index = {int(t.id.split("/")[1]): t for t in tasks}

    if not train:
        with pytest.raises(TaskError, match=r"no training tasks: all .* held out"):
            TrainingSampler(tasks, Curriculum(config=config, seed=seed))
        return
    sampler = TrainingSampler(tasks, Curriculum(config=config, seed=seed))

    for op in operations:
        kind = op[0]
        if kind == "sample":
            _, n, replace = op
            eligible = len(sampler.curriculum.eligible())
            try:
                got = sampler.sample(n, replace=replace)
            except TaskError as e:  # the only legitimate refusal: everything is retired
                assert eligible == 0 and "retired" in str(e)
                continue
            except ConfigError as e:  # or more distinct tasks asked for than there are
                assert not replace and n > eligible and "eligible" in str(e)
                continue
            assert len(got) == n
            for t in got:
                assert t.split == "train" and t.id not in heldout
                assert train[t.id] is t
            if not replace:
                assert len({t.id for t in got}) == n
        elif kind in ("update", "feed_curriculum"):
            _, i, rs = op
            if i not in by_index:
                continue
            task = by_index[i]
            target = sampler.update if kind == "update" else sampler.curriculum.update
            if task.id in heldout:
                # Whether through the sampler or straight into its curriculum: refused.
                with pytest.raises(TaskError, match=repr(task.id)):
                    target(Group(task.id, rs))
            else:
                target(Group(task.id, rs))
        elif kind == "observe":
            groups = [Group(by_index[i].id, rs) for i, rs in op[1] if i in by_index]
            before = sampler.state_dict()
            if any(g.task_id in heldout for g in groups):
                with pytest.raises(TaskError, match="held out"):
                    sampler.observe(groups)
                assert sampler.state_dict() == before  # checked before anything is recorded
            else:
                sampler.observe(groups)
        else:
            sampler.load_state_dict(json.loads(json.dumps(sampler.state_dict())))

        # No held-out id ever reaches the curriculum, by any path.
        assert not heldout & set(sampler.curriculum.task_ids)
        assert not heldout & set(sampler.curriculum.tracker.task_ids())


def test_the_property_is_not_vacuous_a_bare_curriculum_would_leak():
    """Without the sampler, a held-out id slipped into the curriculum is sampled: the guard is
    what stops it (next tests)."""
    cur = Curriculum([t.id for t in TRAIN[:2]], CurriculumConfig.uniform(), seed=0)
    cur.add_tasks([HELDOUT[0].id])
    assert HELDOUT[0].id in cur.sample(3)


# ---- injection after construction --------------------------------------------------------------


def _all_of(sampler):
    return sampler.sample(len(sampler.curriculum.eligible()))


def test_a_held_out_id_added_to_the_curriculum_is_refused_at_sampling():
    sampler = TrainingSampler(_mix(3, 2), Curriculum(config=CurriculumConfig.uniform()))
    sampler.curriculum.add_tasks(["heldout/1"])
    with pytest.raises(TaskError, match=r"refusing to return task 'heldout/1'.*held out"):
        _all_of(sampler)


def test_a_task_changed_in_place_to_held_out_is_refused():
    tasks = [Task.create(name=f"m/{i}", prompt=f"mutable {i}") for i in range(3)]
    sampler = TrainingSampler(tasks, Curriculum(config=CurriculumConfig.uniform()))
    assert len(_all_of(sampler)) == 3
    # Frozen pydantic models refuse attribute assignment, but not object.__setattr__.
    object.__setattr__(tasks[1], "split", "heldout")
    with pytest.raises(TaskError, match=r"'m/1'.*split is now 'heldout'"):
        _all_of(sampler)


def test_a_held_out_task_smuggled_in_under_its_id_with_split_train_is_refused():
    sampler = TrainingSampler(_mix(2, 2), Curriculum(config=CurriculumConfig.uniform()))
    disguised = HELDOUT[0].model_copy(update={"split": "train"})
    sampler._train[disguised.id] = disguised  # the red team reaches into the internals
    sampler.curriculum.add_tasks([disguised.id])
    with pytest.raises(TaskError, match=r"'heldout/0'.*held out"):
        _all_of(sampler)


def test_a_task_swapped_for_other_content_is_refused():
    sampler = TrainingSampler(_mix(2, 1), Curriculum(config=CurriculumConfig.uniform()))
    sampler._train["train/0"] = HELDOUT[0].model_copy(update={"id": "train/0", "split": "train"})
    with pytest.raises(TaskError, match=r"'train/0'.*(content|held-out)"):
        _all_of(sampler)


def test_a_replaced_curriculum_with_held_out_ids_is_refused():
    sampler = TrainingSampler(_mix(2, 2))
    sampler.curriculum = Curriculum(["train/0", "heldout/1"], CurriculumConfig.uniform())
    with pytest.raises(TaskError, match="'heldout/1'"):
        sampler.sample(2)


def test_a_state_holding_held_out_ids_is_refused_and_changes_nothing():
    sampler = TrainingSampler(_mix(2, 2), seed=1)
    before = sampler.state_dict()
    evil = json.loads(json.dumps(before))
    evil["pool"].append("heldout/0")
    with pytest.raises(TaskError, match=r"'heldout/0', which is held out"):
        sampler.load_state_dict(evil)
    assert sampler.state_dict() == before


def test_a_curriculum_given_with_held_out_ids_is_refused():
    with pytest.raises(TaskError, match=r"'heldout/0', which is held out"):
        TrainingSampler(_mix(2, 2), Curriculum(["train/0", "heldout/0"]))
    with pytest.raises(TaskError, match=r"'elsewhere', which is not a training task"):
        TrainingSampler(_mix(2, 2), Curriculum(["elsewhere"]))


# ---- construction ------------------------------------------------------------------------------


def test_only_held_out_tasks_is_a_clear_error():
    with pytest.raises(TaskError, match=r"no training tasks: all 3 tasks given are held out"):
        TrainingSampler(HELDOUT[:3])
    with pytest.raises(TaskError, match="the task list is empty"):
        TrainingSampler([])


def test_held_out_tasks_are_left_out_at_construction():
    sampler = TrainingSampler(_mix(3, 4), seed=0)
    assert [t.id for t in sampler.tasks] == ["train/0", "train/1", "train/2"]
    assert sampler.heldout_ids == {f"heldout/{i}" for i in range(4)}
    assert set(sampler.curriculum.task_ids) == {"train/0", "train/1", "train/2"}
    assert len(sampler) == 3


def test_leaks_between_the_splits_are_refused_at_construction():
    twin = Task.create(name="train/0", prompt="same id, other content", split="heldout")
    with pytest.raises(TaskError, match="'train/0' is both a training and a held-out task"):
        TrainingSampler([TRAIN[0], twin])
    copy = Task.create(name="copy", prompt=HELDOUT[0].user_prompt)  # same content, train split
    with pytest.raises(TaskError, match="'copy' has the same content as a held-out task"):
        TrainingSampler([copy, HELDOUT[0]])
    with pytest.raises(TaskError, match="appears twice"):
        TrainingSampler([TRAIN[0], TRAIN[0]])


def test_seed_goes_to_the_curriculum_it_belongs_to():
    with pytest.raises(ConfigError, match="seed"):
        TrainingSampler(TRAIN[:2], Curriculum(), seed=3)
    a = TrainingSampler(TRAIN, seed=5)
    b = TrainingSampler(TRAIN, seed=5)
    assert [t.id for t in a.sample(6)] == [t.id for t in b.sample(6)]


def test_training_updates_reach_the_curriculum_and_unknown_ids_are_refused():
    sampler = TrainingSampler(_mix(3, 1), seed=0)
    sampler.update(Group("train/1", [1.0, 0.0]), step=4)
    assert sampler.curriculum.tracker.summary("train/1").first_seen == 4
    report = sampler.observe([Group("train/0", [1.0, 1.0]), Group("train/2", [0.0, 1.0])])
    assert [g.task_id for g in report.kept] == ["train/2"]
    with pytest.raises(TaskError, match="'nowhere' is not one of this sampler's 3 training"):
        sampler.update(Group("nowhere", [1.0]))


def test_heldout_tasks_for_evaluation():
    tasks = _mix(3, 2)
    assert heldout_tasks(tasks) == HELDOUT[:2]
    with pytest.raises(TaskError, match="none of the 3 tasks is held out"):
        heldout_tasks(TRAIN[:3])
