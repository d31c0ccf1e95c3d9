"""A procedural family of small Python function tasks with a difficulty knob.

Each task is generated from ``(family, difficulty, seed)``: the same triple always gives the same
task, and every seed gives another one, without limit. Difficulty (0 to 1) sets how many
operations are composed and how large the test inputs are. Reference solutions are generated
code; the test inputs are generated data whose expected outcomes come from running the reference
in the sandbox (:func:`referee.verify.record.record_generated_tasks`).

Families:

* ``list-pipeline``: filter, map and reduce steps over a list of integers;
* ``string-pipeline``: a chain of string transformations;
* ``recurrence``: the n-th term of a linear recurrence modulo m;
* ``list-ops``: one to three filter or map steps and a reduction over a short list, with small
  values and the steps' boundary values among the test inputs (so an off-by-one comparison is
  caught), and a *structure* unit (the kinds of the steps, without their constants) for held-out
  splits: a held-out task's composition of steps was never seen in training. Built for the
  training experiments (``referee train``): short enough for a model trained on a CPU.

>>> t = generate("list-pipeline", difficulty=0.5, seed=7)
>>> t.id, t.payload["entry_point"], t.split
('proc/list-pipeline-d50-s7-v1', 'solve', 'train')
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from referee.errors import ConfigError
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Difficulty, Provenance, Task

__all__ = ["FAMILIES", "generate", "generate_many"]

VERSION = "1"


@dataclass(frozen=True)
class _Spec:
    signature: str
    description: str
    body: str
    inputs: list[list[Any]]
    features: dict[str, float]
    unit: str | None = None  # the source unit for held-out splits (None: the task itself)


# ---- list pipeline ---------------------------------------------------------------------------
_FILTERS: list[tuple[str, Callable[[int], str]]] = [
    ("keep the even numbers", lambda k: "x % 2 == 0"),
    ("keep the odd numbers", lambda k: "x % 2 != 0"),
    ("keep the numbers greater than {k}", lambda k: f"x > {k}"),
    ("keep the numbers that are not multiples of {k}", lambda k: f"x % {k} != 0"),
    ("drop the negative numbers", lambda k: "x >= 0"),
]
_MAPS: list[tuple[str, Callable[[int], str]]] = [
    ("multiply each number by {k}", lambda k: f"x * {k}"),
    ("add {k} to each number", lambda k: f"x + {k}"),
    ("replace each number by its absolute value", lambda k: "abs(x)"),
    ("replace each number by its remainder modulo {k}", lambda k: f"x % {k}"),
    ("square each number", lambda k: "x * x"),
    ("replace each number x by x // {k}", lambda k: f"x // {k}"),
]
_REDUCES = [
    ("return their sum", "return sum(xs)"),
    ("return the largest, or 0 if none is left", "return max(xs) if xs else 0"),
    ("return how many are left", "return len(xs)"),
    (
        "return their product modulo 1000003 (1 if none is left)",
        "p = 1\n    for x in xs:\n        p = p * x % 1000003\n    return p",
    ),
    ("return them sorted in descending order", "return sorted(xs, reverse=True)"),
    (
        "return the list of distinct values in order of first appearance",
        "seen = []\n    for x in xs:\n        if x not in seen:\n"
        "            seen.append(x)\n    return seen",
    ),
]


def _list_pipeline(rng: random.Random, difficulty: float) -> _Spec:
    steps = 1 + round(difficulty * 4)
    words, lines = [], []
    for _ in range(steps):
        k = rng.randint(2, 9)
        if rng.random() < 0.5:
            text, expr = rng.choice(_FILTERS)
            words.append(text.format(k=k))
            lines.append(f"    xs = [x for x in xs if {expr(k)}]")
        else:
            text, expr = rng.choice(_MAPS)
            words.append(text.format(k=k))
            lines.append(f"    xs = [{expr(k)} for x in xs]")
    text, code = rng.choice(_REDUCES)
    words.append(text)
    size = 3 + int(difficulty * 40)
    span = 10 + int(difficulty * 990)
    inputs = [[[rng.randint(-span, span) for _ in range(rng.randint(0, size))]] for _ in range(24)]
    inputs += [[[]], [[0]], [[span, -span]]]
    return _Spec(
        signature="def solve(xs: list[int])",
        description="Given a list of integers xs, in this order: " + "; then ".join(words) + ".",
        body="\n".join(lines) + "\n    " + code + "\n",
        inputs=inputs,
        features={"steps": steps, "input_size": size, "value_span": span},
    )


# ---- string pipeline -------------------------------------------------------------------------
_STRING_OPS: list[tuple[str, Callable[[int], str]]] = [
    ("reverse it", lambda k: "s = s[::-1]"),
    ("make it upper case", lambda k: "s = s.upper()"),
    ("make it lower case", lambda k: "s = s.lower()"),
    (
        "remove every vowel (a, e, i, o, u, either case)",
        lambda k: "s = ''.join(c for c in s if c.lower() not in 'aeiou')",
    ),
    (
        "rotate it left by {k} characters (when it is not empty)",
        lambda k: f"s = s[{k} % len(s):] + s[:{k} % len(s)] if s else s",
    ),
    (
        "reverse the order of its space-separated words",
        lambda k: "s = ' '.join(reversed(s.split(' ')))",
    ),
    (
        "shift every lower-case letter {k} places forward in the alphabet, wrapping around",
        lambda k: (
            f"s = ''.join(chr((ord(c) - 97 + {k}) % 26 + 97) if 'a' <= c <= 'z' else c for c in s)"
        ),
    ),
    ("replace each space by '{sep}'", lambda k: "s = s.replace(' ', '-')"),
    ("keep only every second character, starting with the first", lambda k: "s = s[::2]"),
]


def _string_pipeline(rng: random.Random, difficulty: float) -> _Spec:
    steps = 1 + round(difficulty * 4)
    words, lines = [], []
    for _ in range(steps):
        k = rng.randint(1, 5)
        text, code = rng.choice(_STRING_OPS)
        words.append(text.format(k=k, sep="-"))
        lines.append("    " + code(k))
    size = 4 + int(difficulty * 60)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDE "
    inputs = [
        ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, size)))] for _ in range(24)
    ]
    inputs += [[""], ["a"], ["Hello World"]]
    return _Spec(
        signature="def solve(s: str)",
        description="Given a string s, in this order: "
        + "; then ".join(words)
        + "; then return the result.",
        body="\n".join(lines) + "\n    return s\n",
        inputs=[[i[0]] for i in inputs],
        features={"steps": steps, "input_size": size},
    )


# ---- recurrence ------------------------------------------------------------------------------
def _recurrence(rng: random.Random, difficulty: float) -> _Spec:
    order = 1 + round(difficulty * 3)
    coeffs = [rng.randint(-3, 5) or 1 for _ in range(order)]
    start = [rng.randint(0, 9) for _ in range(order)]
    mod = rng.choice([97, 1009, 10007, 1000003])
    terms = " + ".join(f"{c} * a(n-{i + 1})" for i, c in enumerate(coeffs))
    description = (
        f"A sequence has a(0..{order - 1}) = {start} and, for n >= {order}, a(n) = ({terms}) mod "
        f"{mod} (a result in 0..{mod - 1}). Return a(n) for a given n >= 0."
    )
    body = (
        f"    a = {start}\n"
        f"    coeffs = {coeffs}\n"
        f"    for _ in range({order}, n + 1):\n"
        f"        a.append(sum(c * a[-i - 1] for i, c in enumerate(coeffs)) % {mod})\n"
        f"    return a[n]\n"
    )
    top = 20 + int(difficulty * 5000)
    inputs = [[rng.randint(0, top)] for _ in range(20)] + [[i] for i in range(order + 2)]
    return _Spec(
        "def solve(n: int)",
        description,
        body,
        inputs,
        {"order": order, "max_n": top, "modulus": mod},
    )


# ---- list ops --------------------------------------------------------------------------------
# (kind, wording, code); kinds name the structure, constants k vary within it.
_OPS: list[tuple[str, str, Callable[[int], str]]] = [
    ("even", "keep the even numbers", lambda k: "xs = [x for x in xs if x % 2 == 0]"),
    ("odd", "keep the odd numbers", lambda k: "xs = [x for x in xs if x % 2 != 0]"),
    ("gt", "keep the numbers greater than {k}", lambda k: f"xs = [x for x in xs if x > {k}]"),
    ("lt", "keep the numbers less than {k}", lambda k: f"xs = [x for x in xs if x < {k}]"),
    ("nonneg", "drop the negative numbers", lambda k: "xs = [x for x in xs if x >= 0]"),
    ("mul", "multiply each number by {k}", lambda k: f"xs = [x * {k} for x in xs]"),
    ("add", "add {k} to each number", lambda k: f"xs = [x + {k} for x in xs]"),
    ("sub", "subtract {k} from each number", lambda k: f"xs = [x - {k} for x in xs]"),
    ("abs", "replace each number by its absolute value", lambda k: "xs = [abs(x) for x in xs]"),
    ("neg", "negate each number", lambda k: "xs = [-x for x in xs]"),
]
_OP_REDUCES: list[tuple[str, str, str]] = [
    ("sum", "return their sum", "return sum(xs)"),
    ("count", "return how many are left", "return len(xs)"),
    ("max", "return the largest, or 0 if none is left", "return max(xs) if xs else 0"),
    ("min", "return the smallest, or 0 if none is left", "return min(xs) if xs else 0"),
    ("desc", "return them sorted in descending order", "return sorted(xs, reverse=True)"),
    ("asc", "return them sorted in ascending order", "return sorted(xs)"),
]


def _list_ops(rng: random.Random, difficulty: float) -> _Spec:
    steps = 1 + round(difficulty * 2)
    kinds, words, lines, thresholds = [], [], [], []
    for _ in range(steps):
        kind, text, code = rng.choice(_OPS)
        k = rng.randint(1, 6)
        kinds.append(kind)
        words.append(text.format(k=k))
        lines.append("    " + code(k))
        if kind in ("gt", "lt"):
            thresholds.append(k)
    kind, text, reduce = rng.choice(_OP_REDUCES)
    kinds.append(kind)
    words.append(text)
    inputs: list[list[Any]] = [
        [[rng.randint(-9, 9) for _ in range(rng.randint(1, 8))]] for _ in range(16)
    ]
    # Every value near zero, in both orders and in small groups: whatever the steps before a
    # comparison did to the values, its boundary is among them, so an off-by-one is caught.
    near = list(range(-9, 10))
    inputs += [[near], [near[::-1]], [[0]], [[]], [[-1, 0, 1]]]
    inputs += [[[t - 1, t, t + 1]] for t in thresholds]
    inputs += [[rng.sample(near, 5)] for _ in range(4)]
    return _Spec(
        signature="def solve(xs: list[int])",
        description="Given a list of integers xs, " + "; then ".join(words) + ".",
        body="\n".join(lines) + "\n    " + reduce + "\n",
        inputs=inputs,
        features={"steps": steps},
        unit="list-ops:" + "-".join(kinds),
    )


FAMILIES: dict[str, Callable[[random.Random, float], _Spec]] = {
    "list-pipeline": _list_pipeline,
    "string-pipeline": _string_pipeline,
    "recurrence": _recurrence,
    "list-ops": _list_ops,
}


def generate(family: str, *, difficulty: float, seed: int, split: str = "train") -> Task:
    """One task (not yet recorded: ``hidden.inputs`` holds inputs, outcomes come later)."""
    if family not in FAMILIES:
        raise ConfigError(f"unknown task family {family!r}; available: {', '.join(FAMILIES)}")
    if not 0.0 <= difficulty <= 1.0:
        raise ConfigError(f"difficulty must be between 0 and 1, got {difficulty!r}")
    rng = random.Random(f"{family}:{difficulty:.2f}:{seed}")
    spec = FAMILIES[family](rng, difficulty)
    code_prompt = f'{spec.signature}:\n    """{spec.description}"""\n'
    prompt = (
        "Write the body of this Python function. Answer with the code that continues it.\n\n"
        f"```python\n{code_prompt}```"
    )
    return Task.create(
        name=f"proc/{family}-d{round(difficulty * 100)}-s{seed}-v{VERSION}",
        prompt=prompt,
        domain="code",
        kind=TaskKind.FUNCTION,
        answer_format="code",
        split=split,
        payload={"entry_point": "solve", "code_prompt": code_prompt},
        hidden={"reference": spec.body, "generated_inputs": spec.inputs},
        difficulty=Difficulty(estimate=difficulty, features=spec.features),
        provenance=Provenance(
            source="procedural",
            generator=f"referee.tasks.procedural/{family}",
            seed=seed,
            versions={"family": VERSION},
            unit=spec.unit,
        ),
    )


def generate_many(
    family: str, *, count: int, difficulty: float | None = None, seed: int = 0
) -> Iterator[Task]:
    """``count`` tasks with seeds ``seed, seed+1, ...``; difficulty spread over [0, 1] if None."""
    for i in range(count):
        d = difficulty if difficulty is not None else round((i % 11) / 10, 2)
        yield generate(family, difficulty=d, seed=seed + i)
