"""The import source ``harbor``: Harbor task directories as referee shell tasks.

``referee tasks import harbor DIR --out tasks.jsonl`` reads DIR, a Harbor task directory or a
folder of them (:mod:`.harbor_format` describes the format). Each becomes a ``shell`` task:

* the prompt is the instruction (canary lines dropped), paths mapped to the sandbox's;
* the setup rebuilds the image inside ``/workspace``: the Dockerfile's COPY'd files are written
  and its RUN commands run in order, in their WORKDIR (the image's ``/app`` is ``/workspace``);
  its apt packages must already be installed on this machine, whose ``/usr`` the sandbox sees;
* the check writes ``tests/`` under ``/tmp/harbor/tests`` after the agent's processes are gone,
  runs ``test.sh`` in ``/workspace`` and passes when it wrote a reward of 1 (``reward.txt``, or
  every value of ``reward.json``); a stale reward file is removed first;
* the reference is ``solution/solve.sh`` (with the other files of ``solution/``);
* ``[agent] timeout_sec`` and ``[verifier] timeout_sec`` become the time limits, cut to
  referee's highest (300 s and 120 s).

A directory that cannot be run here is refused with one line naming it and why: a base image
other than plain Debian or Ubuntu, a prebuilt ``docker_image``, several services
(``docker-compose.yaml``), a multi-step task, a package not installed here, a build or a test
that downloads (the sandbox has no network), no reference. Each task is then checked in the
sandbox as ``shell-rows`` are: its reference must pass and an empty answer must fail.
``--skip-bad`` reports a refused directory and goes on.
"""

from __future__ import annotations

import base64
import shlex
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.errors import TaskError
from referee.tasks.imports.rows import OnBadRow, RowError, skipping
from referee.tasks.model import Provenance, Task

from .harbor_format import (
    CHECK_ROOT,
    downloads_in,
    map_paths,
    missing_packages,
    read_dockerfile,
    strip_canary,
)

__all__ = ["harbor_task", "harbor_tasks", "task_dirs"]

#: referee's highest limits (shell-rows): agent and reference, check, setup.
_MAX_S = {"agent": 300.0, "verifier": 120.0, "build": 300.0}
_MAX_FILES_BYTES = 8 << 20
_REWARD_CHECK = f"""
python3 - <<'REFEREE_REWARD'
import json, pathlib, sys
d = pathlib.Path("{CHECK_ROOT}/logs/verifier")
try:
    if (d / "reward.txt").exists():
        values = [float((d / "reward.txt").read_text().strip())]
    else:
        values = [float(v) for v in json.loads((d / "reward.json").read_text()).values()]
except (OSError, ValueError, AttributeError) as e:
    sys.exit(f"no reward written to {{d}}: {{e}}")
sys.exit(0 if values and min(values) >= 1.0 else f"reward {{values}}")
REFEREE_REWARD
"""


def task_dirs(path: str | Path) -> list[Path]:
    """The Harbor task directories under ``path``: itself if it has a ``task.toml``, else its
    subdirectories that have one, sorted by name."""
    root = Path(path)
    if not root.is_dir():
        raise TaskError(
            f"{root}: not a directory; give a Harbor task directory or a folder of them"
        )
    if (root / "task.toml").is_file():
        return [root]
    found = sorted(p for p in root.iterdir() if (p / "task.toml").is_file())
    if not found:
        raise TaskError(f"{root}: no task.toml in it or in its subdirectories")
    return found


def _files(folder: Path, skip: set[str] = frozenset()) -> dict[str, bytes]:  # type: ignore[assignment]
    files: dict[str, bytes] = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_symlink():
            raise TaskError(f"{p}: a symbolic link; copy the file itself")
        if p.is_file() and rel not in skip:
            files[rel] = p.read_bytes()
    if sum(len(b) for b in files.values()) > _MAX_FILES_BYTES:
        raise TaskError(f"{folder}: more than {_MAX_FILES_BYTES >> 20} MiB of files")
    return files


