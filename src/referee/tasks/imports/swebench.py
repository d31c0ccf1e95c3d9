"""SWE-bench instances as repository tasks, from a local checkout of their repository.

A row: ``instance_id``, ``repo`` (``owner/name``), ``base_commit``, ``patch`` (the gold fix),
``test_patch`` (the tests that judge it), ``problem_statement``, ``FAIL_TO_PASS`` and
``PASS_TO_PASS`` (JSON texts of lists of test ids; lists are taken too), ``version``,
``environment_setup_commit``. SWE-bench ships no code: the repository comes from a local git
checkout, the ``repo_dir`` option (``--repo-dir``) or a ``repo_dir`` field of the row: either
the checkout itself or a folder holding one per repository, named ``owner__name`` (as
SWE-bench's harness names them) or ``name``. It must contain every ``base_commit``.

Each instance becomes a ``repo-patch`` task judged by the pytest verifier
(:mod:`referee.verify.pytest_verifier`): ``payload.repo`` names a snapshot of the tree at
``base_commit`` in the artifact store (the ``store`` option, else the default store), which is
what the model's workspace starts from; ``hidden.test_patch`` holds the tests, applied by the
verifier after the candidate's patch, so the model never sees them; ``hidden.fail_to_pass`` and
``pass_to_pass`` the test ids; ``hidden.reference_patch`` the gold patch. Ids are
``swebench/<instance_id>``.

Limits: tests must be pytest node ids (``path::name``); instances of repositories whose ids are
not (Django's ``test (module.Class)``, SymPy's bare names) are refused, naming the row. No Docker
image: the tests run in referee's sandbox with the grader's pytest and the packages of the row's
``requirements`` field (a list of PEP 508 strings; none by default), so repositories needing a
compiled build or services will fail their PASS_TO_PASS tests.
"""

from __future__ import annotations

import fnmatch
import io
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.errors import ConfigError, StoreError
from referee.tasks.artifacts import ArtifactStore
from referee.tasks.imports.rows import OnBadRow, Row, iter_rows, skipping
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Provenance, Task
from referee.tasks.venv import RepoVenv

__all__ = ["patch_paths", "swebench_tasks"]

_TEST_PATTERNS = ("test_*.py", "*_test.py", "tests.py")
_MAX_FILE = 1 << 20  # files over 1 MiB (data, binaries) are left out of the snapshot
_ANSWER = (
    "Answer with a unified diff (as `git diff` prints it) against the repository, paths "
    "relative to its root. Do not change the tests: they are restored before grading."
)


def patch_paths(patch: str) -> list[str]:
    """The paths a unified diff changes, from its ``diff --git`` (or ``+++``) lines."""
    out: list[str] = []
    for line in patch.splitlines():
        path = None
        if line.startswith("diff --git a/"):
            path = line.split(" b/", 1)[-1]
        elif line.startswith("+++ b/"):
            path = line[6:]
        if path and path not in out:
            out.append(path.strip())
    return out


def swebench_tasks(
    split: str,
    path: str | Path,
    repo_dir: str | None = None,
    store: str | None = None,
    on_bad_row: OnBadRow | None = None,
) -> Iterator[Task]:
    """The instances of a SWE-bench file (JSONL, JSON or Parquet) as repo-patch tasks."""
    artifacts = ArtifactStore.at(store)
    snapshots: dict[tuple[str, str], tuple[str, dict[str, bytes]]] = {}
    for row in iter_rows(path, on_bad_row):
        with skipping(on_bad_row):
            yield _task(row, split, repo_dir, artifacts, snapshots)


def _git(checkout: Path, *args: str) -> bytes:
    p = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, check=False)
    if p.returncode != 0:
        raise OSError(p.stderr.decode("utf-8", "replace").strip()[-300:])
    return p.stdout


def _checkout(row: Row, option: str | None, repo: str) -> Path:
    given = row.data.get("repo_dir") or option
    if not given:
        raise row.error(
            "repo_dir",
            f"no checkout of {repo}: give --repo-dir DIR (a git clone of "
            f"https://github.com/{repo}) or a repo_dir field",
        )
    base = Path(str(given)).expanduser()
    owner_name = repo.replace("/", "__")
    for candidate in (base, base / owner_name, base / repo.rsplit("/", 1)[-1]):
        if (candidate / ".git").exists():
            return candidate
    raise ConfigError(
        f"{row.where}: {str(base)!r} is not a git checkout of {repo}, nor holds one named "
        f"{owner_name} or {repo.rsplit('/', 1)[-1]} (git clone https://github.com/{repo})"
    )


