"""Optional dependencies are refused before any work, in one line naming the package
(issue 20: `synth --store s3://...` printed a traceback after the intake)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import ConfigError
from referee.optional import require_extra, require_fsspec_backend, require_module
from referee.tasks.artifacts import ArtifactStore


def test_a_missing_module_names_the_package_to_install():
    require_module(("no_such_module_x", "json"), needed_for="--x")  # any one of them will do
    with pytest.raises(ConfigError, match=r"--x needs the Python package pkg-x.*pip install pkg-x"):
        require_module("no_such_module_x", needed_for="--x", package="pkg-x")


def test_an_fsspec_scheme_without_its_backend_names_the_package(monkeypatch):
    from fsspec.registry import known_implementations

    monkeypatch.setitem(
        known_implementations, "nosuch", {"class": "no_such_backend.FS", "err": "no backend"}
    )
    with pytest.raises(ConfigError, match=r"--store nosuch://b needs .* no_such_backend"):
        require_fsspec_backend("nosuch://b", option="--store")
    with pytest.raises(ConfigError, match="unknown storage scheme 'bogus'"):
        require_fsspec_backend("bogus://b", option="--store")
    with pytest.raises(ConfigError):  # exit 2 wherever the store is opened, not StoreError's 1
        ArtifactStore("nosuch://b")
    require_fsspec_backend("/tmp/x", option="--store")
    require_fsspec_backend("memory://x", option="--store")


@pytest.mark.parametrize(
    "command",
    [
        ["synth", ".", "--out", "{out}", "--store", "nosuch://bucket/referee"],
        ["tasks", "generate", "recurrence", "--out", "nosuch://bucket/t.jsonl"],
        ["tasks", "list", "nosuch://bucket/t.jsonl"],
        ["eval", "--policy", "openai:http://127.0.0.1:9#m", "--tasks", "nosuch://bucket/t.jsonl"],
    ],
)
def test_a_url_without_its_backend_is_refused_before_any_work(tmp_path, monkeypatch, command):
    """An s3:// store, task file or output without s3fs (here a scheme whose backend package
    is missing, whatever this machine has installed): one line naming the package, exit 2,
    before the intake, the recording or the model starts."""
    from fsspec.registry import known_implementations

    import referee.synth.pipeline as pipeline
    import referee.verify.record as record

    def never(*args, **kwargs):  # pragma: no cover - reached only if nothing was checked first
        raise AssertionError("the work started")

    monkeypatch.setattr(pipeline, "open_repository", never)
    monkeypatch.setattr(record, "generate_recorded", never)
    monkeypatch.setitem(known_implementations, "nosuch", {"class": "no_such_s3fs.S3FileSystem"})
    out = tmp_path / "x.jsonl"
    result = CliRunner().invoke(app, [a.replace("{out}", str(out)) for a in command])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "pip install no_such_s3fs" in lines[0], result.output
    assert not out.exists()


@pytest.mark.parametrize("command", [["synth", "."], ["tasks", "generate", "recurrence"]])
def test_an_out_file_in_a_missing_folder_is_refused_before_any_work(tmp_path, command):
    out = tmp_path / "no" / "x.jsonl"
    result = CliRunner().invoke(app, [*command, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert f"the folder {out.parent} does not exist" in " ".join(result.output.split())
    assert not Path(out.parent).exists()


def test_a_missing_extra_is_named_with_its_pip_install_in_one_line():
    require_extra("ray", ["json"], needed_for="--ray")  # installed: nothing to say
    with pytest.raises(ConfigError) as caught:
        require_extra("serve", ["json", "no_such_module_x", "no_such_module_y"], needed_for="serve")
    message = str(caught.value)
    assert "\n" not in message
    assert message == (
        "serve needs referee's serve extra (no_such_module_x, no_such_module_y are not "
        "installed): run `pip install 'referee[serve]'`"
    )
    with pytest.raises(ValueError, match="unknown extra 'nope'"):
        require_extra("nope", needed_for="x")


def test_a_domain_part_registered_with_an_extra_checks_it_before_importing(monkeypatch):
    from referee import optional
    from referee.domains.registry import lazy

    call = lazy("json:dumps", extra="numeric", needed_for="the numeric domain")
    assert call([1]) == "[1]"
    monkeypatch.setattr(optional, "installed", lambda module: module != "scipy")
    with pytest.raises(ConfigError, match=r"the numeric domain needs .*scipy is not installed"):
        call([1])
