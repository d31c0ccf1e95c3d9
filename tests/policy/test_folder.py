"""issue 20: a model folder is told from anything else without loading it or going online
(`referee eval --policy local:PATH`, `referee train --model` and `--sft-checkpoint`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from referee.errors import ConfigError
from referee.policy import policy_from_spec
from referee.policy.folder import ModelSource, locate_model, model_folder_problem


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


# ---- issue 14: GGUF models (a .gguf file, a folder holding one, pkg:MODULE) -------------------


def gguf_folder(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_bytes(b"GGUF")
    return folder


def test_a_gguf_file_is_its_folder_and_its_name(tmp_path: Path) -> None:
    folder = gguf_folder(tmp_path / "m", "Small.Q4_1.gguf")
    source = locate_model(folder / "Small.Q4_1.gguf")
    assert source == ModelSource(folder, "Small.Q4_1.gguf")
    assert source.label == str(folder / "Small.Q4_1.gguf")


def test_a_folder_with_one_gguf_and_no_config_is_that_gguf(tmp_path: Path) -> None:
    folder = gguf_folder(tmp_path / "m", "a.gguf")
    (folder / "README.md").write_text("x")
    assert locate_model(folder) == ModelSource(folder, "a.gguf")


def test_several_ggufs_name_the_choice(tmp_path: Path) -> None:
    folder = gguf_folder(tmp_path / "m", "a.gguf", "b.gguf")
    problem = locate_model(folder)
    assert isinstance(problem, str)
    assert "2 .gguf files (a.gguf, b.gguf)" in problem and str(folder / "a.gguf") in problem


def test_a_model_folder_wins_over_a_stray_gguf(tmp_path: Path) -> None:
    folder = fake_model(tmp_path / "m")
    (folder / "extra.gguf").write_bytes(b"GGUF")
    assert locate_model(folder) == ModelSource(folder, None)


def test_what_is_neither_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    assert locate_model(tmp_path / "notes.txt") == (
        f"{tmp_path / 'notes.txt'} is a file, not a model folder or a .gguf file"
    )
    assert "no config.json" in str(locate_model(gguf_folder(tmp_path / "empty")))
    assert locate_model(tmp_path / "nothing") == f"{tmp_path / 'nothing'} does not exist"


def test_pkg_finds_the_gguf_a_package_ships_without_importing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = gguf_folder(tmp_path / "site" / "fake_model_pkg", "Tiny.gguf")
    # Importing the package would fail: locate_model must only find it.
    (pkg / "__init__.py").write_text("raise ImportError('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert locate_model("pkg:fake_model_pkg") == ModelSource(pkg, "Tiny.gguf")


def test_pkg_problems_are_one_line(tmp_path: Path) -> None:
    assert locate_model("pkg:no_such_model_pkg") == (
        "pkg:no_such_model_pkg: no installed package provides no_such_model_pkg"
    )
    assert "top-level package" in str(locate_model("pkg:a.b"))


def test_a_gguf_spec_loads_with_gguf_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.policy import local

    made: list[tuple[Any, ...]] = []

    class Recorder:
        def __init__(self, path: str, **kw: Any) -> None:
            made.append((path, kw))

    monkeypatch.setattr(local, "TransformersPolicy", Recorder)
    folder = gguf_folder(tmp_path / "m", "a.gguf")
    policy_from_spec(f"local:{folder / 'a.gguf'}#cpu")
    policy_from_spec(f"local:{folder}", device="auto")
    assert made == [
        (str(folder), {"device": "cpu", "gguf_file": "a.gguf", "name": f"local:{folder}/a.gguf"}),
        (str(folder), {"device": "auto", "gguf_file": "a.gguf", "name": f"local:{folder}/a.gguf"}),
    ]


def test_a_gguf_without_the_gguf_package_names_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from referee import optional
    from referee.policy.local import TransformersPolicy

    real = optional.installed
    monkeypatch.setattr(optional, "installed", lambda m: m != "gguf" and real(m))
    folder = gguf_folder(tmp_path / "m", "a.gguf")
    with pytest.raises(ConfigError, match=r"pip install 'referee\[gguf\]'"):
        TransformersPolicy(str(folder), gguf_file="a.gguf", device="cpu")