def _write_files(files: dict[str, bytes], dest: str) -> str:
    """Shell lines writing ``files`` under ``dest`` (base64: any bytes survive)."""
    lines = []
    for rel, data in files.items():
        target = shlex.quote(f"{dest.rstrip('/')}/{rel}")
        lines.append(f'mkdir -p "$(dirname {target})"')
        lines.append(f"base64 -d > {target} <<'REFEREE_FILE'")
        lines.append(base64.b64encode(data).decode())
        lines.append("REFEREE_FILE")
    return "\n".join(lines)


def _scripts_mapped(files: dict[str, bytes], workdir: str) -> dict[str, bytes]:
    """``files`` with Harbor's paths mapped (:func:`map_paths`) in the scripts among them
    (``.sh``, ``.py``); other files as they are."""
    out = {}
    for rel, data in files.items():
        if rel.endswith((".sh", ".py")):
            text = map_paths(data.decode("utf-8", "surrogateescape"), workdir)
            data = text.encode("utf-8", "surrogateescape")
        out[rel] = data
    return out


def _copy(context: dict[str, bytes], source: str, dest: str) -> str:
    """Shell lines doing ``COPY source dest`` from the build context (``environment/``)."""
    src = "" if source in (".", "./") else source.removeprefix("./").rstrip("/")
    if src in context:  # one file: to dest, or into dest/ when it ends with a slash
        target = f"{dest}{Path(src).name}" if dest.endswith("/") else dest
        return _write_files({Path(target).name: context[src]}, str(Path(target).parent))
    chosen = {r[len(src) + 1 if src else 0 :]: d for r, d in context.items()
              if not src or r.startswith(src + "/")}  # fmt: skip
    if not chosen:
        raise TaskError(f"environment/Dockerfile: COPY {source}: no such file in environment/")
    return _write_files(chosen, dest)


def _limit(config: dict[str, Any], table: str, key: str, which: str, default: float) -> float:
    value = config.get(table, {}).get(key, default)
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise TaskError(f"task.toml: [{table}] {key} must be a positive number, got {value!r}")
    return float(min(value, _MAX_S[which]))


