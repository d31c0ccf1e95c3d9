"""Program tasks from imported problems: the one prompt, the one task shape, the shared quirks.

Every importer of a code-RL format ends here: :func:`program_task` makes a ``program`` task
(``/work/notes/program_schema.md``: ``payload`` io, fn_name, starter_code, examples, languages,
limits; ``hidden`` cases, compare, reference) and :func:`program_prompt` writes its prompt
(statement, examples, how to answer, starter code), so that every source reads the same to the
model. The conversions of test cases that several formats share live here too:
:func:`apps_cases` (APPS, TACO, DeepCoder and veRL's ``{inputs, outputs, fn_name}``) and
:func:`functional_case` (LiveCodeBench's and DeepCoder's one-JSON-value-per-line arguments).

>>> t = program_task(name="demo/1", source="demo", statement="Print the sum of a and b.",
...                  cases=[{"input": "1 2\\n", "output": "3\\n"}], split="train")
>>> t.kind.value, t.payload["io"], t.hidden["compare"], t.provenance.source
('program', 'stdin', 'tokens', 'demo')
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from referee.tasks.imports.rows import Row
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Difficulty, Provenance, Task

__all__ = [
    "DIFFICULTY_LABELS",
    "apps_cases",
    "compare_for",
    "difficulty_of",
    "functional_case",
    "listed_cases",
    "program_prompt",
    "program_task",
]

DEFAULT_TIME_LIMIT_S = 2.0
DEFAULT_MEMORY_MB = 256

#: The sources' difficulty labels (lower case) on referee's 0-1 scale; unknown labels: None.
DIFFICULTY_LABELS: dict[str, float] = {
    # APPS
    "introductory": 0.2,
    "interview": 0.5,
    "competition": 0.8,
    # TACO, LiveCodeBench
    "easy": 0.2,
    "medium": 0.5,
    "medium_hard": 0.65,
    "hard": 0.8,
    "very_hard": 0.95,
}

_FLOAT_HINT = re.compile(r"(absolute|relative)\s+(or\s+relative\s+)?error", re.I)
_TOLERANCE = re.compile(r"10\s*\^\s*\{?\s*-\s*(\d+)\s*\}?|1e-(\d+)", re.I)


def difficulty_of(label: object) -> Difficulty:
    """A source's difficulty label (``interview``, ``MEDIUM_HARD``, ``easy``) as a Difficulty."""
    if not isinstance(label, str):
        return Difficulty()
    key = label.strip().lower().replace(" ", "_").replace("-", "_")
    return Difficulty(estimate=DIFFICULTY_LABELS.get(key))


def compare_for(statement: str) -> tuple[str, float | None]:
    """How to compare outputs, guessed from the statement: ``float`` with the tolerance it
    states (``10^{-6}``; 1e-6 when none is written) where it speaks of absolute or relative
    error, else ``tokens``. A heuristic; problems with several right answers need a checker,
    which none of the public formats carry."""
    hint = _FLOAT_HINT.search(statement)
    if hint is None:
        return "tokens", None
    near = statement[max(0, hint.start() - 200) :]  # the tolerance written next to the hint
    m = _TOLERANCE.search(near) or _TOLERANCE.search(statement)
    exponent = int(m.group(1) or m.group(2)) if m else 6
    return "float", float(f"1e-{exponent}")


