"""The candidate's Verilog: taken out of the answer text, then checked before anything runs.

The candidate module is compiled into one program with the grader's testbench, so what it may
write is restricted statically, by a scanner that understands comments, strings, numbers and
directives (so a name in a comment is not a finding, and a finding cannot hide in one):

* system tasks and functions other than ``$signed``, ``$unsigned``, ``$clog2``, ``$bits``
  (no ``$finish``, ``$display``, ``$fopen``, ``$readmemh``, ``$system``, ``$root``...);
* hierarchical references (``tb.errors``, ``gen[0].x``) and scope operators (``::``): the
  module sees its own ports and nets only; upward references to the testbench are impossible;
* compiler directives other than ``timescale`` and ``default_nettype`` (no ``include``,
  ``define``, ``undef``, ``resetall``), escaped identifiers, and SystemVerilog containers that
  live outside a module (``package``, ``import``, ``interface``, ``class``, ``bind``...);
* anything outside ``module ... endmodule`` (no compilation-unit declarations).

>>> checked = check_source("module inv(input a, output y); assign y = ~a; endmodule", "inv")
>>> checked.problems, checked.modules
([], ['inv'])
>>> check_source("module inv(input a, output y); initial $finish; endmodule", "inv").problems
['system task $finish is not allowed (allowed: $bits, $clog2, $signed, $unsigned)']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["ALLOWED_SYSTEM", "CheckedSource", "check_source", "extract_verilog"]

#: The system functions a graded module may use: pure functions of their arguments.
ALLOWED_SYSTEM = frozenset({"$signed", "$unsigned", "$clog2", "$bits"})
_FORBIDDEN_WORDS = frozenset(
    {
        "package",
        "endpackage",
        "import",
        "export",
        "interface",
        "endinterface",
        "class",
        "endclass",
        "program",
        "endprogram",
        "bind",
        "config",
        "endconfig",
        "library",
        "checker",
        "extern",
        "primitive",
        "endprimitive",
    }
)
_ALLOWED_DIRECTIVE = re.compile(r"`(timescale|default_nettype)\b[^\n]*")
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.S)
_VERILOG_TAGS = {"verilog", "systemverilog", "sv", "v"}
_TOKEN = re.compile(
    r"(?P<ws>\s+)"
    r"|(?P<num>\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?|'[sS]?[bBoOdDhH]\s*[0-9a-fA-FxXzZ?_]+"
    r"|'[01xXzZ])"
    r"|(?P<sys>\$[A-Za-z0-9_$]*)"
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_$]*)"
    r"|(?P<op>::|\.\*|[^\s])"
)


def extract_verilog(answer: str) -> str:
    """The Verilog of an answer: its last fenced block tagged verilog (or systemverilog, sv,
    v); else its last untagged fenced block; else what follows a verilog fence left open;
    else the whole text.

    >>> extract_verilog("Here:\\n```verilog\\nmodule a; endmodule\\n```\\n")
    'module a; endmodule\\n'
    """
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(answer)]
    tagged = [body for tag, body in blocks if tag in _VERILOG_TAGS]
    if tagged:
        return tagged[-1]
    untagged = [body for tag, body in blocks if not tag]
    if untagged:
        return untagged[-1]
    # A block left open (the model stopped before its closing fence): what follows its tag.
    opened = re.search(
        r"```[ \t]*(?:verilog|systemverilog|sv|v)[^\n]*\n(.*)\Z", answer, re.S | re.I
    )
    return opened.group(1) if opened else answer


@dataclass(frozen=True)
class CheckedSource:
    """``code`` is what gets compiled (comments and the allowed directives blanked, line
    numbers kept); ``problems`` say why it may not run (empty: it may); ``modules`` are the
    names of the modules it declares, in order."""

    code: str
    problems: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def _strip(code: str, problems: list[str]) -> str:
    """``code`` with comments blanked and string bodies kept; problems for what cannot be
    scanned (an unterminated comment or string, a stray backtick or backslash)."""
    out: list[str] = []
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            j = code.find("\n", i)
            j = n if j < 0 else j
            out.append(_blank(code[i:j]))
            i = j
        elif code.startswith("/*", i):
            j = code.find("*/", i + 2)
            if j < 0:
                problems.append("unterminated /* comment")
                return "".join(out)
            out.append(_blank(code[i : j + 2]))
            i = j + 2
        elif c == '"':
            j = i + 1
            while j < n and code[j] not in '"\n':
                j += 2 if code[j] == "\\" else 1
            if j >= n or code[j] != '"':
                problems.append("unterminated string")
                return "".join(out)
            body = code[i : j + 1]
            if "`" in body:
                problems.append("a backtick inside a string is not allowed")
            out.append(body)
            i = j + 1
        elif c == "`":
            m = _ALLOWED_DIRECTIVE.match(code, i)
            if m is None:
                word = re.match(r"`\w*", code[i:])
                problems.append(
                    f"compiler directive {word.group(0) if word else '`'} is not allowed "
                    "(only `timescale and `default_nettype)"
                )
                return "".join(out)
            out.append(_blank(m.group(0)))
            i = m.end()
        elif c == "\\":
            problems.append("escaped identifiers (\\name) are not allowed")
            return "".join(out)
        elif not (c.isascii() and (c.isprintable() or c in "\t\n\r\f")):
            problems.append(f"character {c!r} outside comments and strings is not allowed")
            return "".join(out)
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _tokens(code: str) -> list[tuple[str, str]]:
    toks = []
    for m in _TOKEN.finditer(re.sub(r'"(?:\\.|[^"\\\n])*"', '""', code)):
        kind = m.lastgroup or "op"
        if kind != "ws":
            toks.append((kind, m.group(0)))
    return toks


def check_source(code: str, top: str) -> CheckedSource:
    """Check a candidate's source (see the module docstring); ``top`` must be declared."""
    problems: list[str] = []
    stripped = _strip(code, problems)
    if problems:
        return CheckedSource(code=stripped, problems=problems)
    toks = _tokens(stripped)
    modules: list[str] = []
    inside = False
    expect_name = False
    for i, (kind, text) in enumerate(toks):
        prev = toks[i - 1] if i else ("op", "")
        if kind == "sys" and text not in ALLOWED_SYSTEM:
            allowed = ", ".join(sorted(ALLOWED_SYSTEM))
            what = "system task" if text != "$root" else "scope"
            problems.append(f"{what} {text} is not allowed (allowed: {allowed})")
        elif kind == "op" and text == "::":
            problems.append("the scope operator :: is not allowed")
        elif kind == "op" and text == "." and (prev[0] == "id" or prev[1] in ("]", ")")):
            nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
            problems.append(f"hierarchical reference {prev[1]}.{nxt} is not allowed")
        elif kind == "id" and text in _FORBIDDEN_WORDS:
            problems.append(f"'{text}' is not allowed: write plain modules only")
        elif kind == "id" and text in ("module", "macromodule"):
            if inside:
                problems.append("nested module declarations are not allowed")
            inside, expect_name = True, True
            continue
        elif kind == "id" and text == "endmodule":
            if not inside:
                problems.append("'endmodule' without a 'module'")
            inside = False
        elif expect_name and kind == "id" and text not in ("automatic", "static"):
            modules.append(text)
            expect_name = False
        elif not inside:
            problems.append(f"only modules may appear at the top level, found {text!r}")
        if len(problems) >= 5:
            break
    if inside and not problems:
        problems.append("a module is not closed with 'endmodule'")
    if not problems:
        if top not in modules:
            found = ", ".join(modules) or "none"
            problems.append(f"no module named {top!r} is declared (modules found: {found})")
        elif len(set(modules)) != len(modules):
            problems.append(f"a module name is declared twice: {modules}")
    return CheckedSource(code=stripped, problems=problems, modules=modules)
