"""``referee domains new NAME --out DIR``: a pip-installable domain package to start from.

The package (``referee-NAME``, module ``referee_NAME``) declares the ``referee.domains`` entry
point and holds one task family with a difficulty knob, a verifier that runs the answer in
referee's sandbox, a single-turn environment, an exploit corpus, tests and a README. Installed
(``pip install -e DIR``), it is reached by name like a built-in domain, and ``referee domains
check NAME`` holds on it as written. The files are the templates in ``template/``, with the
name filled in.

>>> paths = write_domain("demo", "/tmp/referee-demo")                   # doctest: +SKIP
>>> sorted(p.name for p in paths)[:3]                                   # doctest: +SKIP
['README.md', '__init__.py', 'env.py']
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

from referee.errors import ConfigError

__all__ = ["LAYOUT", "check_new_name", "write_domain"]

#: Each template and where it goes in the package ({module} is ``NAME`` with ``_`` for ``-``).
LAYOUT = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "README.md.tmpl": "README.md",
    "__init__.py.tmpl": "src/referee_{module}/__init__.py",
    "families.py.tmpl": "src/referee_{module}/families.py",
    "verifier.py.tmpl": "src/referee_{module}/verifier.py",
    "env.py.tmpl": "src/referee_{module}/env.py",
    "redteam.py.tmpl": "src/referee_{module}/redteam.py",
    "test_domain.py.tmpl": "tests/test_domain.py",
}
_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


def check_new_name(name: str) -> None:
    """A :class:`ConfigError` unless ``name`` suits a new domain: lower-case words joined by
    ``-``, and no domain, task kind or environment of that name yet."""
    from referee.discovery import domain_records
    from referee.envs.registry import env_names
    from referee.tasks.kinds import TaskKind

    if not _NAME.fullmatch(name):
        raise ConfigError(f"a domain name is lower-case words joined by '-', got {name!r}")
    taken = {r.name for r in domain_records()} | {k.value for k in TaskKind} | set(env_names())
    if name in taken:
        raise ConfigError(f"{name!r} is taken (a domain, task kind or environment); choose another")


def write_domain(name: str, out: str | Path) -> list[Path]:
    """Write the package of domain ``name`` into ``out`` (new or empty); the files written."""
    check_new_name(name)
    root = Path(out)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise ConfigError(f"{str(root)!r} exists and is not an empty folder; give a new one")
    module = name.replace("-", "_")
    fill = {
        "{{name}}": name,
        "{{module}}": module,
        "{{cls}}": "".join(w.capitalize() for w in name.split("-")),
        "{{title}}": name.replace("-", " ").capitalize(),
    }
    templates = files("referee.domains").joinpath("template")
    written = []
    for template, target in LAYOUT.items():
        text = templates.joinpath(template).read_text(encoding="utf-8")
        for key, value in fill.items():
            text = text.replace(key, value)
        path = root / target.format(module=module)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