def _tree(row: Row, checkout: Path, commit: str) -> dict[str, bytes]:
    try:
        _git(checkout, "cat-file", "-e", f"{commit}^{{commit}}")
    except OSError:
        raise row.error(
            "base_commit",
            f"{commit} is not in the checkout {str(checkout)!r} (git fetch it there)",
        ) from None
    try:
        data = _git(checkout, "archive", "--format=tar", commit)
    except OSError as e:
        raise row.error("base_commit", f"git archive {commit} failed: {e}") from None
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar:
            if member.isfile() and member.size <= _MAX_FILE:
                f = tar.extractfile(member)
                if f is not None:
                    files[member.name] = f.read()
    return files


def _tests(row: Row, field: str) -> list[str]:
    value: Any = row.json(field, default=[])
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise row.error(field, "expected a JSON list of test ids")
    for t in value:
        if "::" not in t:
            raise row.error(
                field,
                f"{t!r} is not a pytest node id (path::name); the pytest verifier runs only "
                "repositories tested with pytest (leave this instance out)",
            )
    return list(value)


def _source_roots(files: dict[str, bytes]) -> list[str]:
    src = any(f.startswith("src/") and f.endswith("/__init__.py") for f in files)
    return ["src"] if src else [""]


def _is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(name, p) for p in _TEST_PATTERNS)


def _task(
    row: Row,
    split: str,
    repo_dir: str | None,
    store: ArtifactStore,
    snapshots: dict[tuple[str, str], tuple[str, dict[str, bytes]]],
) -> Task:
    instance = row.get("instance_id", str)
    repo = row.get("repo", str)
    commit = row.get("base_commit", str)
    patch = row.get("patch", str)
    test_patch = row.get("test_patch", str)
    statement = row.get("problem_statement", str)
    f2p, p2p = _tests(row, "FAIL_TO_PASS"), _tests(row, "PASS_TO_PASS")
    if not f2p:
        raise row.error("FAIL_TO_PASS", "no tests: the instance could never fail")
    if not patch_paths(test_patch):
        raise row.error("test_patch", "not a unified diff (no file in it)")
    requirements = row.data.get("requirements") or []
    if not isinstance(requirements, list) or not all(isinstance(r, str) for r in requirements):
        raise row.error("requirements", "expected a list of PEP 508 strings")
    checkout = _checkout(row, repo_dir, repo)
    key = (str(checkout), commit)
    if key not in snapshots:
        files = _tree(row, checkout, commit)
        try:
            digest = store.put_files(files)
        except StoreError as e:
            raise StoreError(f"{row.where}: cannot store the snapshot of {commit}: {e}") from e
        snapshots.clear()  # rows of one commit are usually together: keep one tree in memory
        snapshots[key] = (digest, files)
    digest, files = snapshots[key]
    touched = patch_paths(test_patch)
    test_files = sorted({f for f in files if _is_test(f)} | {p for p in touched if p in files})
    conftests = sorted(f for f in files if f.rsplit("/", 1)[-1] == "conftest.py")
    version = str(row.data.get("version") or "")
    prompt = (
        f"The repository {repo} (at commit {commit[:12]}) is in your workspace. Resolve this "
        f"issue:\n\n{statement.strip()}\n\n{_ANSWER}"
    )
    return Task.create(
        name=f"swebench/{instance}",
        prompt=prompt,
        domain="code",
        kind=TaskKind.REPO_PATCH,
        answer_format="patch",
        split=split,
        payload={
            "repo": {
                "name": repo,
                "version": version,
                "origin": f"https://github.com/{repo}@{commit}",
                "snapshot": digest,
                "store": store.url,
                "source_roots": _source_roots(files),
                "environment": RepoVenv(tuple(requirements)).to_json(),
                "test_files": test_files,
                "conftests": conftests,
            },
            "overrides": {},
            "kind": "swebench",
            "instance_id": instance,
            "base_commit": commit,
        },
        hidden={
            "fail_to_pass": f2p,
            "pass_to_pass": p2p,
            "test_patch": test_patch,
            "reference_patch": patch,
            "environment_setup_commit": row.data.get("environment_setup_commit"),
        },
        provenance=Provenance(
            source="swebench",
            generator="referee.tasks.imports.swebench",
            versions={repo: version} if version else {},
            unit=f"{repo}:{(patch_paths(patch) or [instance])[0]}",  # the module it fixes
        ),
    )