def _text(value: Any) -> str:
    """A stdin input or expected output: TACO and CodeContests mirrors sometimes hold them as
    a list of lines, which are joined (with a final newline)."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(v if v.endswith("\n") else v + "\n" for v in value)
    if isinstance(value, str):
        return value
    raise TypeError(type(value).__name__)


def apps_cases(
    row: Row, field: str, spec: Any, *, unwrap: bool = True
) -> tuple[list[dict[str, str]], str | None]:
    """The cases of an APPS-style ``{"inputs": [...], "outputs": [...], "fn_name"?}`` and its
    fn_name (None: stdin).

    With a fn_name each input is the list of the call's arguments and each output the return
    value. APPS's quirk: its harness accepts the output as it is *or* its first element, and
    most call-based problems store every return value wrapped in a one-element list (``[[3],
    [5]]`` for returns 3 and 5), but not all of them. ``unwrap`` resolves it per problem: when
    every output of the problem is a one-element list, each is unwrapped; otherwise they are
    kept as they are. (A problem whose function really returns one-element lists, stored
    unwrapped, would be misread; APPS's harness has the same blind spot.)
    """
    if not isinstance(spec, Mapping):
        raise row.error(field, "expected a JSON object {inputs, outputs, fn_name?}")
    inputs, outputs = spec.get("inputs"), spec.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise row.error(field, "'inputs' and 'outputs' must be lists")
    if len(inputs) != len(outputs):
        raise row.error(field, f"{len(inputs)} inputs but {len(outputs)} outputs; they go in pairs")
    fn_name = spec.get("fn_name") or None
    if fn_name is not None and not isinstance(fn_name, str):
        raise row.error(field, f"'fn_name' must be a string, got {type(fn_name).__name__}")
    cases = []
    if fn_name is None:
        for i, (inp, out) in enumerate(zip(inputs, outputs, strict=True)):
            try:
                cases.append({"input": _text(inp), "output": _text(out)})
            except TypeError as e:
                raise row.error(
                    field, f"case {i}: a stdin case is text or a list of lines, got {e}"
                ) from None
        return cases, None
    wrapped = unwrap and all(isinstance(o, list) and len(o) == 1 for o in outputs)
    for i, (inp, out) in enumerate(zip(inputs, outputs, strict=True)):
        if not isinstance(inp, list):
            raise row.error(
                field, f"case {i}: a call's input is the list of its arguments, got {_js(inp)}"
            )
        cases.append({"input": _js(inp), "output": _js(out[0] if wrapped else out)})
    return cases, fn_name


def functional_case(row: Row, field: str, inp: Any, out: Any) -> dict[str, str]:
    """A LiveCodeBench ``functional`` case: the arguments one JSON value a line, the output a
    JSON text; as the schema's ``{"input": "[arg, ...]", "output": "value"}``."""
    if not isinstance(inp, str) or not isinstance(out, str):
        raise row.error(field, "a functional case's input and output are JSON texts")
    args = [row.decode(field, line) for line in inp.splitlines() if line.strip()]
    return {"input": _js(args), "output": _js(row.decode(field, out))}


_STDIN = {"stdin", "stdin_stdout"}  # PrimeIntellect (DeepCoder) writes stdin_stdout
_FUNCTIONAL = {"functional", "function_call"}


def listed_cases(
    row: Row, field: str, tests: Any, fn_name: str | None
) -> tuple[list[dict[str, str]], str | None]:
    """The cases of a LiveCodeBench-style list of ``{"input", "output", "testtype"}`` and the
    fn_name they call (None: they are stdin cases). A case without a testtype is functional
    when there is a fn_name; a problem mixing both kinds is refused."""
    if not isinstance(tests, list):
        raise row.error(field, "expected a list of {input, output, testtype}")
    cases, kinds = [], set()
    for i, case in enumerate(tests):
        if not isinstance(case, Mapping) or "input" not in case or "output" not in case:
            raise row.error(field, f"case {i}: expected {{input, output, testtype}}")
        testtype = (
            case.get("testtype") or case.get("type") or ("functional" if fn_name else "stdin")
        )
        if testtype in _FUNCTIONAL:
            if fn_name is None:
                raise row.error(field, f"case {i}: functional, but metadata has no func_name")
            cases.append(functional_case(row, field, case["input"], case["output"]))
            kinds.add("functional")
        elif testtype in _STDIN:
            try:
                cases.append({"input": _text(case["input"]), "output": _text(case["output"])})
            except TypeError as e:
                raise row.error(field, f"case {i}: a stdin case's texts, got {e}") from None
            kinds.add("stdin")
        else:
            raise row.error(field, f"case {i}: unknown testtype {testtype!r}")
    if len(kinds) > 1:
        raise row.error(field, "stdin and functional cases in one problem")
    return cases, (fn_name if kinds == {"functional"} else None)


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def program_prompt(
    statement: str,
    *,
    examples: Sequence[Mapping[str, str]] = (),
    fn_name: str | None = None,
    starter_code: str = "",
    title: str | None = None,
) -> str:
    """The user message of a program task: the statement, the examples, how to answer, and
    the starter code. Written here once for every imported source."""
    parts = [f"# {title.strip()}\n\n{statement.strip()}" if title else statement.strip()]
    if examples:
        shown = []
        for i, ex in enumerate(examples, 1):
            label = ("Arguments", "Returns") if fn_name else ("Input", "Output")
            shown.append(
                f"Example {i}\n{label[0]}:\n```\n{ex['input'].rstrip()}\n```\n"
                f"{label[1]}:\n```\n{ex['output'].rstrip()}\n```"
            )
        parts.append("## Examples\n\n" + "\n\n".join(shown))
    if fn_name:
        how = (
            f"Write a Python solution that defines `{fn_name}` (a top-level function, or a "
            "method of class `Solution` when the starter code has one). It is called with each "
            "test's arguments and its return value is compared with the expected one. Do not "
            "read input or print the answer."
        )
    else:
        how = (
            "Write a complete program that reads the input from standard input and writes the "
            "answer to standard output. Use Python, C, C++, Java, JavaScript, Go or Rust."
        )
    parts.append(
        "## Answer\n\n" + how + " Answer with the whole code in one fenced block tagged with its "
        "language (```python, ```cpp, ...)."
    )
    if starter_code.strip():
        parts.append("## Starter code\n\n```python\n" + starter_code.rstrip() + "\n```")
    return "\n\n".join(parts) + "\n"


def program_task(
    *,
    name: str,
    source: str,
    statement: str,
    cases: Sequence[Mapping[str, Any]],
    split: str,
    examples: Sequence[Mapping[str, str]] = (),
    fn_name: str | None = None,
    starter_code: str = "",
    title: str | None = None,
    time_limit_s: float | None = None,
    memory_mb: int | None = None,
    reference: Mapping[str, str] | None = None,
    difficulty: Difficulty | None = None,
    prompt: Sequence[Mapping[str, str]] | None = None,
    generator: str | None = None,
) -> Task:
    """A ``program`` task; ``prompt`` replaces the written one (veRL rows bring their own)."""
    compare, tolerance = compare_for(statement)
    hidden: dict[str, Any] = {
        "cases": [dict(c) for c in cases],
        "compare": compare,
        "reference": dict(reference) if reference else None,
    }
    if tolerance is not None:
        hidden["float_tolerance"] = tolerance
    payload = {
        "io": "function" if fn_name else "stdin",
        "fn_name": fn_name,
        "starter_code": starter_code or "",
        "examples": [{"input": e["input"], "output": e["output"]} for e in examples],
        "languages": ["python"] if fn_name else None,
        "time_limit_s": float(time_limit_s or DEFAULT_TIME_LIMIT_S),
        "memory_mb": int(memory_mb or DEFAULT_MEMORY_MB),
    }
    text = program_prompt(
        statement, examples=examples, fn_name=fn_name, starter_code=starter_code, title=title
    )
    return Task.create(
        name=name,
        prompt=[dict(m) for m in prompt] if prompt is not None else text,
        domain="code",
        kind=TaskKind.PROGRAM,
        answer_format="code",
        split=split,
        payload=payload,
        hidden=hidden,
        difficulty=difficulty or Difficulty(),
        provenance=Provenance(source=source, generator=generator or "referee.tasks.imports"),
    )
