"""Refactoring tasks: an inverse refactoring applied to real code; the model refactors it back.

Three inverse refactorings, each on one module, each undoing a structure the authors chose:

* ``inline-helper``: a helper called from two or more places is inlined at each call site (its
  body substituted, arguments bound) and its definition removed. The task: extract the
  repeated logic into a helper of that name, called from each place.
* ``merge-helper``: a helper called from exactly one function is merged into it and removed.
  The task: split it back out under its name.
* ``duplicate-block``: a helper's body is copied into one of its callers in place of the call
  (the helper stays). The task: remove the duplication.

Inlining is done only where it is safe by construction (:mod:`referee.synth.inline`), and a
helper is removed only where nothing else names it (no other file of the repository, no string
of its module, no use but the calls inlined). The original code is the reference; the task's
``hidden["structure"]`` is the predicate (:mod:`referee.verify.structure`) that the reference
meets and the starting state does not; its tests are the stable tests covering the touched
functions, all passing before and after (:func:`referee.synth.validate.validate` checks both,
and that a test runs every function the inverse refactoring changed).
"""

from __future__ import annotations

import ast

from referee import __version__
from referee.synth.baseline import Baseline
from referee.synth.build import GENERATOR_VERSION, RepoRef, short_hash, slug, unified_diff
from referee.synth.candidates import Candidate
from referee.synth.functions import function_nodes
from referee.synth.inline import (
    Edit,
    Helper,
    ParsedModule,
    Site,
    apply_edits,
    call_sites,
    helper_of,
    inline_at,
    removal_span,
)
from referee.synth.repo import Repository
from referee.synth.validate import Validated
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Difficulty, Provenance, Task
from referee.tasks.split import assign_split
from referee.verify.structure import check_structure, complexity, fingerprint, size

__all__ = ["OPERATORS", "refactor_candidates", "refactor_task"]

OPERATORS = ("inline-helper", "merge-helper", "duplicate-block")
MIN_BLOCK = 3  # statements of a duplicated block (the window of the no-clone rule)
_ANSWER = (
    "Behaviour must not change: the repository's tests must keep passing. Answer with a "
    "unified diff (as `git diff` prints it) against the repository, paths relative to its "
    "root. Do not change the tests: they are restored before grading."
)


