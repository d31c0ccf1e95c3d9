"""GRPO through TRL's ``GRPOTrainer``, with referee's verifier as the reward and its curriculum
choosing the tasks.

TRL draws prompts with its own ``RepeatSampler`` (each prompt repeated ``num_generations``
times, consecutive, so one group is one task). :class:`CurriculumGRPOTrainer` replaces that
sampler with one that asks referee's curriculum for each generation batch, so the tasks of a
step follow the pass rates measured on the steps before. The reward function verifies every
completion in the sandbox (:func:`referee.train.trl_adapter.reward_function`) and feeds the
group outcomes back to the curriculum.

The sampler is consumed lazily: the data loader fetches one generation batch ahead (accelerate
looks one batch ahead to detect the end), so the curriculum acts on outcomes that are at most
one step old.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from torch.utils.data import Sampler
from trl.trainer.grpo_trainer import GRPOTrainer

__all__ = ["ChooseTasks", "CurriculumGRPOTrainer", "GroupSampler"]

#: Returns the dataset indices of the next ``n`` tasks to train on.
ChooseTasks = Callable[[int], Sequence[int]]


class GroupSampler(Sampler[int]):
    """Yields TRL's index layout, with the tasks of each generation batch chosen by ``choose``.

    Layout (as TRL's ``RepeatSampler``): for each generation batch of ``batch_size`` tasks, each
    index repeated ``mini_repeat_count`` times (one group), the whole batch ``repeat_count``
    times (reused for ``num_iterations * steps_per_generation`` optimisation steps).
    """

    def __init__(
        self,
        choose: ChooseTasks,
        *,
        mini_repeat_count: int,
        batch_size: int,
        repeat_count: int,
        batches: int,
    ) -> None:
        self.choose = choose
        self.mini_repeat_count = mini_repeat_count
        self.batch_size = batch_size
        self.repeat_count = repeat_count
        self.batches = batches

    def __iter__(self) -> Iterator[int]:
        for _ in range(self.batches):
            chosen = list(self.choose(self.batch_size))
            for _ in range(self.repeat_count):
                for index in chosen:
                    for _ in range(self.mini_repeat_count):
                        yield index

    def __len__(self) -> int:
        return self.batches * self.batch_size * self.mini_repeat_count * self.repeat_count


class CurriculumGRPOTrainer(GRPOTrainer):
    """``GRPOTrainer`` whose prompts come from ``choose`` (a curriculum, or uniform)."""

    def __init__(self, *args: Any, choose: ChooseTasks, **kwargs: Any) -> None:
        self._choose = choose
        super().__init__(*args, **kwargs)

    def _get_train_sampler(self, dataset: Any = None) -> Sampler[int]:
        args: Any = self.args  # a GRPOConfig
        per_batch = args.generation_batch_size // self.num_generations
        # Enough batches for max_steps; the trainer stops at max_steps whatever the length.
        batches = max(1, -(-args.max_steps // args.steps_per_generation) + 1)
        return GroupSampler(
            self._choose,
            mini_repeat_count=int(self.num_generations or 1),
            batch_size=per_batch,
            repeat_count=self.num_iterations * args.steps_per_generation,
            batches=batches,
        )
