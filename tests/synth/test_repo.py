from pathlib import Path

import pytest

from referee.errors import ConfigError
from referee.synth.repo import open_repository

MINIREPO = Path(__file__).resolve().parents[1] / "fixtures" / "minirepo"


def test_reads_a_local_checkout():
    repo = open_repository(str(MINIREPO))
    assert (repo.name, repo.version) == ("minilib", "0.3.0")
    assert repo.source_roots == ("",) and repo.packages == ("minilib",)
    assert repo.test_files == ("tests/test_stats.py", "tests/test_textutil.py")
    assert repo.conftests == ("tests/conftest.py",)
    assert repo.python_files == ["minilib/__init__.py", "minilib/stats.py", "minilib/textutil.py"]
    assert repo.requirements == ()  # pytest is the grader's own


def test_src_layout_requirements_and_skipped_folders(tmp_path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_pkg.py").write_text("def test_x():\n    pass\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("x")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\nversion = "1.0"\ndependencies = ["attrs>=22"]\n'
        '[project.optional-dependencies]\ntest = ["pytest", "pytest-xdist", "hypothesis==6.1",'
        ' "never; python_version < \'3.0\'"]\ndocs = ["sphinx"]\n'
    )
    repo = open_repository(str(tmp_path))
    assert repo.source_roots == ("src",) and repo.packages == ("pkg",)
    assert repo.requirements == ("attrs>=22", "hypothesis==6.1")
    assert not any(f.startswith(".git/") for f in repo.files)


def test_bad_sources_say_what_to_do(tmp_path):
    with pytest.raises(ConfigError, match="neither a folder nor pypi"):
        open_repository(str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="pin the version"):
        open_repository("pypi:toolz")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    with pytest.raises(ConfigError, match="no test files"):
        open_repository(str(tmp_path))
