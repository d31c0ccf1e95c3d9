"""issue 20: `referee train` flooded stdout with TRL's raw dict logs. They go to the stage's
folder as JSON lines; stdout stays clean."""

import json

import pytest

pytest.importorskip("trl")


def test_fine_tuning_prints_nothing_on_stdout_and_keeps_its_logs(tmp_path, capfd):
    from referee.experiments.listops import SFTConfig, TinyConfig
    from referee.experiments.listops.sft import fine_tune
    from referee.experiments.listops.tiny import tiny_model, train_tokenizer
    from referee.experiments.listops.trainer_log import TRAINER_LOG

    rows = [{"prompt": f"add {i} {i}:", "completion": f" {2 * i}"} for i in range(16)]
    tokenizer = train_tokenizer([r["prompt"] + r["completion"] for r in rows])
    model = tiny_model(tokenizer, TinyConfig(hidden=32, layers=1, heads=2, ffn=64))
    capfd.readouterr()
    fine_tune(model, tokenizer, rows, SFTConfig(batch=4), tmp_path / "sft", steps=2)
    assert "{" not in capfd.readouterr().out  # no raw dicts on stdout
    lines = [json.loads(x) for x in (tmp_path / "sft" / TRAINER_LOG).read_text().splitlines()]
    assert lines and lines[-1]["stage"] == "fine-tuning" and "train_runtime" in lines[-1]
