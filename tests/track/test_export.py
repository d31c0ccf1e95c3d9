"""Exports: JSONL and Parquet of trajectories, TRL / veRL / SkyRL dataset rows, ``referee export``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import ConfigError, StoreError
from referee.rollout.sink import read_jsonl
from referee.tasks.model import Task
from referee.track import (
    EXPORT_FORMATS,
    TrackStore,
    export_jsonl,
    export_parquet,
    export_run,
    rl_prompt_rows,
    sft_rows,
    skyrl_rows,
    verl_rows,
    write_dataset,
)
from tests.track.test_store import make_trajectory

# A task's hidden data: it never reaches a dataset file, except a veRL training row's
# extra_info.referee_task (the reward's copy of the task, never shown to the model).
SECRET = "hidden-reference-7f3a"


def _task(name: str, split: str = "train") -> Task:
    return Task.create(
        name=name,
        prompt=[
            {"role": "system", "content": "You write Python."},
            {"role": "user", "content": f"Solve {name}."},
        ],
        hidden={"reference": SECRET},
        split=split,
    )


TASKS = [_task("demo/add-v1"), _task("demo/mul-v1"), _task("demo/held-v1", split="heldout")]


@pytest.fixture
def store(tmp_path: Path):
    with TrackStore(tmp_path / "run", artifact_threshold=1_000) as s:
        s.add_tasks(TASKS)
        s.log_trajectories(
            [
                make_trajectory(0),  # multi-turn with a tool call: passes
                make_trajectory(1, tool=False),  # single turn: passes
                make_trajectory(2, reward=0.5),  # fails
                make_trajectory(3, flags=True),  # passes, but flagged as a hack
                make_trajectory(4, task_id="demo/held-v1", split="heldout"),  # held-out
                make_trajectory(5, error=True),  # infrastructure error
                make_trajectory(6, task_id="demo/mul-v1", observation="o" * 5_000),  # artifact
                make_trajectory(7, run_id="r2", tool=False),
            ]
        )
        yield s


# --- trajectories ---------------------------------------------------------------------------


def test_jsonl_export_is_the_rollout_format_and_imports_back(store: TrackStore, tmp_path: Path):
    out = tmp_path / "all.jsonl"
    assert export_jsonl(store, out) == 8
    back = read_jsonl(out)
    assert back == store.trajectories()
    assert "o" * 5_000 in out.read_text()  # artifacts inlined: the file stands alone
    assert export_jsonl(store, tmp_path / "r2.jsonl", run_id="r2") == 1
    with TrackStore(tmp_path / "copy") as copy:
        assert copy.import_jsonl(out) == 8
        assert copy.trajectories() == back


def test_parquet_export_is_one_flat_row_per_trajectory(store: TrackStore, tmp_path: Path):
    out = tmp_path / "all.parquet"
    assert export_parquet(store, out, run_id="r1") == 7
    ds = Dataset.from_parquet(str(out))
    assert len(ds) == 7
    assert {"id", "run_id", "task_id", "step", "reward", "passed", "n_turns", "json"} <= set(
        ds.column_names
    )
    rows = {r["id"]: r for r in ds}
    assert rows["traj-2"]["reward"] == 0.5 and rows["traj-2"]["passed"] is False
    assert rows["traj-5"]["reward"] is None and rows["traj-5"]["error_kind"] == "infra"
    assert rows["traj-0"]["n_turns"] == 2 and rows["traj-0"]["tool_calls"] == 1
    full = json.loads(rows["traj-6"]["json"])
    assert full["turns"][0]["observations"][0]["content"] == "o" * 5_000
    assert [r["id"] for r in ds] == [t.id for t in store.trajectories(run_id="r1")]


def test_an_empty_parquet_export_still_has_its_columns(tmp_path: Path):
    with TrackStore(tmp_path / "empty") as s:
        assert export_parquet(s, tmp_path / "e.parquet") == 0
    import pyarrow.parquet as pq

    # (datasets cannot load a table of no rows; pyarrow reads it.)
    table = pq.read_table(tmp_path / "e.parquet")
    assert table.num_rows == 0 and {"id", "reward", "json"} <= set(table.column_names)


# --- SFT --------------------------------------------------------------------------------------


def test_sft_rows_keep_only_clean_successes_of_the_train_split(store: TrackStore):
    rows = sft_rows(store, run_id="r1")
    # Not the failure (2), the flagged pass (3), the held-out task (4), the infra error (5).
    assert [r["trajectory_id"] for r in rows] == ["traj-0", "traj-1", "traj-6"]
    assert [r["trajectory_id"] for r in sft_rows(store, run_id="r1", min_reward=0.5)] == [
        "traj-0", "traj-1", "traj-2", "traj-6",
    ]  # fmt: skip
    assert "traj-3" in {r["trajectory_id"] for r in sft_rows(store, include_flagged=True)}
    # A trajectory that claims the train split on a held-out task is still left out.
    store.log_trajectory(make_trajectory(9, task_id="demo/held-v1", split="train"))
    assert "traj-9" not in {r["trajectory_id"] for r in sft_rows(store)}
    store.quarantine("task", "demo/mul-v1", "broken tests")
    assert [r["trajectory_id"] for r in sft_rows(store, run_id="r1")] == ["traj-0", "traj-1"]
    store.quarantine("verifier", "function-v1", "lets exit() through")
    assert sft_rows(store) == []


def test_sft_messages_are_the_conversation_in_hugging_face_form(store: TrackStore):
    row = next(r for r in sft_rows(store) if r["trajectory_id"] == "traj-0")
    roles = [m["role"] for m in row["messages"]]
    # prompt, the tool call, its result, the answer; the final feedback is left out.
    assert roles == ["user", "assistant", "tool", "assistant"]
    call = row["messages"][1]["tool_calls"][0]
    assert call["function"] == {"name": "run_python", "arguments": {"code": "print(1+2)"}}
    assert row["messages"][2] == {
        "role": "tool", "content": "3\n", "name": "run_python", "tool_call_id": "call-0",
    }  # fmt: skip
    assert row["messages"][3]["content"].startswith("def add")
    assert row["task_id"] == "demo/add-v1"


def test_sft_messages_survive_parquet_and_jsonl(store: TrackStore, tmp_path: Path):
    rows = sft_rows(store, run_id="r1")
    for name, load in (("sft.parquet", Dataset.from_parquet), ("sft.jsonl", Dataset.from_json)):
        assert write_dataset(rows, tmp_path / name) == 3
        ds = load(str(tmp_path / name))
        assert ds.column_names == ["messages", "task_id", "trajectory_id"]
        assert ds["trajectory_id"] == ["traj-0", "traj-1", "traj-6"]
        first = ds[0]["messages"]
        assert first[1]["tool_calls"][0]["function"]["arguments"] == {"code": "print(1+2)"}
        assert first[3]["content"] == rows[0]["messages"][3]["content"]
        assert ds[1]["messages"] and ds[1]["messages"][-1]["role"] == "assistant"


def test_sft_prompt_completion_rows_for_single_turn_episodes(store: TrackStore, tmp_path: Path):
    [row] = sft_rows(store, run_id="r2", format="prompt-completion")
    assert row["prompt"] == [{"role": "user", "content": "Write add(a, b)."}]
    assert row["completion"] == [
        {"role": "assistant", "content": "def add(a, b):\n    return a + b\n"}
    ]
    write_dataset([row], tmp_path / "pc.parquet")
    ds = Dataset.from_parquet(str(tmp_path / "pc.parquet"))
    assert ds[0]["completion"][0]["content"].startswith("def add")
    with pytest.raises(ConfigError, match=r"single-turn.*format='messages'"):
        sft_rows(store, run_id="r1", format="prompt-completion")
    with pytest.raises(ConfigError, match="'messages' or 'prompt-completion'"):
        sft_rows(store, format="chat")  # type: ignore[arg-type]


def test_sft_takes_the_task_prompt_when_the_trajectory_has_none(tmp_path: Path):
    with TrackStore(tmp_path / "run") as s:
        s.add_tasks(TASKS)
        s.log_trajectory(make_trajectory(0, tool=False).model_copy(update={"messages": []}))
        [row] = sft_rows(s)
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
    assert row["messages"][1]["content"] == "Solve demo/add-v1."


def test_trls_sft_trainer_prepares_the_rows_and_learns_only_the_assistant_turns(
    store: TrackStore, tmp_path: Path
):
    """The rows as TRL's SFTTrainer reads them: chat template, tool calls, loss mask."""
    pytest.importorskip("trl")
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # all local; never wait on the Hub
    import trl
    from trl import SFTConfig, SFTTrainer

    from referee.experiments.listops.tiny import TinyConfig, tiny_model, train_tokenizer

    write_dataset(sft_rows(store, run_id="r1"), tmp_path / "sft.parquet")
    template = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()
    tok = train_tokenizer([template, "def add(a, b):\n    return a + b\n"] * 4, vocab_size=400)
    tok.add_special_tokens(
        {"additional_special_tokens": ["<tool_call>", "</tool_call>", "<tool_response>",
                                       "</tool_response>"]}
    )  # fmt: skip
    tok.chat_template = template
    model = tiny_model(tok, TinyConfig(hidden=32, layers=2, heads=4, ffn=64, max_positions=1024))
    args = SFTConfig(
        output_dir=str(tmp_path / "out"), max_steps=1, use_cpu=True, report_to="none",
        assistant_only_loss=True, save_strategy="no", disable_tqdm=True, bf16=False,
    )  # fmt: skip
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_parquet(str(tmp_path / "sft.parquet")),
        processing_class=tok,
    )
    example = trainer.train_dataset[0]
    text = tok.decode(example["input_ids"])
    assert '{"name": "run_python", "arguments": {"code": "print(1+2)"}}' in text
    assert "<tool_response>\n3\n" in text and "Write add(a, b)." in text
    learned = tok.decode([i for i, lab in zip(example["input_ids"], example["labels"],
                                              strict=True) if lab != -100])  # fmt: skip
    assert "run_python" in learned and "return a + b" in learned
    assert "Write add(a, b)." not in learned and "<tool_response>" not in learned


