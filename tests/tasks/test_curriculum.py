import doctest
import json
import math
from collections import Counter

import pytest

import referee.tasks.curriculum as curriculum_module
from referee.errors import ConfigError, TaskError
from referee.tasks.curriculum import Curriculum, CurriculumConfig, Group, PassRateTracker


def test_docstring_examples_run():
    result = doctest.testmod(curriculum_module)
    assert result.attempted > 0 and result.failed == 0


# ---- tracker -----------------------------------------------------------------------------------


def test_beta_smoothing_does_not_call_one_lucky_pass_solved():
    tr = PassRateTracker()
    assert tr.estimate("new") == 0.5  # the prior mean
    tr.record("t", [True], step=0)
    assert tr.estimate("t") == pytest.approx(2 / 3)
    tr.record("t", [False, False], step=1)
    assert tr.estimate("t") == pytest.approx((1 + 1) / (2 + 3))
    skewed = PassRateTracker(prior_alpha=1.0, prior_beta=3.0)
    assert skewed.estimate("new") == 0.25


def test_window_keeps_only_recent_outcomes_but_lifetime_counts_everything():
    tr = PassRateTracker(window=4)
    tr.record("t", [0.0] * 10, step=0)
    tr.record("t", [1.0] * 4, step=5)
    s = tr.summary("t")
    assert (s.attempts, s.passes, s.window_attempts, s.window_passes) == (14, 4, 4, 4)
    assert s.estimate == pytest.approx(5 / 6)  # only the 4 passes of the window count
    assert (s.first_seen, s.last_seen) == (0, 5)
    assert s.mean_reward == pytest.approx(4 / 14) and s.best_reward == 1.0
    # The passes falling out of the window are subtracted again.
    tr.record("t", [0.0, 0.0, 0.0], step=6)
    assert tr.window_share("t") == (1, 4)


def test_partial_rewards_count_as_fractional_successes_not_passes():
    tr = PassRateTracker(window=8)
    tr.record("t", [0.5, 0.5], step=0)
    assert tr.estimate("t") == pytest.approx((1 + 1.0) / (2 + 2))
    assert tr.summary("t").passes == 0
    lenient = PassRateTracker(pass_threshold=0.5)
    lenient.record("t", [0.5, 0.4], step=0)
    assert lenient.summary("t").passes == 1


def test_infra_errors_are_not_outcomes_and_bad_rewards_are_refused():
    tr = PassRateTracker()
    assert tr.record("t", [None, None], step=0) == 0
    assert "t" not in tr and tr.attempts("t") == 0
    for bad in (1.5, -0.1, math.nan):
        with pytest.raises(ConfigError, match=r"task 't': reward .* outside \[0, 1\]"):
            tr.record("t", [bad], step=0)


def test_tracker_state_round_trips_through_json():
    tr = PassRateTracker(window=3)
    tr.record("a", [1.0, 0.0, 1.0, 1.0], step=2)
    tr.record("b", [0.25], step=4)
    again = PassRateTracker(window=3)
    again.load_state_dict(json.loads(json.dumps(tr.state_dict())))
    for t in ("a", "b"):
        assert again.summary(t) == tr.summary(t)


# ---- weights and sampling ----------------------------------------------------------------------


def _cur(ids=("a", "b", "c", "d"), seed=0, **cfg):
    return Curriculum(ids, CurriculumConfig(**cfg), seed=seed)


def test_weights_follow_p_one_minus_p_with_an_unseen_bonus_and_a_floor():
    cur = _cur(window=64, retire_threshold=None, floor=0.02, unseen_bonus=0.3)
    cur.update(Group("a", [1.0, 0.0] * 4))  # p = 0.5
    cur.update(Group("b", [1.0] * 7 + [0.0]))  # p = 8/10
    cur.update(Group("c", [0.0] * 60))  # p = 1/62: p(1-p) below the floor
    assert cur.weight("a") == pytest.approx(0.25)
    assert cur.weight("b") == pytest.approx(0.8 * 0.2)
    assert cur.weight("c") == pytest.approx(0.02)
    assert cur.weight("d") == pytest.approx(0.25 + 0.3)  # unseen: prior 0.5 plus the bonus
    probs = cur.probabilities()
    assert sum(probs.values()) == pytest.approx(1.0)
    assert probs["d"] > probs["a"] > probs["b"] > probs["c"] > 0


