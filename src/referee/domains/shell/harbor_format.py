"""Harbor's task directories (Terminal-Bench 2's format), as far as referee reads and writes them.

A Harbor task is a directory (harbor 0.25.0, ``harbor.models.task``)::

    task.toml            schema_version, [metadata], [verifier] timeout_sec, [agent] timeout_sec,
                         [environment] (build_timeout_sec, docker_image, cpus, memory_mb...)
    instruction.md       what the agent is told (leading canary comment lines are dropped)
    environment/         the image's build context: Dockerfile (or docker-compose.yaml)
    tests/test.sh        copied to /tests after the agent ran; writes /logs/verifier/reward.txt
    solution/solve.sh    the reference, copied to /solution for the oracle agent

referee runs such a task as a ``shell`` task in its sandbox, whose root is this machine's own
``/usr``: so only an image that is plain Debian or Ubuntu plus Debian packages can be had, and
each package must be installed here (:func:`missing_packages`). :func:`read_dockerfile` turns a
Dockerfile into that plan or refuses it naming the line and why. The image's working directory
(``WORKDIR``, ``/app`` in Terminal-Bench) is the sandbox's ``/workspace``: :func:`map_paths`
rewrites it, ``/tests``, ``/solution`` and ``/logs/verifier`` in every script and in the
instruction.

>>> plan = read_dockerfile("FROM ubuntu:24.04\\nRUN apt-get update && apt-get install -y jq\\n"
...                        "WORKDIR /app\\nRUN echo hi > greeting\\n")
>>> plan.packages, plan.workdir, plan.run
(['jq'], '/app', ['echo hi > greeting'])
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass, field

from referee.errors import TaskError

__all__ = [
    "CHECK_ROOT",
    "DockerPlan",
    "map_paths",
    "missing_packages",
    "read_dockerfile",
    "strip_canary",
]

#: Where the check puts Harbor's /tests, /solution and /logs/verifier: the check's own /tmp,
#: made after the agent's processes are gone (so, as in Harbor, the agent never sees the tests).
CHECK_ROOT = "/tmp/harbor"
_IMAGES = re.compile(r"^(?:docker\.io/)?(?:library/)?(debian|ubuntu)(?::[\w.-]+)?(?:@sha256:\w+)?$")
_IGNORED = {"LABEL", "ARG", "MAINTAINER"}
_SHELLS = {"bash", "sh", "/bin/bash", "/bin/sh"}
_APT = re.compile(r"^(?:DEBIAN_FRONTEND=\S+\s+)?(?:apt-get|apt)\s+(.*)$", re.DOTALL)
_APT_CLEAN = re.compile(r"^(?:rm -rf /var/lib/apt/lists/\*?|apt-get clean|apt clean)$")
_DOWNLOADS = re.compile(r"(?:^|[\s;&|(])(curl|wget|pip3?|uv|uvx|npm|git clone|apt-get|apt)\s")
_CANARY = re.compile(r"^(<!--.*canary.*-->|#.*canary.*)$", re.IGNORECASE)


@dataclass
class DockerPlan:
    """What a Dockerfile asks for, in referee's terms."""

    image: str = ""
    packages: list[str] = field(default_factory=list)
    #: ("run", command, workdir) for each command of a RUN line other than apt's, and
    #: ("copy", source in the build context, destination in the image), in order.
    steps: list[tuple[str, str, str]] = field(default_factory=list)
    #: The last WORKDIR (the agent's and the tests' working directory).
    workdir: str = "/"

    @property
    def run(self) -> list[str]:
        """The commands of its RUN lines other than apt's, in order."""
        return [a for kind, a, _ in self.steps if kind == "run"]


def _logical_lines(text: str) -> list[str]:
    lines, current = [], ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        lines.append(current + stripped)
        current = ""
    if current.strip():
        lines.append(current)
    return lines


def _apt_packages(args: str, where: str) -> list[str]:
    words = shlex.split(args)
    if not words or words[0] in ("update", "clean", "autoremove"):
        return []
    if words[0] != "install":
        raise TaskError(f"{where}: apt {words[0]!r} is not supported (only update and install)")
    packages = []
    for word in words[1:]:
        if word.startswith("-"):
            continue
        if not re.fullmatch(r"[a-z0-9][a-z0-9+.-]*", word):
            raise TaskError(
                f"{where}: apt package {word!r} is pinned or not a plain package name; "
                "only names of Debian packages can be installed here"
            )
        packages.append(word)
    return packages