# --- RL prompts ---------------------------------------------------------------------------------


def _load(rows: list[dict[str, Any]], path: Path) -> Dataset:
    write_dataset(rows, path)
    public = [{**r, "extra_info": {**r.get("extra_info", {}), "referee_task": ""}} for r in rows]
    assert SECRET not in json.dumps(public)
    if all("referee_task" not in r.get("extra_info", {}) for r in rows):
        assert SECRET not in path.read_bytes().decode("utf-8", "replace")
    return (
        Dataset.from_parquet(str(path))
        if path.suffix == ".parquet"
        else Dataset.from_json(str(path))
    )


def test_trl_rl_rows_are_prompts_and_task_ids_of_the_train_split(store: TrackStore, tmp_path):
    rows = rl_prompt_rows(store)
    assert [r["task_id"] for r in rows] == ["demo/add-v1", "demo/mul-v1"]
    assert rows == rl_prompt_rows(TASKS)
    ds = _load(rows, tmp_path / "trl.jsonl")
    assert ds.column_names == ["prompt", "task_id"]
    assert ds[0]["prompt"] == [
        {"role": "system", "content": "You write Python."},
        {"role": "user", "content": "Solve demo/add-v1."},
    ]
    assert [r["task_id"] for r in rl_prompt_rows(store, split="heldout")] == ["demo/held-v1"]
    # Only the tasks a run used.
    assert [r["task_id"] for r in rl_prompt_rows(store, run_id="r1")] == [
        "demo/add-v1", "demo/mul-v1",
    ]  # fmt: skip
    with pytest.raises(ConfigError, match="'train' or 'heldout'"):
        rl_prompt_rows(store, split="all")


