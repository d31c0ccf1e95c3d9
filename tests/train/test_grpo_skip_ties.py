"""Groups whose rewards all tie are left out of GRPO's loss without changing the update: one
step with and without the skip ends at the same weights, and the skipped rows are counted."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("trl")

import torch


def _one_step(
    tmp: Path, *, skip: bool, loss_type: str = "dapo"
) -> tuple[dict[str, torch.Tensor], int]:
    from datasets import Dataset
    from trl.trainer.grpo_config import GRPOConfig

    from referee.train.grpo import CurriculumGRPOTrainer
    from tests.policy import tiny_lm

    tok = tiny_lm.tokenizer()
    model = tiny_lm.model(tok, seed=0)
    prompts = ["add 2 and 3", "the quick brown fox", "def add(a, b):", "hello world"]

    def reward(prompts: list[str], completions: list[str], **_: object) -> list[float]:
        # two groups tie (all 1.0, all 0.0); two have differing rewards
        out = []
        for i, p in enumerate(prompts):
            if p.startswith("add"):
                out.append(1.0)
            elif p.startswith("the"):
                out.append(0.0)
            else:
                out.append(float(i % 2))
        return out

    args = GRPOConfig(
        output_dir=str(tmp / ("skip" if skip else "full")), max_steps=1,
        per_device_train_batch_size=8, num_generations=2, max_completion_length=6,
        learning_rate=1e-2, beta=0.0, loss_type=loss_type, logging_steps=1, save_strategy="no", report_to="none",
        use_cpu=True, seed=0, dataloader_num_workers=0, disable_tqdm=True,
    )  # fmt: skip
    trainer = CurriculumGRPOTrainer(
        model=model, reward_funcs=[reward], args=args,
        train_dataset=Dataset.from_dict({"prompt": prompts}), processing_class=tok,
        choose=lambda n: list(range(n)), skip_tied_groups=skip,
    )  # fmt: skip
    trainer.train()
    assert trainer.rows_generated == 8
    weights = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return weights, trainer.rows_skipped


def test_skipping_tied_groups_leaves_the_update_unchanged(tmp_path: Path) -> None:
    full, skipped_none = _one_step(tmp_path, skip=False)
    fast, skipped = _one_step(tmp_path, skip=True)
    assert skipped_none == 0 and skipped == 4  # the two tied groups of two
    start = _one_step_start()
    moved = [k for k in full if not torch.equal(full[k], start[k])]
    assert moved, "the step changed no weight: the comparison would be empty"
    for key in full:
        torch.testing.assert_close(fast[key], full[key], rtol=1e-5, atol=1e-6, msg=key)


def test_where_the_loss_averages_over_its_rows_nothing_is_skipped(tmp_path: Path) -> None:
    # TRL's "grpo" loss divides by the number of rows: removing rows would change the update
    _, skipped = _one_step(tmp_path, skip=True, loss_type="grpo")
    assert skipped == 0


def _one_step_start() -> dict[str, torch.Tensor]:
    from tests.policy import tiny_lm

    return {
        k: v.clone() for k, v in tiny_lm.model(tiny_lm.tokenizer(), seed=0).state_dict().items()
    }
