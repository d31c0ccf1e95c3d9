"""The curriculum's sampler keeps TRL's index layout: one group is one task, repeated in a row."""

import pytest

pytest.importorskip("trl")

from referee.tasks.compact import compact_prompt
from referee.train.grpo import GroupSampler


def test_layout_matches_trls_repeat_sampler():
    batches = iter([[4, 1], [0, 3]])
    sampler = GroupSampler(
        lambda n: next(batches), mini_repeat_count=2, batch_size=2, repeat_count=2, batches=2
    )
    assert list(sampler) == [4, 4, 1, 1, 4, 4, 1, 1, 0, 0, 3, 3, 0, 0, 3, 3]
    assert len(sampler) == 16


def test_each_batch_is_chosen_when_it_is_reached():
    # The curriculum must see the outcomes of earlier steps: choose is called lazily.
    calls = []

    def choose(n):
        calls.append(n)
        return list(range(n))

    it = iter(GroupSampler(choose, mini_repeat_count=2, batch_size=3, repeat_count=1, batches=5))
    for _ in range(6):
        next(it)
    assert calls == [3]
    next(it)
    assert calls == [3, 3]


def test_compact_prompt_keeps_the_description_only():
    code = 'def solve(xs: list[int]):\n    """Given a list of integers xs, negate each number;\n    then return their sum."""\n'
    assert compact_prompt(code) == "negate each number; then return their sum.\n"