def test_verl_rows_have_verls_schema(store: TrackStore, tmp_path: Path):
    ds = _load(verl_rows(store, agent_name="referee_agent"), tmp_path / "verl.parquet")
    assert set(ds.column_names) == {
        "data_source", "prompt", "ability", "reward_model", "extra_info", "agent_name",
    }  # fmt: skip
    row = ds[1]
    assert row["data_source"] == "referee/code" and row["ability"] == "code"
    assert row["reward_model"] == {"style": "rule", "ground_truth": "demo/mul-v1"}
    task = Task.model_validate_json(row["extra_info"].pop("referee_task"))
    assert task == TASKS[1]  # the reward's copy of the task (referee.train.verl)
    assert row["extra_info"] == {"index": 1, "task_id": "demo/mul-v1", "split": "train"}
    assert row["prompt"][1] == {"role": "user", "content": "Solve demo/mul-v1."}
    val = verl_rows(store, split="heldout", data_source="mine")
    assert [(r["data_source"], r["extra_info"]["split"]) for r in val] == [("mine", "heldout")]
    assert "agent_name" not in val[0] and SECRET not in json.dumps(val)  # held out: no tests


def test_skyrl_rows_have_skyrls_schema(store: TrackStore, tmp_path: Path):
    ds = _load(skyrl_rows(store, env_class="referee_code"), tmp_path / "skyrl.parquet")
    assert set(ds.column_names) == {
        "data_source", "prompt", "env_class", "reward_spec", "extra_info",
    }  # fmt: skip
    row = ds[0]
    assert row["env_class"] == "referee_code"
    assert row["reward_spec"] == {"method": "rule", "ground_truth": "demo/add-v1"}
    assert row["extra_info"] == {"index": 0, "task_id": "demo/add-v1", "split": "train"}


