"""The df-pipeline family: the knob adds kinds of dirt, every table holds every form of its
kinds, the reference keeps the contract, a forgotten step fails naming the rule it breaks, and
the family's exploits earn nothing."""

from __future__ import annotations

import random

import pytest

from referee.domains.dataframe.build import build_tasks
from referee.domains.dataframe.datagen import Shape
from referee.domains.dataframe.dirty import KINDS, shipments_csv
from referee.domains.dataframe.execute import run_program
from referee.domains.dataframe.families import draft_for
from referee.domains.dataframe.pipelines import kinds_for, reference
from referee.domains.dataframe.redteam import run_exploits
from referee.domains.dataframe.redteam_pipeline import PIPELINE_EXPLOITS
from referee.domains.dataframe.verifier import DataframeVerifier
from referee.tasks.model import Task


def test_the_knob_sets_how_many_kinds_of_dirt():
    counts = [len(kinds_for(random.Random(s), d / 10)) for d in range(11) for s in range(3)]
    assert counts[:3] == [2, 2, 2] and counts[-3:] == [8, 8, 8]
    assert counts == sorted(counts)
    assert kinds_for(random.Random(1), 1.0) == KINDS  # in cleaning order


def test_every_small_table_holds_every_form_of_its_kinds():
    for seed in range(5):
        text = shipments_csv(random.Random(seed), Shape(rows=14), set(KINDS))
        rows = [line.split(",") for line in text.splitlines()[1:]]
        sites = {r[2] for r in rows}
        weights = " ".join(r[5] for r in rows)
        ship = [r[3] for r in rows]
        assert {"NORTH", "SOUTH", "EAST", "WEST"} & sites and {"N", "S", "E", "W"} & sites
        assert any(s != s.strip() for s in sites)
        assert " g" in weights and " lb" in weights and "" in [r[5] for r in rows]
        assert any("/" in s for s in ship) and any("." in s for s in ship)
        assert any(not s[:1].isdigit() or s.startswith("2024-02-30") or "-13-" in s for s in ship)
        assert any(r[6].endswith(".0") for r in rows) and "" in [r[6] for r in rows]
        ids = [r[0] for r in rows]
        assert len(ids) > len(set(ids))  # repeats and re-sends
        assert any(r[1] != "1" for r in rows)  # a higher version
    clean = shipments_csv(random.Random(0), Shape(rows=14), set())
    assert all(r.split(",")[1] == "1" for r in clean.splitlines()[1:])


@pytest.fixture(scope="module")
def hard_task(df_verifier: DataframeVerifier) -> Task:
    """A task with every kind of dirt."""
    (task,) = build_tasks([draft_for("df-pipeline", 1.0, 7)], df_verifier.sandbox)
    return task


def test_the_reference_passes_and_the_contract_is_declared(
    df_verifier: DataframeVerifier, hard_task: Task
):
    assert df_verifier.verify(hard_task, hard_task.hidden["reference"]).passed
    assert hard_task.payload["contract"]["name"] == "shipments_clean"
    prompt = hard_task.prompt[0].content
    assert "pa.DataFrameSchema(" in prompt and "8. a `delivered_on`" in prompt
    empty = df_verifier.verify(hard_task, "")
    assert empty.reward == 0.0 and empty.infra_error is None


@pytest.mark.parametrize(
    ("skipped", "named"),
    [
        ("duplicates", "contract: shipment_id: duplicate values"),
        ("categories", "contract: site: isin("),
        ("dates", "contract: shipped_on: wrong type, expected datetime, got str"),
        ("missing", "contract: qty:"),
        ("outliers", "contract: weight_kg: in_range(0, 1000) fails"),
        ("cross", "contract: row check delivered_on >= shipped_on fails"),
    ],
)
def test_a_forgotten_step_fails_naming_the_rule_it_breaks(
    df_verifier: DataframeVerifier, hard_task: Task, skipped: str, named: str
):
    v = df_verifier.verify(hard_task, reference(KINDS, skip=skipped))
    assert v.reward == 0.0 and v.infra_error is None
    assert all(named in t.detail for t in v.tests), [t.detail for t in v.tests]


def test_a_wrong_rule_the_contract_cannot_see_is_caught_by_the_comparison(
    df_verifier: DataframeVerifier, hard_task: Task
):
    # Keeping the first listed row of a re-sent shipment, not its highest version: every
    # contract rule holds, the rows differ.
    wrong = str(hard_task.hidden["reference"]).replace(
        's = s.drop_duplicates("shipment_id", keep="last")',
        's = s.sort_index().drop_duplicates("shipment_id", keep="first")',
    )
    assert wrong != hard_task.hidden["reference"]
    v = df_verifier.verify(hard_task, wrong)
    # Every set lists a newer version before an older one: the mistake shows on each.
    assert v.reward == 0.0
    failed = [t.detail for t in v.tests if t.status == "failed"]
    assert failed and not any("contract:" in d for d in failed), failed


def test_pandera_is_importable_in_the_sandbox(df_verifier: DataframeVerifier, hard_task: Task):
    from referee.domains.dataframe.datacontract import render_contract

    checked = (
        render_contract(hard_task.payload["contract"])
        + str(hard_task.hidden["reference"])
        + "\n_clean = transform\n\ndef transform(tables):\n"
        "    return contract.validate(_clean(tables))\n"
    )
    instance = hard_task.hidden["instances"][0]
    out = run_program(df_verifier.sandbox, checked, hard_task.payload["schema"], instance["inputs"])
    assert out.result is not None, out.error
    assert out.result["rows"] == instance["expected"]["rows"]


def test_the_family_s_exploits_earn_nothing(hostile_verifier: DataframeVerifier, hard_task: Task):
    outcomes = run_exploits(hostile_verifier.verify, [hard_task], PIPELINE_EXPLOITS)
    assert len(outcomes) == len(PIPELINE_EXPLOITS)
    assert not [(o.name, o.reward, o.baseline) for o in outcomes if not o.held]
    dodge = hostile_verifier.verify(hard_task, PIPELINE_EXPLOITS[4].make(hard_task))
    assert "contract: shipment_id: wrong type, expected int, got str" in dodge.tests[0].detail
