"""The audit queue: filling from alerts and flags plus a random share, order, labels, quarantine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from referee.errors import ConfigError
from referee.rollout.trajectory import Trajectory, Turn
from referee.tasks.model import Task
from referee.track import TrackStore
from referee.track.audit import (
    LABELS,
    RANDOM,
    AuditQueue,
    alerts_for,
    exclude_quarantined,
    normalize_label,
    quarantined_task_ids,
)
from referee.verify.verdict import Flag, Verdict
from referee.verify.verdict import TestOutcome as Outcome


def trajectory(
    i: int,
    *,
    run_id: str = "r1",
    task_id: str | None = None,
    verifier: str = "function-v1",
    flagged: bool = False,
    passed: bool = True,
) -> Trajectory:
    task = task_id or f"demo/t{i % 5}-v1"
    return Trajectory(
        id=f"t{i:03d}",
        run_id=run_id,
        task_id=task,
        policy="scripted",
        env="code",
        step=i // 5,
        turns=[Turn(index=0, assistant={"role": "assistant", "content": "return a + b"})],
        verdict=Verdict(
            task_id=task,
            reward=1.0 if passed else 0.0,
            passed=passed,
            tests=[Outcome(name="test_add", status="passed" if passed else "failed")],
            flags=[Flag(kind="exit-call", evidence="sys.exit(0)")] if flagged else [],
            verifier=verifier,
        ),
    )


def filled(path: Path) -> TrackStore:
    s = TrackStore(path)
    s.start_run("r1", {})
    s.log_trajectories([trajectory(i, flagged=i == 7) for i in range(40)])
    s.log_alert("r1", "reward_heldout_gap", 3, "critical", "train up, held-out flat", {}, ["t011"])
    s.log_alert("r1", "identical_outputs", 4, "warning", "same output", {"share": 1.0},
                ["t020", "t021", "t011", "not-a-trajectory"])  # fmt: skip
    return s


@pytest.fixture
def store(tmp_path: Path) -> TrackStore:
    return filled(tmp_path / "run")


def test_fill_enqueues_every_alerted_and_flagged_trajectory_then_a_random_share(store):
    queue = AuditQueue(store, random_share=0.25, seed=1)
    result = queue.fill("r1")
    items = store.audit_items(run_id="r1")
    reasons = {i.trajectory_id: i.reason for i in items}
    # The first alert naming a trajectory gives its reason; an id the store lacks is skipped.
    assert reasons["t011"] == "reward_heldout_gap"
    assert reasons["t020"] == reasons["t021"] == "identical_outputs"
    assert reasons["t007"] == "flag:exit-call"
    assert "not-a-trajectory" not in reasons
    assert result.flagged == 4
    # A quarter of the 36 trajectories nothing named, sampled at random.
    assert result.random == 9 == sum(r == RANDOM for r in reasons.values())
    assert len(items) == len(reasons) == 13  # no trajectory twice


def test_fill_is_seeded_and_does_not_duplicate_when_called_again(store, tmp_path):
    queue = AuditQueue(store, random_share=0.25, seed=1)
    queue.fill("r1")
    again = queue.fill("r1")
    assert (again.flagged, again.random) == (0, 0)
    assert len(store.audit_items(run_id="r1")) == 13
    # The same seed over the same data draws the same sample; another seed, another one.
    picks = {i.trajectory_id for i in store.audit_items() if i.reason == RANDOM}
    other = filled(tmp_path / "other")
    AuditQueue(other, random_share=0.25, seed=1).fill("r1")
    assert {i.trajectory_id for i in other.audit_items() if i.reason == RANDOM} == picks
    third = filled(tmp_path / "third")
    AuditQueue(third, random_share=0.25, seed=2).fill("r1")
    assert {i.trajectory_id for i in third.audit_items() if i.reason == RANDOM} != picks


def test_fill_tops_the_random_sample_up_as_the_run_grows(store):
    queue = AuditQueue(store, random_share=0.25, seed=0, max_random=100)
    assert queue.fill("r1").random == 9
    store.log_trajectories([trajectory(i) for i in range(40, 80)])
    assert queue.fill("r1").random == 10  # round(0.25 * 76) = 19 in all
    assert AuditQueue(store, random_share=1.0, max_random=20).fill("r1").random == 1


def test_next_gives_flagged_items_before_random_ones(store):
    # Random items enqueued first must still come after the flagged ones.
    store.enqueue_audit("r1", "t030", RANDOM)
    queue = AuditQueue(store, random_share=0.1)
    queue.fill("r1")
    order = [queue.next("r1")]
    while (item := order[-1]) is not None:
        queue.label(item.id, "legitimate")
        order.append(queue.next("r1"))
    reasons = [i.reason for i in order[:-1]]
    assert reasons[:4] == ["reward_heldout_gap", "identical_outputs", "identical_outputs",
                           "flag:exit-call"]  # fmt: skip
    assert set(reasons[4:]) == {RANDOM} and "t030" in {i.trajectory_id for i in order[4:-1]}
    assert queue.next("r1") is None and queue.pending() == []


def test_hack_and_broken_task_quarantine_the_task_broken_verifier_the_verifier(store):
    queue = AuditQueue(store)
    queue.fill("r1")
    item = queue.next("r1")
    assert item is not None and item.trajectory_id == "t011"
    done = queue.label(item.id, "hack", note="exits early", labeller="ada")
    assert done.quarantined == (("task", "demo/t1-v1"),)
    assert done.item.status == "labelled"
    assert (done.label.label, done.label.note, done.label.labeller) == (
        "hack",
        "exits early",
        "ada",
    )
    # By trajectory id as well as by item id; a trajectory never queued gets a manual item.
    assert queue.label("t002", "broken-task").quarantined == (("task", "demo/t2-v1"),)
    assert queue.label("t023", "legitimate").quarantined == ()
    assert queue.label("t033", "broken_verifier").quarantined == (("verifier", "function-v1"),)
    assert queue.quarantined_tasks() == {"demo/t1-v1", "demo/t2-v1"}
    assert queue.quarantined_verifiers() == {"function-v1"}
    manual = [i for i in store.audit_items() if i.trajectory_id == "t023"]
    assert [(i.reason, i.status) for i in manual] == [("manual", "labelled")]
    assert [r.label for r in queue.labels()] == ["hack", "broken-task", "legitimate",
                                                 "broken-verifier"]  # fmt: skip


def test_an_unknown_label_names_the_valid_ones_and_records_nothing(store):
    queue = AuditQueue(store)
    with pytest.raises(ConfigError) as e:
        queue.label("t001", "cheating")
    assert "'cheating'" in str(e.value)
    assert all(label in str(e.value) for label in LABELS)
    assert store.labels() == [] and store.audit_items() == []
    assert normalize_label(" Broken Task ") == "broken-task"


def test_labelling_an_unknown_id_says_how_to_find_ids(store):
    with pytest.raises(ConfigError, match=r"no audit item or trajectory 'nope'.*--json"):
        AuditQueue(store).label("nope", "hack")


def test_broken_verifier_needs_a_verifier_name(store):
    store.log_trajectory(trajectory(99, verifier=""))
    with pytest.raises(ConfigError, match=r"no verifier name.*broken-task"):
        AuditQueue(store).label("t099", "broken-verifier")
    assert store.labels() == []


def test_export_labels_writes_one_json_object_per_label(store, tmp_path):
    queue = AuditQueue(store)
    queue.fill("r1")
    queue.label("t011", "hack", note="é漢", labeller="ada")
    queue.label("t002", "legitimate")
    path = tmp_path / "labels.jsonl"
    assert queue.export_labels(path) == 2
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(r["trajectory_id"], r["label"], r["reason"]) for r in rows] == [
        ("t011", "hack", "reward_heldout_gap"),
        ("t002", "legitimate", "manual"),
    ]
    assert rows[0]["note"] == "é漢" and rows[0]["task_id"] == "demo/t1-v1"
    assert rows[0]["verifier"] == "function-v1" and rows[0]["run_id"] == "r1"
    with pytest.raises(ConfigError, match="cannot write the labels"):
        queue.export_labels(tmp_path / "missing-dir" / "labels.jsonl")


def test_exclude_quarantined_drops_quarantined_tasks_and_those_of_quarantined_verifiers(store):
    store.log_trajectory(trajectory(50, task_id="other/x-v1", verifier="pytest-v2"))
    tasks = [Task.create(name=n, prompt="p") for n in
             ("demo/t0-v1", "demo/t1-v1", "other/x-v1", "new/never-seen-v1")]  # fmt: skip
    queue = AuditQueue(store)
    assert exclude_quarantined(tasks, store) == tasks
    queue.label("t001", "broken-task")
    assert [t.id for t in exclude_quarantined(tasks, store)] == [
        "demo/t0-v1", "other/x-v1", "new/never-seen-v1"]  # fmt: skip
    queue.label("t050", "broken-verifier")
    assert quarantined_task_ids(store) == {"demo/t1-v1", "other/x-v1"}
    assert [t.id for t in exclude_quarantined(tasks, store)] == ["demo/t0-v1", "new/never-seen-v1"]


def test_random_sampling_skips_quarantined_tasks(store):
    queue = AuditQueue(store, random_share=1.0)
    queue.label("t001", "broken-task")  # quarantines demo/t1-v1: 8 of the 40 trajectories
    queue.fill("r1")
    sampled = [i for i in store.audit_items() if i.reason == RANDOM]
    assert sampled and all(store.trajectory(i.trajectory_id).task_id != "demo/t1-v1"
                           for i in sampled)  # fmt: skip


def test_alerts_for_and_bad_settings(store):
    assert [a.detector for a in alerts_for(store, "t011")] == [
        "reward_heldout_gap", "identical_outputs"]  # fmt: skip
    with pytest.raises(ConfigError, match="random_share"):
        AuditQueue(store, random_share=1.5)
    with pytest.raises(ConfigError, match="max_random"):
        AuditQueue(store, max_random=-1)


# --- `referee audit` and the terminal review --------------------------------------------------


def cli(*args: str):
    from typer.testing import CliRunner

    from referee.cli import app

    return CliRunner().invoke(app, ["audit", *args])


def test_cli_fill_next_label_and_export(store, tmp_path):
    run = str(store.run_dir)
    filled = cli("--run", run, "--fill", "--random-share", "0.25", "--seed", "1", "--json")
    assert filled.exit_code == 0, filled.output
    assert json.loads(filled.stdout.splitlines()[-1])["filled"] == {
        "r1": {"flagged": 4, "random": 9}
    }
    shown = cli("--run", run, "--next", "--json")
    assert shown.exit_code == 0, shown.output
    nxt = json.loads(shown.stdout)["next"]
    assert nxt["item"]["trajectory_id"] == "t011" and nxt["pending"] == 13
    assert [a["detector"] for a in nxt["alerts"]] == ["reward_heldout_gap", "identical_outputs"]
    assert nxt["trajectory"]["verdict"]["tests"][0]["name"] == "test_add"
    labelled = cli("--run", run, "--label", "hack", "--id", nxt["item"]["id"], "--note", "n",
                   "--labeller", "ada", "--json")  # fmt: skip
    assert labelled.exit_code == 0, labelled.output
    assert json.loads(labelled.stdout)["labelled"]["quarantined"] == [["task", "demo/t1-v1"]]
    out = tmp_path / "labels.jsonl"
    exported = cli("--run", run, "--export", str(out))
    assert exported.exit_code == 0 and "wrote 1 labels" in exported.output
    assert json.loads(out.read_text())["label"] == "hack"


def test_cli_fill_says_what_the_queue_holds_not_only_what_it_added(store):
    # issue 20 (11): "queued 0 flagged and 2 random" while 10 items were pending, 8 of them
    # queued earlier by the Tracker's alerts.
    for t in ("t011", "t020", "t021", "t007"):
        store.enqueue_audit("r1", t, "identical_outputs")
    r = cli("--run", str(store.run_dir), "--fill", "--random-share", "0.25", "--seed", "1")
    assert r.exit_code == 0, r.output
    assert "r1: queued 0 flagged and 9 random; 13 pending, 4 of them from alerts" in r.output
    again = cli("--run", str(store.run_dir), "--fill", "--random-share", "0.25", "--json")
    assert "r1: nothing new to queue" in again.output and "13 pending" in again.output
    assert json.loads(again.stdout.splitlines()[-1])["queue"] == {
        "r1": {"pending": 13, "pending_flagged": 4}
    }


def test_cli_fill_says_why_nothing_was_queued_for_trajectories_without_a_run(tmp_path):
    # issue 20 (10): rollouts stored without a run id; --fill printed nothing and exited 0.
    with TrackStore(tmp_path / "run") as s:
        s.log_trajectories([trajectory(i, run_id=None) for i in range(3)])  # type: ignore[arg-type]
    r = cli("--run", str(tmp_path / "run"), "--fill")
    assert r.exit_code == 0, r.output
    assert "nothing to queue" in r.output and "no runs" in r.output
    assert "3 trajectories were stored without a run id" in r.output and "run_id=" in r.output


def test_cli_fill_of_a_run_without_trajectories_says_so(tmp_path):
    with TrackStore(tmp_path / "run") as s:
        s.start_run("empty", {})
    r = cli("--run", str(tmp_path / "run"), "--fill")
    assert "empty: nothing to queue: the run has no trajectories yet" in r.output


def test_cli_refuses_an_export_into_a_folder_that_does_not_exist(store, tmp_path):
    # issue 20 (20): like every --out, checked before the queue is touched
    out = tmp_path / "no" / "labels.jsonl"
    r = cli("--run", str(store.run_dir), "--fill", "--export", str(out))
    assert r.exit_code == 2 and "--export" in r.output and "does not exist" in r.output
    assert not AuditQueue(store).items() and not (tmp_path / "no").exists()


def test_cli_shows_one_trajectory_in_the_terminal(store):
    AuditQueue(store).fill("r1")
    shown = cli("--run", str(store.run_dir))  # stdin is not a terminal: show and exit
    assert shown.exit_code == 0, shown.output
    for text in ("t011", "demo/t1-v1", "reward_heldout_gap", "train up, held-out flat",
                 "test_add", "return a + b", "legitimate, hack"):  # fmt: skip
        assert text in shown.stdout, text


def test_cli_errors_name_the_problem_and_the_fix(store, tmp_path):
    missing = cli("--run", str(tmp_path / "nowhere"))
    assert missing.exit_code == 2 and "no track store" in missing.output
    assert "TrackStore(run_dir)" in missing.output and "--run" in missing.output
    bad = cli("--run", str(store.run_dir), "--label", "cheat", "--id", "t001")
    assert bad.exit_code == 2 and "legitimate, hack, broken-task, broken-verifier" in bad.output
    no_id = cli("--run", str(store.run_dir), "--label", "hack")
    assert no_id.exit_code == 2 and "--id" in no_id.output
    empty = cli("--run", str(store.run_dir), "--next")
    assert empty.exit_code == 0 and "--fill" in empty.output
    unknown_run = cli("--run", str(store.run_dir), "--run-id", "r9", "--next")
    assert unknown_run.exit_code == 2 and "no run 'r9'" in unknown_run.output


def test_review_asks_for_labels_one_item_at_a_time(store):
    from rich.console import Console

    from referee.ui.terminal import review

    queue = AuditQueue(store, random_share=0.0)
    queue.fill("r1")  # t011, t020, t021, t007
    answers = iter(["x", "2", "exits early", "s", "legitimate", "", "q"])
    console = Console(record=True, width=100)
    assert review(queue, console, lambda _: next(answers), run_id="r1", labeller="ada") == 2
    text = console.export_text()
    assert "unknown audit label 'x'" in text and "quarantined task demo/t1-v1" in text
    labels = {r.trajectory_id: (r.label, r.note, r.labeller) for r in store.labels()}
    assert labels == {"t011": ("hack", "exits early", "ada"), "t021": ("legitimate", "", "ada")}
    assert [i.trajectory_id for i in queue.pending("r1")] == ["t020", "t007"]  # skipped stays


def test_cli_json_lists_every_pending_item_with_its_id(store):
    queue = AuditQueue(store, random_share=0.25, seed=1)
    queue.fill("r1")
    shown = cli("--run", str(store.run_dir), "--json")
    assert shown.exit_code == 0, shown.output
    out = json.loads(shown.stdout)
    pending = queue.pending()
    assert [i["id"] for i in out["pending"]] == [i.id for i in pending]  # all, not one
    assert {i["trajectory_id"] for i in out["pending"]} == {i.trajectory_id for i in pending}
    last = out["pending"][-1]
    labelled = cli("--run", str(store.run_dir), "--label", "legitimate", "--id", last["id"])
    assert labelled.exit_code == 0, labelled.output
    # What `--json` lists, as the error for an unknown id tells: its help says the same.
    import typer

    from referee.cli import app

    audit = typer.main.get_command(app).commands["audit"]  # type: ignore[attr-defined]
    help_text = next(p.help for p in audit.params if "--json" in p.opts)
    assert "every pending item with its id" in help_text
    with pytest.raises(ConfigError, match="--json` lists the pending items"):
        queue.label("no-such-id", "hack")


def test_cli_shows_whole_ids_at_80_columns(tmp_path):
    import uuid

    s = TrackStore(tmp_path / "run")
    s.start_run("train-20250101-120000-grpo", {})
    long = trajectory(
        1,
        run_id="train-20250101-120000-grpo",
        task_id="synth/minilib/bugfix-minilib-textutil.py-normalize_whitespace-v1",
    )
    long = long.model_copy(update={
        "id": uuid.uuid4().hex, "policy": "local:runs/train-20250101-120000/model-rl#cpu"
    })  # fmt: skip
    s.log_trajectories([long])
    AuditQueue(s, random_share=1.0).fill("train-20250101-120000-grpo")
    item = AuditQueue(s).next()
    from typer.testing import CliRunner

    from referee.cli import app

    shown = CliRunner().invoke(app, ["audit", "--run", str(s.run_dir), "--next"],
                               env={"COLUMNS": "80"})  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert "…" not in shown.stdout
    for text in (long.id, item.id, long.task_id, long.policy, "train-20250101-120000-grpo"):
        assert text in shown.stdout, text
    s.close()


def test_cli_label_records_the_login_name_when_user_is_unset(store):
    import pwd

    AuditQueue(store).fill("r1")
    from typer.testing import CliRunner

    from referee.cli import app

    env = {"USER": None, "LOGNAME": None, "LNAME": None, "USERNAME": None}
    r = CliRunner().invoke(app, ["audit", "--run", str(store.run_dir), "--label", "legitimate",
                                 "--id", "t011"], env=env)  # fmt: skip
    assert r.exit_code == 0, r.output
    (label,) = store.labels()
    assert label.labeller == pwd.getpwuid(os.getuid()).pw_name != ""


def test_cli_label_without_any_user_name_asks_for_labeller_and_records_nothing(store, monkeypatch):
    import getpass

    def nobody() -> str:
        raise OSError("No username set in the environment")

    monkeypatch.setattr(getpass, "getuser", nobody)
    r = cli("--run", str(store.run_dir), "--label", "hack", "--id", "t011")
    assert r.exit_code == 2 and "--labeller NAME" in r.output
    assert store.labels() == [] and store.quarantined("task") == set()
    shown = cli("--run", str(store.run_dir), "--next")  # showing needs no name
    assert shown.exit_code == 0, shown.output


def test_cli_takes_the_start_of_an_id_and_lists_the_ids_an_ambiguous_start_fits(store):
    # issue 20 (8): ids shown shortened could not be pasted into `referee audit --id`.
    whole = "0f3a9c1e5b7d4e2f8a6c0b9d1e3f5a7c"
    store.log_trajectory(trajectory(99).model_copy(update={"id": whole}))
    shown = cli("--run", str(store.run_dir), "--id", whole[:10])
    assert shown.exit_code == 0, shown.output
    assert whole in shown.output
    done = cli("--run", str(store.run_dir), "--label", "legitimate", "--id", whole[:8],
               "--labeller", "qa")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert [lab.trajectory_id for lab in store.labels()] == [whole]
    ambiguous = cli("--run", str(store.run_dir), "--label", "hack", "--id", "t01")
    assert ambiguous.exit_code == 2
    line = " ".join(ambiguous.output.split())
    assert "'t01' is the start of several" in line and "t010, t011" in line and "..." in line
    assert len(store.labels()) == 1  # refused before anything was written