def test_rl_rows_need_recorded_tasks(tmp_path: Path):
    with TrackStore(tmp_path / "bare") as s, pytest.raises(StoreError, match="add_tasks"):
        verl_rows(s)


def test_write_dataset_wants_a_known_suffix_and_uniform_columns(tmp_path: Path):
    with pytest.raises(ConfigError, match=r"\*\.parquet or \*\.jsonl"):
        write_dataset([{"a": 1}], tmp_path / "rows.csv")
    with pytest.raises(StoreError, match=r"mix types.*jsonl"):
        write_dataset([{"a": 1}, {"a": [1, 2]}], tmp_path / "rows.parquet")
    assert not (tmp_path / "rows.parquet").exists()
    assert not list(tmp_path.glob("*.tmp"))


def test_export_run_dispatches_and_names_the_formats(store: TrackStore, tmp_path: Path):
    # Parquet goes into a .parquet file (issue 20: a .jsonl name for it is refused, below).
    def name(f: str) -> Path:
        return tmp_path / f"out-{f}.{'parquet' if f == 'parquet' else 'jsonl'}"

    counts = {f: export_run(store, f, name(f)).rows for f in EXPORT_FORMATS}
    assert counts == {"jsonl": 8, "parquet": 8, "trl-sft": 4, "trl-rl": 2, "verl": 2, "skyrl": 2}
    with pytest.raises(ConfigError, match="jsonl, parquet, trl-sft, trl-rl, verl, skyrl"):
        export_run(store, "csv", tmp_path / "x.csv")


def test_exports_go_to_s3_whole(store: TrackStore, tmp_path: Path, s3):
    bucket, _ = s3
    from tests.s3 import s3fs_now

    for fmt, name in (("jsonl", "all.jsonl"), ("parquet", "all.parquet"), ("verl", "v.parquet")):
        export_run(store, fmt, f"s3://{bucket}/exports/{name}")
        s3fs_now().get_file(f"{bucket}/exports/{name}", str(tmp_path / name))
    assert len(list(read_jsonl(tmp_path / "all.jsonl"))) == 8
    assert len(Dataset.from_parquet(str(tmp_path / "all.parquet"))) == 8
    assert len(Dataset.from_parquet(str(tmp_path / "v.parquet"))) == 2
    rows = [{"a": 1}, {"a": "mixed"}]  # refused before anything is uploaded
    with pytest.raises(StoreError, match="mix types"):
        write_dataset(rows, f"s3://{bucket}/exports/bad.parquet")
    assert sorted(s3fs_now().ls(f"{bucket}/exports", detail=False)) == [
        f"{bucket}/exports/{n}" for n in ("all.jsonl", "all.parquet", "v.parquet")
    ]


