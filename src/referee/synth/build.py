"""Validated candidates become self-contained repository tasks.

A task names its repository snapshot (digest and artifact store), the source roots, the
dependency environment and the pristine test and conftest files; ``payload.overrides`` holds
the full text of the files its starting state changes. The prompt is what a developer would
get: the failing tests and their error output (bug fixing), or the signature and docstring
(implementation); never the answer. ``hidden.reference_patch`` is the fix, as a unified diff.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import re

from referee import __version__
from referee.synth.candidates import Candidate
from referee.synth.difficulty import estimate, features
from referee.synth.functions import function_nodes
from referee.synth.repo import Repository
from referee.synth.validate import Validated
from referee.tasks.model import Difficulty, Provenance, Task
from referee.tasks.split import assign_split
from referee.tasks.venv import RepoVenv

__all__ = ["RepoRef", "bugfix_task", "unified_diff"]

GENERATOR_VERSION = "1"
_ANSWER = (
    "Answer with a unified diff (as `git diff` prints it) against the repository, paths "
    "relative to its root. Do not change the tests: they are restored before grading."
)


def unified_diff(path: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    out = []
    for ln in lines:
        out.append(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n")
    return "".join(out)


class RepoRef:
    """What every task of one repository shares: snapshot, roots, environment, tests."""

    def __init__(self, repo: Repository, digest: str, store: str, env: RepoVenv):
        self.repo, self.digest, self.store, self.env = repo, digest, store, env

    def payload(self) -> dict[str, object]:
        return {
            "name": self.repo.name,
            "version": self.repo.version,
            "origin": self.repo.origin,
            "snapshot": self.digest,
            "store": self.store,
            "source_roots": list(self.repo.source_roots),
            "environment": self.env.to_json(),
            "test_files": list(self.repo.test_files),
            "conftests": list(self.repo.conftests),
        }


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:80]


def _fence(text: str, limit: int = 1800) -> str:
    text = text.strip()
    if len(text) > limit:
        text = "...\n" + text[-limit:]
    return f"```\n{text}\n```"


def bugfix_task(
    ref: RepoRef, v: Validated, *, seed: int, heldout_fraction: float, split_by: str
) -> Task:
    """A bug-fixing or implementation task from a validated candidate."""
    c: Candidate = v.candidate
    repo = ref.repo
    original = repo.text(c.path)
    broken = c.broken[c.path]
    names = [f.split("::", 1)[1] for f in c.functions]
    if c.kind == "implement":
        prompt = (
            f"The repository {repo.label} is in your workspace. The function `{names[0]}` in "
            f"`{c.path}` has no implementation yet (it raises NotImplementedError); its "
            "signature and docstring say what it must do:\n\n"
            f"```python\n{_stub_text(broken, names[0])}\n```\n\n"
            "Implement it so that these tests pass:\n"
            + "\n".join(f"- {t}" for t in v.f2p[:20])
            + (f"\n(and {len(v.f2p) - 20} more)" if len(v.f2p) > 20 else "")
            + f"\n\n{_ANSWER}"
        )
    else:
        first = next(iter(v.reports.values()), "")
        prompt = (
            f"The repository {repo.label} is in your workspace. These tests fail:\n"
            + "\n".join(f"- {t}" for t in v.f2p[:20])
            + (f"\n(and {len(v.f2p) - 20} more)" if len(v.f2p) > 20 else "")
            + (f"\n\nThe first failure:\n{_fence(first)}" if first else "")
            + "\n\nFind the bug and fix it without breaking the other tests. "
            + _ANSWER
        )
    test_sources = {
        t: repo.files[t].decode("utf-8", "replace") for t in repo.test_files if t in repo.files
    }
    feats = features(
        original,
        broken,
        function_names=names,
        f2p=v.f2p,
        test_sources=test_sources,
        complexity=int(c.extra.get("complexity", 1)),  # type: ignore[call-overload]
        bugs=max(1, len(c.parts)),
        kind=c.kind,
    )
    unit_path = c.path if split_by == "module" else f"{c.path}::{names[0]}"
    unit = f"{repo.name}:{unit_path}"
    kind = "bugfix" if c.kind == "bugfix" else "implement"
    name = f"synth/{slug(repo.name)}/{kind}-{slug(c.id.replace('::', '.'))[:60]}"
    return Task.create(
        name=f"{name}-{short_hash(c.id)}-v{GENERATOR_VERSION}",
        prompt=prompt,
        kind="repo-patch",  # TaskKind.REPO_PATCH
        answer_format="patch",
        payload={"repo": ref.payload(), "overrides": {c.path: broken}, "kind": kind},
        hidden={
            "fail_to_pass": v.f2p,
            "pass_to_pass": v.p2p,
            "reference_patch": unified_diff(c.path, broken, original),
            "operators": list(c.operators),
            "functions": list(c.functions),
            "description": c.description,
        },
        difficulty=Difficulty(estimate=estimate(feats), features=feats),
        split=assign_split(unit, heldout_fraction),
        provenance=Provenance(
            source=repo.origin,
            generator=f"referee.synth.{kind}@{GENERATOR_VERSION}",
            seed=seed,
            versions={"referee": __version__, repo.name: repo.version},
            unit=unit,
        ),
    )


def _stub_text(source: str, qual: str) -> str:
    """The stubbed function as it stands in the starting state (signature, docstring, raise)."""
    node = function_nodes(source).get(qual)
    segment = ast.get_source_segment(source, node, padded=True) if node else None
    return segment.rstrip() if segment else qual


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]