def _rules_for(
    m: ParsedModule, grown: dict[str, int], fragments: list[dict[str, str]]
) -> list[dict[str, object]]:
    """no-clone rules for ``fragments`` in the callers, and each function of ``grown`` (name ->
    syntax nodes the inverse refactoring added to it) bounded by its original self."""
    rules: list[dict[str, object]] = []
    seen = set()
    for f in fragments:
        if f["dump"] in seen:
            continue
        seen.add(f["dump"])
        rules.append(
            {
                "rule": "no-clone",
                "fragment": f,
                "within": sorted(grown),
                "allowed": 0,
                "label": "the inlined code",
            }
        )
    for name, added in sorted(grown.items()):
        node = m.functions[name]
        n = size(node)
        # Room for a reworded line (a keyword argument, a temporary), never for half a copy of
        # what was inlined: a changed copy left beside the new call would escape no-clone.
        room = max(2, min(max(3, n // 10), added // 2))
        rules.append(
            {"rule": "bounded", "function": name, "complexity": complexity(node), "nodes": n + room}
        )
    return rules


def _nodes(code: str) -> int:
    try:
        return sum(1 for _ in ast.walk(ast.parse(code)))
    except SyntaxError:
        return 0


def _fragment(code: str) -> dict[str, str] | None:
    try:
        return fingerprint(code)
    except SyntaxError:
        return None


def refactor_candidates(repo: Repository, baseline: Baseline) -> list[Candidate]:
    """Candidates of the three inverse refactorings, at most one per helper and operator."""
    out: list[Candidate] = []
    for path in repo.python_files:
        try:
            m = ParsedModule(repo.text(path))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        others = "\n".join(
            repo.files[p].decode("utf-8", "replace")
            for p in sorted(repo.files)
            if p != path and p.endswith((".py", ".pyi", ".rst", ".txt", ".cfg", ".toml"))
        )
        for qual, node in m.functions.items():
            h = helper_of(qual, node, m.classes)
            if h is None:
                continue
            if sum(1 for q in m.functions if q.rsplit(".", 1)[-1] == node.name) > 1:
                continue  # overridden or redefined in the module: inlining could change which runs
            sites, exclusive = call_sites(m, h, others)
            if sites:
                out.extend(_for_helper(baseline, m, path, h, sites, exclusive))
    return out


def _for_helper(
    baseline: Baseline, m: ParsedModule, path: str, h: Helper, sites: list[Site], exclusive: bool
) -> list[Candidate]:
    inlined = [inline_at(m, h, s) for s in sites]
    out = []
    name = h.node.name
    doc = (ast.get_docstring(h.node) or "").strip().split("\n\n")[0].replace("\n", " ")

    def make(
        op: str, broken: str, callers: list[str], rules: list[dict[str, object]], lines: int
    ) -> Candidate | None:
        try:
            compile(broken, path, "exec")
        except SyntaxError:
            return None
        touched = sorted({*callers, h.qual})
        return Candidate(
            kind="refactor",
            id=f"{path}::{h.qual}:{op}",
            path=path,
            functions=tuple(f"{path}::{q}" for q in touched),
            broken={path: broken},
            operators=(op,),
            description=f"{op} {h.qual}",
            selected=sorted({t for q in touched for t in baseline.covering(f"{path}::{q}")}),
            extra={
                "helper": h.qual,
                "doc": doc,
                "call_sites": len(sites),
                "callers": sorted(set(callers)),
                "inlined_lines": lines,
                "structure": {"path": path, "rules": rules},
            },
        )

    done = [i for i in inlined if i is not None]
    if exclusive and len(done) == len(sites):
        callers = [s.caller for s in sites]
        cut = removal_span(m, h.node)
        broken = apply_edits(m.source, [*(e for i in done for e in i.edits), Edit(*cut, "")])
        frags = [f for f in (_fragment(i.code) for i in done) if f is not None]
        if len(frags) == len(done):
            op = "inline-helper" if len(sites) >= 2 else "merge-helper"
            rules: list[dict[str, object]] = [{"rule": "defines", "name": name}]
            rules += [{"rule": "calls", "caller": q, "callee": name} for q in sorted(set(callers))]
            grown: dict[str, int] = {}
            for site, i in zip(sites, done, strict=True):
                grown[site.caller] = grown.get(site.caller, 0) + _nodes(i.code)
            rules += _rules_for(m, grown, frags)
            made = make(op, broken, callers, rules, sum(i.lines for i in done))
            if made is not None:
                out.append(made)
    # duplicate-block: the body copied into the first caller that takes it as a block.
    for s, one in zip(sites, inlined, strict=True):
        frag = _fragment(one.block) if one is not None and one.block else None
        if one is None or frag is None or frag["kind"] != "statements":
            continue
        if int(frag["count"]) < MIN_BLOCK:
            continue
        broken = apply_edits(m.source, one.edits)
        clone: dict[str, object] = {
            "rule": "no-clone",
            "fragment": frag,
            "within": None,
            "allowed": 1,
            "label": f"the body of {h.qual}",
        }
        if all(r.ok for r in check_structure(broken, [clone])):
            continue  # the copy does not read as the helper's body: no clone to remove
        rules = [clone, *_rules_for(m, {s.caller: _nodes(one.code), h.qual: _nodes(one.code)}, [])]
        made = make("duplicate-block", broken, [s.caller], rules, one.lines)
        if made is not None:
            out.append(made)
        break
    return out


def refactor_task(
    ref: RepoRef, v: Validated, *, seed: int, heldout_fraction: float, split_by: str
) -> Task:
    """A refactoring task from a validated candidate: no FAIL_TO_PASS, the predicate hidden."""
    c = v.candidate
    repo = ref.repo
    op = c.operators[0]
    helper = str(c.extra["helper"])
    name = helper.rsplit(".", 1)[-1]
    callers = [str(x) for x in c.extra["callers"]]  # type: ignore[attr-defined]
    cls = helper.rsplit(".", 1)[0] if "." in helper else None
    where = f"a method of `{cls}`" if cls else "a module-level function"
    doc = str(c.extra.get("doc") or "")
    what = f" Its job: {doc}" if doc else ""
    head = f"The repository {repo.label} is in your workspace."
    quoted = ", ".join(f"`{x}`" for x in callers)
    if op == "inline-helper":
        ask = (
            f"In `{c.path}`, {quoted} repeat the same logic in {c.extra['call_sites']} places. "
            f"Extract it into one helper named `{name}` ({where}) and call it from each of "
            f"those places, so that no copy of the repeated code is left.{what}"
        )
    elif op == "merge-helper":
        ask = (
            f"In `{c.path}`, the function `{callers[0]}` has grown too long. Split part of its "
            f"work back out into a helper named `{name}` ({where}) that `{callers[0]}` calls, "
            f"leaving no copy of the moved code behind.{what}"
        )
    else:
        ask = (
            f"In `{c.path}`, the function `{callers[0]}` repeats code that `{helper}` already "
            f"holds. Remove the duplication: `{callers[0]}` should reuse `{helper}`, which "
            "stays."
        )
    prompt = f"{head} {ask}\n\n{_ANSWER}"
    original, broken = repo.text(c.path), c.broken[c.path]
    sites = int(c.extra["call_sites"])  # type: ignore[call-overload]
    lines = int(c.extra["inlined_lines"])  # type: ignore[call-overload]
    feats = {
        "call_sites": float(sites if op == "inline-helper" else 1),
        "lines": float(lines),
        "tests": float(len(v.p2p)),
        "complexity": float(max(complexity(n) for n in _touched(original, c))),
    }
    estimate = min(1.0, round(0.2 + 0.05 * feats["call_sites"] + 0.015 * min(lines, 40), 4))
    unit = f"{repo.name}:{c.path}" + ("" if split_by == "module" else f"::{helper}")
    return Task.create(
        name=f"synth/{slug(repo.name)}/refactor-{op}-{slug(helper)[:50]}"
        f"-{short_hash(c.id)}-v{GENERATOR_VERSION}",
        prompt=prompt,
        kind=TaskKind.REPO_PATCH,
        answer_format="patch",
        payload={"repo": ref.payload(), "overrides": {c.path: broken}, "kind": "refactor"},
        hidden={
            "fail_to_pass": [],
            "pass_to_pass": v.p2p,
            "reference_patch": unified_diff(c.path, broken, original),
            "operators": [op],
            "functions": list(c.functions),
            "description": c.description,
            "structure": c.extra["structure"],
        },
        difficulty=Difficulty(estimate=estimate, features=feats),
        split=assign_split(unit, heldout_fraction),
        provenance=Provenance(
            source=repo.origin,
            generator=f"referee.synth.refactor@{GENERATOR_VERSION}",
            seed=seed,
            versions={"referee": __version__, repo.name: repo.version},
            unit=unit,
        ),
    )


def _touched(source: str, c: Candidate) -> list[ast.AST]:
    nodes = function_nodes(source)
    found: list[ast.AST] = [
        nodes[k.split("::", 1)[1]] for k in c.functions if k.split("::", 1)[1] in nodes
    ]
    return found or [ast.parse(source)]