def test_referee_export_to_s3_and_to_a_bucket_that_does_not_exist(store: TrackStore, s3):
    bucket, _ = s3
    args = ["export", "--run", str(store.run_dir), "--format", "trl-rl", "--json", "--out"]
    done = CliRunner().invoke(app, [*args, f"s3://{bucket}/rl.jsonl"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["out"] == f"s3://{bucket}/rl.jsonl"
    from referee.storage import read_bytes

    assert len(read_bytes(f"s3://{bucket}/rl.jsonl").splitlines()) == 2
    refused = CliRunner().invoke(app, [*args, "s3://no-such-bucket-referee/rl.jsonl"])
    assert refused.exit_code == 2, refused.output
    assert "--out s3://no-such-bucket-referee/rl.jsonl: the bucket" in refused.output


# --- the CLI ------------------------------------------------------------------------------------


def test_referee_export_writes_and_reports(store: TrackStore, tmp_path: Path):
    out = tmp_path / "verl.parquet"
    args = ["export", "--run", str(store.run_dir), "--format", "verl", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "format": "verl", "out": str(out), "rows": 2, "run_id": None, "left_out": {"heldout": 1},
    }  # fmt: skip
    assert len(Dataset.from_parquet(str(out))) == 2
    sft = tmp_path / "sft.jsonl"
    result = CliRunner().invoke(
        app, ["export", "--run", str(store.run_dir), "--format", "trl-sft", "--out", str(sft),
              "--run-id", "r2", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0 and json.loads(result.stdout)["rows"] == 1


def test_referee_export_errors_name_the_fix(store: TrackStore, tmp_path: Path):
    out = str(tmp_path / "x.jsonl")
    bad = CliRunner().invoke(
        app, ["export", "--run", str(store.run_dir), "--format", "csv", "--out", out]
    )
    assert bad.exit_code == 2
    assert "jsonl, parquet, trl-sft, trl-rl, verl, skyrl" in bad.output
    missing = CliRunner().invoke(
        app, ["export", "--run", str(tmp_path / "nowhere"), "--format", "jsonl", "--out", out]
    )
    assert missing.exit_code == 2 and "no track store" in missing.output
    assert not (tmp_path / "nowhere").exists()  # an export never creates a store


def test_an_unknown_run_id_is_not_found_like_audit_says(store: TrackStore, tmp_path: Path):
    # issue 20 (5): `export --run-id nope` wrote 0 rows and exited 0.
    from referee.errors import NotFoundError
    from referee.track.export import export_jsonl, select_tasks

    out = tmp_path / "x.jsonl"
    for fmt in ("jsonl", "parquet", "trl-sft", "trl-rl"):
        name = out.with_suffix(".parquet" if fmt == "parquet" else ".jsonl")
        r = CliRunner().invoke(
            app, ["export", "--run", str(store.run_dir), "--format", fmt, "--out", str(name),
                  "--run-id", "nope"],
        )  # fmt: skip
        assert r.exit_code == 2, (fmt, r.output)
        assert r.output.startswith("referee: no run 'nope' in "), r.output
        assert not name.exists()
    with pytest.raises(NotFoundError, match="no run 'nope'"):
        export_jsonl(store, out, run_id="nope")
    with pytest.raises(NotFoundError, match="no run 'nope'"):
        select_tasks(store, run_id="nope")
    with pytest.raises(NotFoundError, match="no run 'nope'"):
        sft_rows(store, run_id="nope")
    assert export_jsonl(store, out, run_id="r2") == 1  # known by its trajectories alone


def test_referee_export_refuses_an_out_folder_that_does_not_exist(store: TrackStore, tmp_path):
    # issue 20 (20): export made the folder; every other --out is refused there.
    out = tmp_path / "no" / "dir" / "x.jsonl"
    r = CliRunner().invoke(
        app, ["export", "--run", str(store.run_dir), "--format", "jsonl", "--out", str(out)]
    )
    assert r.exit_code == 2
    assert r.output.strip() == (
        f"referee: --out {out}: the folder {out.parent} does not exist; create it first"
    )
    assert not (tmp_path / "no").exists()


def test_a_folder_without_a_store_is_one_clean_sentence(tmp_path: Path):
    # issue 20 (20): "... is X a run folder?; a run tracked with ..." read as two glued halves.
    folder = tmp_path / "nowhere"
    r = CliRunner().invoke(
        app,
        ["export", "--run", str(folder), "--format", "jsonl", "--out", str(tmp_path / "x.jsonl")],
    )
    line = " ".join(r.output.split())
    assert r.exit_code == 2 and line == (
        f"referee: --run {folder} is not a run folder: no track store at "
        f"{folder / 'track.sqlite'}; pass the folder a run recorded into (`referee train` "
        "makes runs/train-<time>; TrackStore(run_dir) writes track.sqlite into run_dir)"
    )
    assert "?;" not in line


def test_rl_exports_leave_out_quarantined_and_canary_tasks_and_count_them(
    store: TrackStore, tmp_path: Path
):
    from referee.track.canary import make_canaries

    [canary] = make_canaries(1, seed=0)
    store.add_tasks([canary])
    store.quarantine("task", "demo/mul-v1", "labelled hack")
    for fmt in ("trl-rl", "verl", "skyrl"):
        out = tmp_path / f"{fmt}.jsonl"
        done = export_run(store, fmt, out)
        assert done.left_out == {"heldout": 1, "quarantined": 1, "canary": 1}
        ids = [json.loads(line) for line in out.read_text().splitlines()]
        assert done.rows == len(ids) == 1 and "demo/add-v1" in json.dumps(ids[0])
        assert "demo/mul-v1" not in out.read_text() and canary.id not in out.read_text()
    assert [r["task_id"] for r in rl_prompt_rows(store)] == ["demo/add-v1"]
    assert [r["task_id"] for r in rl_prompt_rows([*TASKS, canary])] == [
        "demo/add-v1",
        "demo/mul-v1",
    ]
    result = CliRunner().invoke(
        app, ["export", "--run", str(store.run_dir), "--format", "verl", "--out",
              str(tmp_path / "v.parquet")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "left out 1 held-out, 1 quarantined, 1 canary tasks" in " ".join(result.output.split())


def test_sft_rows_leave_out_canary_successes(tmp_path: Path):
    from referee.track.canary import make_canaries

    [canary] = make_canaries(1, seed=0)
    with TrackStore(tmp_path / "run") as s:
        s.add_tasks([*TASKS, canary])
        s.log_trajectories([make_trajectory(0, tool=False), make_trajectory(1, task_id=canary.id)])
        assert [r["task_id"] for r in sft_rows(s)] == ["demo/add-v1"]


@pytest.mark.parametrize(("fmt", "name", "message"), [
    ("parquet", "x.jsonl", "--format parquet writes parquet files, not x.jsonl: name it "
     "x.parquet, or use --format jsonl"),
    ("jsonl", "x.parquet", "--format jsonl writes jsonl or json files, not x.parquet: name it "
     "x.jsonl, or use --format parquet"),
    ("verl", "x.csv", "--format verl writes parquet or jsonl or json files, not x.csv"),
])  # fmt: skip
def test_a_file_name_that_says_another_format_is_refused_before_writing(
    store: TrackStore, tmp_path: Path, fmt: str, name: str, message: str
):
    with pytest.raises(ConfigError, match=re.escape(message)):
        export_run(store, fmt, tmp_path / name)
    result = CliRunner().invoke(
        app, ["export", "--run", str(store.run_dir), "--format", fmt, "--out", str(tmp_path / name)]
    )
    assert result.exit_code == 2 and message in " ".join(result.output.split())
    assert not (tmp_path / name).exists() and not list(tmp_path.glob("*.tmp"))