def read_dockerfile(text: str, where: str = "environment/Dockerfile") -> DockerPlan:
    """The plan of a Dockerfile, or a :class:`TaskError` naming the line and why it cannot be
    built from Debian's packages here."""
    plan = DockerPlan()
    for n, line in enumerate(_logical_lines(text), 1):
        instruction, _, rest = line.partition(" ")
        op, rest = instruction.upper(), rest.strip()
        at = f"{where}: instruction {n} ({op})"
        if op == "FROM":
            if plan.image:
                raise TaskError(f"{at}: a multi-stage build cannot be made from Debian's packages")
            image = rest.split()[0] if rest else ""
            if "--platform" in rest or not _IMAGES.match(image):
                raise TaskError(
                    f"{at}: image {image!r} is not plain Debian or Ubuntu; referee builds only "
                    "those (from Debian's packages, into the sandbox's root)"
                )
            plan.image = image
        elif op == "RUN":
            for part in (p.strip() for p in re.split(r"&&|;", rest)):
                if not part or _APT_CLEAN.match(part):
                    continue
                apt = _APT.match(part)
                if apt:
                    plan.packages += _apt_packages(apt[1], at)
                elif _DOWNLOADS.search(" " + part + " "):
                    raise TaskError(
                        f"{at}: {part[:60]!r} downloads at build time; the sandbox has no "
                        "network (ship the files in environment/ and COPY them)"
                    )
                else:
                    plan.steps.append(("run", part, plan.workdir))
        elif op == "WORKDIR":
            plan.workdir = rest if rest.startswith("/") else f"{plan.workdir.rstrip('/')}/{rest}"
        elif op in ("COPY", "ADD"):
            words = shlex.split(rest)
            if any(w.startswith("--") for w in words) or len(words) != 2:
                raise TaskError(f"{at}: only 'COPY SOURCE DEST' of one file or folder is read")
            if op == "ADD" and re.match(r"^\w+://", words[0]):
                raise TaskError(f"{at}: ADD of a URL downloads; the sandbox has no network")
            dest = (
                words[1] if words[1].startswith("/") else f"{plan.workdir.rstrip('/')}/{words[1]}"
            )
            plan.steps.append(("copy", words[0], dest))
        elif op in ("CMD", "ENTRYPOINT"):
            if _command_words(rest) - _SHELLS:
                raise TaskError(
                    f"{at}: {rest[:60]!r} starts a program with the container; a shell task's "
                    "system has no init (start it in a RUN of the setup instead)"
                )
        elif op not in _IGNORED:
            raise TaskError(
                f"{at}: not supported here (FROM, RUN, WORKDIR, COPY, ADD of files, and a shell "
                "as CMD are)"
            )
    if not plan.image:
        raise TaskError(f"{where}: no FROM line")
    return plan


def _command_words(rest: str) -> set[str]:
    rest = rest.strip()
    if rest.startswith("["):
        return {w.strip(' "') for w in rest.strip("[]").split(",") if w.strip(' "')}
    return set(rest.split())


def missing_packages(packages: list[str]) -> list[str]:
    """The packages not installed on this machine (whose ``/usr`` is the sandbox's root)."""
    if not packages:
        return []
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package} ${Status}\\n", *packages],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    installed = {
        line.split()[0].split(":")[0]
        for line in out.splitlines()
        if line.endswith("install ok installed")
    }
    return [p for p in packages if p not in installed]


def downloads_in(script: str) -> str | None:
    """The first command of ``script`` that would download (curl, pip, uv, apt...), if any."""
    for line in script.splitlines():
        code = line.split("#", 1)[0]
        found = _DOWNLOADS.search(" " + code + " ")
        if found:
            return found[1]
    return None


def map_paths(text: str, workdir: str) -> str:
    """``text`` with Harbor's fixed paths moved where referee has them: the image's
    ``workdir`` to ``/workspace``, ``/tests``, ``/solution`` and ``/logs`` under
    :data:`CHECK_ROOT`."""
    for path, to in (
        ("/logs", f"{CHECK_ROOT}/logs"),
        ("/tests", f"{CHECK_ROOT}/tests"),
        ("/solution", f"{CHECK_ROOT}/solution"),
    ):
        text = re.sub(rf"(?<![\w./-]){re.escape(path)}(?![\w.-])", to, text)
    if workdir not in ("/", "/workspace"):
        text = re.sub(
            rf"(?<![\w./-]){re.escape(workdir.rstrip('/'))}(?![\w.-])", "/workspace", text
        )
    return text


def strip_canary(text: str) -> str:
    """The instruction without its leading canary comment lines (as Harbor shows it)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines) and _CANARY.match(lines[i].strip()):
        i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    return "\n".join(lines[i:])