def test_uniform_mode_weighs_every_task_the_same_and_never_retires():
    cur = Curriculum(["a", "b", "c"], CurriculumConfig.uniform(), seed=0)
    cur.update(Group("a", [1.0] * 40))
    cur.update(Group("b", [0.0] * 40))
    assert cur.probabilities() == pytest.approx({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3})
    assert cur.retired() == {}
    assert cur.tracker.summary("a").passes == 40  # still tracked, for the comparison's logs


def test_first_draw_follows_the_probabilities():
    """Efraimidis-Spirakis: the first key's winner has probability w_i / sum(w)."""
    cur = _cur(ids=("a", "b", "c"), window=64, retire_threshold=None, unseen_bonus=0.0)
    cur.update(Group("a", [1.0, 0.0] * 10))  # weight 0.25
    cur.update(Group("b", [1.0] * 18 + [0.0] * 2))  # p = 19/22
    cur.update(Group("c", [0.0] * 40))  # p = 1/42
    probs = cur.probabilities()
    draws = 20_000
    firsts = Counter(cur.sample(2)[0] for _ in range(draws))
    for t, p in probs.items():
        sd = math.sqrt(p * (1 - p) / draws)
        assert abs(firsts[t] / draws - p) < 5 * sd, (t, firsts[t] / draws, p)


def test_with_replacement_draws_follow_the_probabilities():
    cur = _cur(ids=("a", "b"), retire_threshold=None, unseen_bonus=0.0)
    cur.update(Group("b", [0.0] * 30))  # p = 1/32
    probs = cur.probabilities()
    n = 20_000
    got = Counter(cur.sample(n, replace=True))
    assert abs(got["b"] / n - probs["b"]) < 5 * math.sqrt(probs["b"] * (1 - probs["b"]) / n)


def test_batches_are_distinct_and_deterministic_given_the_seed():
    ids = [f"t{i}" for i in range(20)]
    a = Curriculum(ids, seed=7)
    b = Curriculum(ids, seed=7)
    batches_a = [a.sample(5) for _ in range(10)]
    assert batches_a == [b.sample(5) for _ in range(10)]
    assert all(len(set(batch)) == 5 for batch in batches_a)
    assert batches_a != [Curriculum(ids, seed=8).sample(5) for _ in range(10)]


def test_sample_sizes_are_checked():
    cur = _cur(ids=("a", "b"))
    assert cur.sample(0) == []
    with pytest.raises(ConfigError, match=r"only 2 are eligible.*replace=True"):
        cur.sample(3)
    assert len(cur.sample(3, replace=True)) == 3
    with pytest.raises(ConfigError, match="whole number"):
        cur.sample(-1)
    with pytest.raises(TaskError, match="no tasks"):
        Curriculum().sample(1)


def test_floor_keeps_every_eligible_task_reachable():
    cur = _cur(ids=("hard", "mid"), window=500, retire_threshold=None, floor=0.05)
    cur.update(Group("hard", [0.0] * 500))
    cur.update(Group("mid", [1.0, 0.0] * 250))
    assert cur.probabilities()["hard"] == pytest.approx(0.05 / 0.30)
    assert "hard" in Counter(cur.sample(1)[0] for _ in range(300))


# ---- outcomes: updates, filtering, retirement, reports ------------------------------------------


def test_outcomes_for_ids_outside_the_pool_are_refused():
    cur = _cur(ids=("a",))
    with pytest.raises(TaskError, match=r"task 'ghost' is not in this curriculum"):
        cur.update(Group("ghost", [1.0]))
    assert "ghost" not in cur and "ghost" not in cur.tracker