def harbor_task(task_dir: Path, split: str = "heldout") -> Task:
    """The shell task of one Harbor directory (not yet run); a :class:`TaskError` naming the
    file and why if it cannot be run here."""
    try:
        config = tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise TaskError(f"task.toml: {e}") from None
    if config.get("steps"):
        raise TaskError("task.toml: a multi-step task ([[steps]]) is not supported")
    env = config.get("environment", {})
    if env.get("docker_image"):
        raise TaskError(
            f"task.toml: [environment] docker_image {env['docker_image']!r} is a prebuilt image; "
            "only a Dockerfile of plain Debian or Ubuntu can be built here"
        )
    if (env.get("os") or "linux") != "linux":
        raise TaskError(f"task.toml: [environment] os {env['os']!r}: only linux tasks run here")
    edir = task_dir / "environment"
    for compose in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml"):
        if (edir / compose).exists():
            raise TaskError(f"environment/{compose}: several services cannot be built here")
    for need in ("instruction.md", "environment/Dockerfile", "tests/test.sh", "solution/solve.sh"):
        if not (task_dir / need).is_file():
            why = "the reference referee checks the task with" if "solve" in need else "required"
            raise TaskError(f"{need}: missing ({why})")
    plan = read_dockerfile((edir / "Dockerfile").read_text(encoding="utf-8"))
    missing = missing_packages(plan.packages)
    if missing:
        raise TaskError(
            f"environment/Dockerfile: apt package(s) {', '.join(missing)} not installed on this "
            f"machine, whose /usr is the sandbox's root: apt-get install {' '.join(missing)}"
        )
    test_sh = (task_dir / "tests/test.sh").read_text(encoding="utf-8")
    fetch = downloads_in(test_sh)
    if fetch:
        raise TaskError(
            f"tests/test.sh: runs {fetch!r}, which downloads; the sandbox has no network (ship "
            "what the tests need in tests/ or install it in the image)"
        )
    workdir = plan.workdir

    setup = ["set -e"]
    context = _files(edir, skip={"Dockerfile"})
    for kind, a, b in plan.steps:
        if kind == "copy":
            setup.append(_copy(context, a, map_paths(b, workdir)))
        else:
            cwd = map_paths(b, workdir) if b not in ("/", "") else "/workspace"
            setup.append(
                f"mkdir -p {shlex.quote(cwd)} && (cd {shlex.quote(cwd)} && {map_paths(a, workdir)})"
            )

    tests = _scripts_mapped(_files(task_dir / "tests"), workdir)
    check = "\n".join(
        [
            f"rm -rf {CHECK_ROOT} && mkdir -p {CHECK_ROOT}/logs/verifier {CHECK_ROOT}/tests",
            _write_files(tests, f"{CHECK_ROOT}/tests"),
            f"cd /workspace && bash {CHECK_ROOT}/tests/test.sh "
            f"> {CHECK_ROOT}/logs/verifier/test-stdout.txt 2>&1",
            _REWARD_CHECK,
        ]
    )
    solution = _scripts_mapped(_files(task_dir / "solution"), workdir)
    reference = "\n".join(
        [
            f"rm -rf {CHECK_ROOT}/solution",
            _write_files(solution, f"{CHECK_ROOT}/solution"),
            f"cd /workspace && bash {CHECK_ROOT}/solution/solve.sh",
        ]
    )
    from .draft import intro

    name = str(config.get("task", {}).get("name") or task_dir.name).replace("/", "__")
    instruction = map_paths(strip_canary((task_dir / "instruction.md").read_text("utf-8")), workdir)
    return Task.create(
        name=f"harbor/{name}",
        prompt=f"{intro()}\n\n{instruction}",
        domain="shell",
        kind="shell",
        answer_format="tool-state",
        split=split,
        payload={"family": "harbor", "files": [], "manifest": {}},
        hidden={
            "setup": "\n".join(setup),
            "checks": [
                {
                    "type": "script",
                    "name": "tests/test.sh reward",
                    "source": check,
                    "timeout_s": _limit(config, "verifier", "timeout_sec", "verifier", 600),
                }
            ],
            "reference": reference,
            "timeout_s": _limit(config, "agent", "timeout_sec", "agent", 600),
            "command_timeout_s": _limit(config, "agent", "timeout_sec", "agent", 600),
            "setup_timeout_s": _limit(config, "environment", "build_timeout_sec", "build", 600),
            "accounts": [],
        },
        provenance=Provenance(
            source="harbor",
            unit=f"harbor:{name}",
            versions={"harbor-schema": str(config.get("schema_version", "?"))},
        ),
    )


def harbor_tasks(
    split: str, path: str | Path, on_bad_row: OnBadRow | None = None
) -> Iterator[Task]:
    """The tasks of the Harbor directories under ``path``, each checked in the sandbox (its
    reference passes, an empty answer fails); a refused directory stops the import with one
    line naming it, or, with ``on_bad_row``, is handed to it and skipped."""
    from .verifier import ShellVerifier

    made: list[tuple[Path, Task]] = []
    for task_dir in task_dirs(path):
        with skipping(on_bad_row):
            try:
                made.append((task_dir, harbor_task(task_dir, split)))
            except TaskError as e:
                raise RowError(f"{task_dir}: {e}", str(task_dir)) from None
    with ShellVerifier() as verifier:
        for task_dir, task in made:
            with skipping(on_bad_row):
                _check(verifier, task, str(task_dir))
                yield task


def _check(verifier: Any, task: Task, where: str) -> None:
    gold = verifier.verify(task, task.hidden["reference"])
    if gold.infra_error:
        raise RowError(f"{where}: the system could not be built: {gold.infra_error}", where)
    if not gold.passed:
        detail = "; ".join(f"{t.name}: {t.detail}" for t in gold.tests if t.status != "passed")
        raise RowError(f"{where}: solution/solve.sh does not pass tests/test.sh ({detail})", where)
    if verifier.verify(task, "").passed:
        raise RowError(
            f"{where}: tests/test.sh passes on an empty answer; it decides nothing", where
        )
