"""issue 20: a model folder is told from anything else without loading it or going online
(`referee eval --policy local:PATH`, `referee train --model` and `--sft-checkpoint`)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from referee.errors import ConfigError
from referee.policy import policy_from_spec
from referee.policy.folder import model_folder_problem


def fake_model(folder: Path) -> Path:
    """The files save_pretrained writes (contents not loaded by the check)."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (folder / "model.safetensors").write_bytes(b"")
    (folder / "tokenizer.json").write_text("{}")
    return folder


def fake_run(folder: Path) -> Path:
    """A run folder: the experiment's config.json beside model-sft and model-rl."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"seed": 0, "run_dir": str(folder)}))
    fake_model(folder / "model-sft")
    fake_model(folder / "model-rl")
    return folder


def test_a_model_folder_passes(tmp_path: Path) -> None:
    assert model_folder_problem(fake_model(tmp_path / "m")) is None


def test_a_run_folder_is_refused_naming_its_model_folders(tmp_path: Path) -> None:
    run = fake_run(tmp_path / "run")
    problem = model_folder_problem(run) or ""
    assert "config.json is not a model's" in problem
    assert f"pass {run / 'model-rl'} or {run / 'model-sft'}" in problem


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: None, "does not exist"),
        (lambda p: p.write_text("x"), "is a file"),
        (lambda p: p.mkdir(), "no config.json"),
    ],
)
def test_what_is_not_a_model_folder_says_why(tmp_path: Path, make, says: str) -> None:
    path = tmp_path / "x"
    make(path)
    assert says in (model_folder_problem(path) or "")


def test_a_model_without_weights_or_tokenizer_says_which(tmp_path: Path) -> None:
    m = fake_model(tmp_path / "m")
    (m / "tokenizer.json").unlink()
    assert "no tokenizer" in (model_folder_problem(m) or "")
    (m / "model.safetensors").unlink()
    assert "no weights" in (model_folder_problem(m) or "")


def test_local_spec_of_a_missing_path_is_refused_at_once_without_the_hub(tmp_path: Path) -> None:
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match="nope does not exist; accepted forms"):
        policy_from_spec("local:nope")
    with pytest.raises(ConfigError, match=r"pass .*model-"):
        policy_from_spec(f"local:{fake_run(tmp_path / 'run')}")
    assert time.perf_counter() - t0 < 2  # no hub retries