def test_saturated_tasks_retire_after_enough_attempts_only():
    cur = _cur(ids=("easy", "other"), retire_threshold=0.9, retire_min_attempts=8)
    cur.update(Group("easy", [1.0] * 7), step=3)
    assert cur.retired() == {}  # 7 of 7, but fewer than 8 attempts
    cur.update(Group("easy", [1.0]), step=4)
    assert cur.retired() == {"easy": 4}
    assert cur.eligible() == ["other"]
    assert all(cur.sample(1) == ["other"] for _ in range(20))
    cur.update(Group("other", [1.0] * 8 + [0.0]))  # 8 of 9 < 0.9
    assert "other" not in cur.retired()
    cur.update(Group("other", [1.0]))  # 9 of 10
    with pytest.raises(TaskError, match=r"every task of the curriculum is retired \(2 of 2\)"):
        cur.sample(1)


def test_retirement_judges_the_recent_window_not_the_lifetime():
    cur = _cur(ids=("t",), window=8, retire_threshold=1.0, retire_min_attempts=8)
    cur.update(Group("t", [0.0] * 50))
    cur.update(Group("t", [1.0] * 7))
    assert cur.retired() == {}
    cur.update(Group("t", [1.0]))  # the last 8 all passed
    assert "t" in cur.retired()


def test_zero_variance_groups_are_dropped_and_counted_by_reason():
    cur = _cur(ids=("a", "b", "c", "d", "e"))
    groups = [
        Group("a", [1.0, 1.0, 1.0]),
        Group("b", [0.0, 0.0]),
        Group("c", [0.5, 0.5]),
        Group("d", [None, None]),
        Group("e", [0.0, None, 1.0]),
        Group("a", [1.0]),
        Group("b", [0.25, 0.5]),
    ]
    report = cur.filter_groups(groups)
    assert [g.task_id for g in report.kept] == ["e", "b"]
    assert report.kept[1] is groups[6]  # the caller's own objects come back
    assert report.dropped == [
        ("a", "all_passed"),
        ("b", "all_failed"),
        ("c", "constant"),
        ("d", "no_rewards"),
        ("a", "all_passed"),
    ]
    assert report.n_dropped == 5
    assert report.counts() == {"all_passed": 2, "all_failed": 1, "constant": 1, "no_rewards": 1}
    summary = cur.summary()
    assert summary["groups"] == 7 and summary["groups_dropped"] == 5
    assert summary["groups_dropped_all_passed"] == 2


def test_observe_updates_with_every_group_even_the_dropped_ones():
    cur = _cur(ids=("a", "b"))
    report = cur.observe([Group("a", [1.0, 1.0]), Group("b", [0.0, 1.0])], step=2)
    assert [g.task_id for g in report.kept] == ["b"]
    assert cur.tracker.attempts("a") == 2 and cur.tracker.attempts("b") == 2
    assert cur.tracker.summary("a").first_seen == 2


def test_groups_of_any_shape_with_task_id_and_rewards_are_accepted():
    class Rollouts:
        def __init__(self, task_id, trajectories):
            self.task_id = task_id
            self.trajectories = trajectories

        @property
        def rewards(self):
            return [t["reward"] for t in self.trajectories]

    cur = _cur(ids=("a",))
    report = cur.observe([Rollouts("a", [{"reward": 1.0}, {"reward": 0.0}])])
    assert report.kept[0].trajectories[0] == {"reward": 1.0}


def test_never_solved_lists_tasks_tried_often_and_never_passed():
    cur = _cur(ids=("broken", "hard", "fine", "rare"), retire_threshold=None)
    cur.update(Group("broken", [0.0] * 40))
    cur.update(Group("hard", [0.0] * 33 + [0.9]))  # close, but never a pass
    cur.update(Group("fine", [0.0] * 39 + [1.0]))
    cur.update(Group("rare", [0.0] * 5))
    found = cur.never_solved(min_attempts=32)
    assert [s.task_id for s in found] == ["broken", "hard"]
    assert found[1].best_reward == 0.9
    assert [s.task_id for s in cur.never_solved(min_attempts=5)] == ["broken", "hard", "rare"]
    with pytest.raises(ConfigError):
        cur.never_solved(0)


