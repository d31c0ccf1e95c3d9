import sys

from referee.tasks.venv import RepoVenv


def test_empty_environment_is_made_once_and_keyed_by_requirements(tmp_path):
    env = RepoVenv((), cache=tmp_path)
    site = env.ensure()
    assert site.is_dir() and site == env.site_packages
    assert f"python{sys.version_info.major}.{sys.version_info.minor}" in str(site)
    assert (env.root / ".referee-ready").exists()
    assert env.ensure() == site  # cached: no second venv
    assert RepoVenv(("attrs",), cache=tmp_path).key != env.key
    assert RepoVenv(("b", "a")).key == RepoVenv(("a", "b")).key
    assert env.to_json()["requirements"] == []
