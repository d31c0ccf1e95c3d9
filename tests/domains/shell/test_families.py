"""The shell families: registered, seeded and reproducible, with a difficulty knob, and
grading data that says what it should (no sandbox needed here)."""

from __future__ import annotations

import pytest

from referee.domains import family_names, generate_family, get_family
from referee.domains.shell.episode import ShellSpec, script_of
from referee.domains.shell.manifest import Manifest
from referee.domains.shell.permissions import can_read
from referee.domains.shell.service import expected_answer
from referee.errors import TaskError
from referee.tasks.kinds import TaskKind

FAMILIES = [
    "ops-config-fix",
    "ops-idempotent-script",
    "ops-logrotate",
    "ops-permissions",
    "ops-runaway-process",
]


def test_the_five_families_are_registered_under_the_shell_domain():
    assert family_names("shell") == FAMILIES
    assert get_family("ops-logrotate").domain == "shell"


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_is_reproducible_and_its_tasks_are_shell_tasks(family):
    a = generate_family(family, count=3, difficulty=0.5, seed=7)
    b = generate_family(family, count=3, difficulty=0.5, seed=7)
    assert [t.content_hash for t in a] == [t.content_hash for t in b]
    assert len({t.id for t in a}) == 3
    for t in a:
        assert t.kind == TaskKind.SHELL and t.answer_format == "tool-state"
        assert t.provenance.unit and t.provenance.unit.startswith(f"shell:{family}:")
        assert t.hidden["reference"] and t.hidden["checks"]
        spec = ShellSpec.of(t)
        assert "etc/passwd" in spec.read_only
        assert "/workspace" in t.user_prompt


def test_difficulty_adds_faults_distractors_and_noise():
    easy = generate_family("ops-config-fix", count=1, difficulty=0.0, seed=1)[0]
    hard = generate_family("ops-config-fix", count=1, difficulty=1.0, seed=1)[0]
    assert easy.difficulty.features["faults"] == 1 and hard.difficulty.features["faults"] == 4
    hard_files = {f[0] for f in hard.payload["files"]}
    assert {"etc/app/token.old", "etc/app/app.ini.example"} <= hard_files
    spread = generate_family("ops-logrotate", count=11, seed=0)
    assert [t.difficulty.estimate for t in spread] == [i / 10 for i in range(11)]


def test_checks_and_references_stay_out_of_what_the_agent_sees():
    t = generate_family("ops-runaway-process", count=1, difficulty=1.0, seed=0)[0]
    visible = t.user_prompt + str(t.payload)
    assert t.hidden["reference"] not in visible and "max_size" not in visible
    hog = next(c["marker"] for c in t.hidden["checks"] if c["type"] == "process" and not c["alive"])
    assert hog.split("/")[1] not in t.user_prompt


def test_a_task_with_unknown_check_types_is_refused_with_the_field_named():
    t = generate_family("ops-permissions", count=1, difficulty=0.0, seed=0)[0]
    bad = t.revised(hidden={**t.hidden, "checks": [{"type": "vibes"}]})
    with pytest.raises(TaskError, match=r"hidden\.checks entry .* no known type"):
        ShellSpec.of(bad)


def test_script_of_takes_the_last_shell_block():
    text = "```bash\nfirst\n```\nthen\n```sh\nsecond\n```\n```python\nprint()\n```"
    assert script_of(text) == "second\n"
    assert script_of("ls -l\n") == "ls -l\n"


def test_simulated_read_permission_needs_search_on_every_directory():
    users = {"alice": ["alice", "staff"], "bob": ["bob"]}
    owners = {"d": ["root", "staff"], "d/f": ["root", "staff"]}
    ok = {"d": 0o750, "d/f": 0o640}
    assert can_read("alice", "d/f", users=users, owners=owners, modes=ok)
    assert not can_read("bob", "d/f", users=users, owners=owners, modes=ok)
    assert not can_read("bob", "d/f", users=users, owners=owners, modes={**ok, "d/f": 0o644})
    assert can_read("bob", "d/f", users=users, owners=owners, modes={"d": 0o751, "d/f": 0o644})
    assert not can_read("alice", "d/f", users=users, owners=owners, modes={**ok, "d/f": None})


def test_the_manifest_checks_every_program_of_a_command():
    m = Manifest.of(
        {
            "commands": ["ls", "grep", "sh srv/app/start.sh", "find"],
            "writable": ["var/log"],
            "read_only": ["var/log/keep"],
        }
    )
    assert m.command_problem("ls -l | grep x && ls") == ""
    assert m.command_problem("sh srv/app/start.sh") == ""
    assert "sh" in m.command_problem("sh srv/app/start.sh; sh -c id")
    assert "python3" in m.command_problem("ls $(python3 -c 1)")
    assert "rm" in m.command_problem("find . -exec rm {} +")
    assert "kill" in m.command_problem("FOO=1 kill -9 1")
    assert m.may_write("var/log/a.log") and not m.may_write("var/log/keep")
    assert not m.may_write("var/logs") and not m.may_write("etc/passwd")


def test_the_service_answer_names_service_workers_and_token():
    assert expected_answer("billing", 4, "s3cret").startswith("PONG billing workers=4 token=")
