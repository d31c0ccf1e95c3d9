"""reasoning-gym's generators as referee families: ``rg-NAME`` makes NAME's tasks.

Task ``i`` is reasoning-gym's entry 0 of dataset NAME built with seed ``seed + i`` and the
configuration its curriculum gives at referee's ``difficulty``: every attribute of the
dataset's curriculum (its difficulty knobs: how many terms, how large the numbers, the board
size...) is set to level ``round(difficulty * (levels - 1))``, so 0 is its easiest level and 1
its hardest; a dataset without a curriculum keeps its default configuration. The levels and
the configuration are kept with the task (``difficulty.features``, ``payload["config"]``), so
the task can be made again from them.

The prompt is reasoning-gym's default system prompt (answer in ``<answer>`` tags) and the
question; ``hidden`` holds the gold answer, the judge mode (:mod:`.catalog`) and what that mode
reads (valid boards, tolerances), plus ``reference``: the gold answer in its tags.

>>> from referee.domains import generate_family                          # doctest: +SKIP
>>> task = generate_family("rg-chain_sum", count=1, difficulty=0.5, seed=3)[0]  # doctest: +SKIP
>>> task.id, task.hidden["judge"]                                        # doctest: +SKIP
('rg/chain_sum-d50-s3-v1', 'decimal-commas')
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from referee.domains.reasoning.catalog import DATASETS, EXCLUDED
from referee.errors import ConfigError
from referee.optional import require_extra
from referee.tasks.model import Difficulty, Message, Provenance, Task

__all__ = ["KIND", "LEVEL_CAPS", "VERSION", "generate", "generate_family", "make_task", "rg_config"]

VERSION = "1"
#: The task kind of every reasoning task (registered by the domain).
KIND = "reasoning"

# reasoning-gym's "default" system prompt (reasoning_gym.utils.SYSTEM_PROMPTS), copied so that
# a task file reads the same whichever release made it.
SYSTEM_PROMPT = (
    "Given a problem, your task is to answer the question by thinking step-by-step in a clear "
    "and specific manner.\nOnce you have thought about the reasoning process, provide the answer "
    "in the following format:\n<answer>answer here</answer>\nDo not explain your reasoning "
    "inside the answer tags, provide only the final answer. When an example is provided, you "
    "should strictly follow the format of the output/answer in that example.\n"
)


#: Curriculum levels a dataset's own validation refuses, capped: caesar_cipher's rotation at
#: level 2 and above asks for rotations up to 50, which its config allows only up to 25.
LEVEL_CAPS: dict[str, dict[str, int]] = {"caesar_cipher": {"rotation": 1}}


def rg_config(dataset: str, difficulty: float, seed: int) -> tuple[Any, dict[str, float]]:
    """reasoning-gym's configuration of ``dataset`` at referee's ``difficulty`` (0..1) with
    ``seed`` and size 1, and the curriculum level of each knob it set."""
    require_extra("reasoning", needed_for="reasoning-gym's families")
    import reasoning_gym
    from reasoning_gym.factory import DATASETS as RG_DATASETS

    if not reasoning_gym.factory.has_curriculum(dataset):
        _, config_cls = RG_DATASETS[dataset]
        return config_cls(seed=seed, size=1), {}
    curriculum = reasoning_gym.factory.create_curriculum(dataset)
    levels: dict[str, float] = {}
    for name, attr in curriculum.attributes.items():
        level = round(difficulty * (len(attr.levels) - 1))
        level = min(level, LEVEL_CAPS.get(dataset, {}).get(name, level))
        curriculum.set_attr_level(name, level)
        levels[f"level_{name}"] = level
    return curriculum.generate_configuration({"seed": seed, "size": 1}), levels


def _extras(dataset: str, entry: dict[str, Any], config: Any) -> dict[str, Any]:
    """What the dataset's judge mode reads beside the gold answer."""
    meta = entry["metadata"]
    if dataset == "decimal_arithmetic":
        return {"tolerance": f"1e-{config.max_num_decimal_places}"}
    if dataset == "number_format":
        return {"value": meta["solution"], "tolerance": 1e-2}
    if dataset == "coin_flip":
        return {"tolerance": 1e-4}
    if dataset == "n_queens":
        return {"accepted": list(meta["valid_answers"])}
    if dataset in ("group_anagrams", "palindrome_partitioning"):
        return {"solution": meta["solution"]}
    if dataset == "palindrome_generation":
        return {"letters": list(meta["letters"])}
    if dataset == "word_sorting":
        return {"words": list(meta["sorted_words"])}
    if dataset == "fraction_simplification":
        return {"fraction": [meta["simplified_numerator"], meta["simplified_denominator"]]}
    return {}


def _plain(value: Any) -> Any:
    """``value`` as JSON data (tuples become lists; what JSON cannot hold becomes text)."""
    return json.loads(json.dumps(value, default=str))


def make_task(dataset: str, entry: dict[str, Any], *, difficulty: float, seed: int,
              config: Any, levels: dict[str, float]) -> Task:  # fmt: skip
    """The referee task of reasoning-gym's ``entry`` of ``dataset`` (made with ``config``)."""
    answer = entry["answer"]
    if not isinstance(answer, str):
        answer = str(answer)
    config_data = {k: v for k, v in _plain(vars(config)).items() if k not in ("seed", "size")}
    return Task.create(
        name=f"rg/{dataset}-d{round(difficulty * 100)}-s{seed}-v{VERSION}",
        prompt=(
            Message(role="system", content=SYSTEM_PROMPT),
            Message(role="user", content=str(entry["question"])),
        ),
        domain="reasoning",
        kind=KIND,
        answer_format="text",
        payload={"dataset": dataset, "config": config_data},
        hidden={
            "answer": answer,
            "judge": DATASETS[dataset],
            **_plain(_extras(dataset, entry, config)),
            "metadata": _plain(entry["metadata"]),
            "reference": f"<answer>{answer}</answer>",
        },
        difficulty=Difficulty(estimate=difficulty, features=levels),
        split="train",
        provenance=Provenance(
            source="reasoning-gym",
            generator=f"reasoning_gym/{dataset}",
            seed=seed,
            versions={"family": VERSION, "reasoning-gym": _rg_version()},
            unit=f"rg:{dataset}",
        ),
    )


def _rg_version() -> str:
    from importlib.metadata import version

    return version("reasoning-gym")


def generate(dataset: str) -> Callable[[int, float | None, int], list[Task]]:
    """The family generator of ``dataset``: ``(count, difficulty, seed) -> tasks``; difficulty
    None spreads the tasks over 0, 0.1, ..., 1."""
    if dataset not in DATASETS:
        why = EXCLUDED.get(dataset, "reasoning-gym has no such dataset")
        raise ConfigError(f"reasoning-gym dataset {dataset!r} is not offered: {why}")

    def run(count: int, difficulty: float | None, seed: int) -> list[Task]:
        import reasoning_gym

        tasks = []
        for i in range(count):
            d = difficulty if difficulty is not None else round((i % 11) / 10, 2)
            config, levels = rg_config(dataset, d, seed + i)
            dataset_cls, _ = reasoning_gym.factory.DATASETS[dataset]
            entry = dataset_cls(config=config)[0]
            tasks.append(
                make_task(dataset, entry, difficulty=d, seed=seed + i, config=config, levels=levels)
            )
        return tasks

    return run


def generate_family(name: str, count: int, difficulty: float | None, seed: int) -> list[Task]:
    """``count`` tasks of the family ``name`` (``rg-DATASET``), as the domain kit calls a
    generator that serves several families."""
    return generate(name.removeprefix("rg-"))(count, difficulty, seed)