def test_update_step_defaults_to_the_number_of_batches_drawn():
    cur = _cur(ids=("a", "b"))
    cur.sample(1)
    cur.sample(1)
    cur.update(Group("a", [1.0]))
    assert cur.draws == 2 and cur.tracker.summary("a").first_seen == 2


# ---- config and state --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("mode", "greedy"),
        ("window", 0),
        ("prior_alpha", 0.0),
        ("prior_beta", math.inf),
        ("floor", 0.0),
        ("floor", 0.3),
        ("unseen_bonus", -1.0),
        ("pass_threshold", 0.0),
        ("retire_threshold", 1.5),
        ("retire_min_attempts", 33),
    ],
)
def test_bad_settings_are_named(field, value):
    with pytest.raises(ConfigError, match=f"curriculum {field}="):
        CurriculumConfig(**{field: value})


def test_state_round_trips_through_json_and_resumes_the_same_draws():
    ids = [f"t{i}" for i in range(12)]
    cur = Curriculum(ids, CurriculumConfig(retire_min_attempts=4, retire_threshold=1.0), seed=3)
    for step in range(5):
        for t in cur.sample(4):
            cur.update(Group(t, [1.0] * 4 if t in ("t0", "t1") else [1.0, 0.0, 0.0]), step=step)
    cur.filter_groups([Group("t2", [0.0, 0.0])])
    saved = json.loads(json.dumps(cur.state_dict()))
    resumed = Curriculum.from_state_dict(saved)
    assert resumed.config == cur.config
    assert resumed.task_ids == cur.task_ids and resumed.retired() == cur.retired()
    assert resumed.summary() == cur.summary()
    assert resumed.probabilities() == cur.probabilities()
    assert [resumed.sample(3) for _ in range(20)] == [cur.sample(3) for _ in range(20)]


def test_a_bad_state_is_refused_and_changes_nothing():
    cur = _cur(ids=("a",))
    before = cur.state_dict()
    with pytest.raises(ConfigError, match="not a curriculum state"):
        cur.load_state_dict({"format": "something else"})
    broken = dict(before, rng="nonsense")
    with pytest.raises(ConfigError, match="malformed"):
        cur.load_state_dict(broken)
    assert cur.state_dict() == before


def test_observe_checks_every_group_before_recording_any():
    cur = _cur(ids=("a", "b"))
    before = cur.state_dict()
    with pytest.raises(ConfigError, match="outside"):
        cur.observe([Group("a", [1.0]), Group("b", [2.0])])
    with pytest.raises(TaskError, match="'ghost'"):
        cur.observe([Group("a", [1.0]), Group("ghost", [1.0])])
    assert cur.state_dict() == before


def test_summary_is_json_before_anything_is_seen():
    cur = _cur(ids=("a",))
    assert cur.summary()["mean_estimate"] is None
    json.dumps(cur.summary(), allow_nan=False)
    with pytest.raises(ConfigError, match="list of task ids"):
        cur.add_tasks("abc")


def test_quarantined_tasks_are_never_sampled_again_and_survive_a_resume():
    cur = Curriculum([f"t{i}" for i in range(6)], seed=0)
    assert cur.quarantine(["t1", "t3", "not-in-the-pool"]) == 2
    assert cur.quarantine(["t1"]) == 0
    assert cur.quarantined() == {"t1", "t3"}
    drawn = {t for _ in range(200) for t in cur.sample(3)}
    assert drawn == {"t0", "t2", "t4", "t5"}
    again = Curriculum.from_state_dict(json.loads(json.dumps(cur.state_dict())))
    assert again.quarantined() == {"t1", "t3"} and "t1" not in again.eligible()
    cur.quarantine(["t0", "t2", "t4", "t5"])
    with pytest.raises(TaskError, match="quarantined"):
        cur.sample(1)
