"""The dataframe verifier: gold passes, nothing passes for nothing, wrong pipelines fail, the
grader's own faults are infra errors."""

from __future__ import annotations

import pytest

from referee.domains.dataframe.compare import check_rules, compare_tables, well_formed
from referee.domains.dataframe.verifier import DataframeVerifier, answer_code, count_tests
from referee.tasks.model import Task


def test_every_family_s_reference_passes(df_verifier: DataframeVerifier, df_tasks: dict[str, Task]):
    for name, task in df_tasks.items():
        v = df_verifier.verify(task, f"Here it is:\n```python\n{task.hidden['reference']}```\n")
        assert v.passed and v.reward == 1.0, (name, v.tests)
        assert len(v.tests) == count_tests(task) == 4


def test_the_empty_answer_scores_nothing(df_verifier: DataframeVerifier, df_tasks: dict[str, Task]):
    v = df_verifier.verify(df_tasks["df-clean"], "")
    assert v.reward == 0.0 and not v.passed and v.infra_error is None
    assert all(t.status == "error" for t in v.tests)


def test_a_wrong_pipeline_fails_with_a_reason(
    df_verifier: DataframeVerifier, df_tasks: dict[str, Task]
):
    task = df_tasks["df-window"]
    wrong = task.hidden["reference"].replace("cumsum()", "cummax()")
    v = df_verifier.verify(task, wrong)
    assert not v.passed and v.reward == 0.0
    assert "cum_amount" in v.tests[0].detail


def test_a_candidate_fault_is_not_an_infra_error_but_a_grader_fault_is(
    df_verifier: DataframeVerifier, df_tasks: dict[str, Task]
):
    task = df_tasks["df-dates"]
    raised = df_verifier.verify(task, "def transform(tables):\n    raise KeyError('x')\n")
    assert raised.infra_error is None and "KeyError" in raised.tests[0].detail
    # A hidden input the grader's own loader cannot read (a text cell in an int column).
    broken = task.hidden["instances"][0]["inputs"]["orders"].replace("\n1", "\nxyz", 1)
    bad = task.revised(
        hidden={
            **task.hidden,
            "instances": [{**task.hidden["instances"][0], "inputs": {"orders": broken}}],
        }
    )
    v = df_verifier.verify(bad, task.hidden["reference"])
    assert v.infra_error and "input failed to load" in v.infra_error and not v.passed
    not_df = Task.create(name="t/not-df-v1", prompt="p", kind="dataframe", answer_format="code")
    assert df_verifier.verify(not_df, "x").infra_error


def test_categorical_and_float_keys_are_judged_by_their_values(
    df_verifier: DataframeVerifier, df_tasks: dict[str, Task]
):
    task = df_tasks["df-join-aggregate"]
    ref = task.hidden["reference"]
    variant = ref.replace(
        "    return out\n",
        "    for c in out.columns:\n"
        "        is_text = pd.api.types.is_string_dtype(out[c])\n"
        "        out[c] = out[c].astype('category' if is_text else float)\n"
        "    assert any(isinstance(t, pd.CategoricalDtype) for t in out.dtypes)\n"
        "    return out\n",
    )
    assert variant != ref
    assert df_verifier.verify(task, variant).passed


def test_answer_code_takes_the_last_python_block():
    text = "try:\n```python\nA = 1\n```\nfinal:\n```python\nA = 2\n```\n"
    assert answer_code(text) == "A = 2\n"
    assert answer_code("A = 3\n") == "A = 3\n"


# ---- the host's comparison ------------------------------------------------------------------
def _t(columns, kinds, rows):
    return {"columns": columns, "kinds": kinds, "rows": rows}


REF = _t(["k", "v"], ["str", "float"], [[["s", "a"], ["f", 1.5]], [["s", "b"], None]])


def test_rows_are_a_multiset_unless_ordered_and_floats_have_a_tolerance():
    swapped = _t(
        ["v", "k"], ["float", "str"], [[None, ["s", "b"]], [["f", 1.5000000001], ["s", "a"]]]
    )
    assert compare_tables(swapped, REF, ordered=False) == ""
    assert "row 0" in compare_tables(swapped, REF, ordered=True)
    ints = _t(["k", "v"], ["str", "int"], [[["s", "a"], ["i", 2]]])
    want = _t(["k", "v"], ["str", "float"], [[["s", "a"], ["f", 2.0]]])
    assert compare_tables(ints, want, ordered=False) == ""
    assert "holds int" in compare_tables(ints, want, ordered=False, int_float=False)


@pytest.mark.parametrize(
    ("got", "why"),
    [
        (_t(["k"], ["str"], [[["s", "a"]], [["s", "b"]]]), "columns differ"),
        (_t(["k", "v"], ["str", "float"], [[["s", "a"], ["f", 1.5]]]), "1 rows, expected 2"),
        (
            _t(["k", "v"], ["str", "float"], [[["s", "a"], ["f", 1.5]], [["s", "b"], ["f", 0.0]]]),
            "differs in column 'v' (got 0.0)",
        ),
        (
            _t(["k", "v"], ["str", "str"], [[["s", "a"], ["s", "1.5"]], [["s", "b"], None]]),
            "holds str",
        ),
        (_t(["k", "k"], ["str", "str"], []), "duplicate column"),
        (
            {"columns": ["k", "v"], "kinds": ["str", "float"], "rows": [[["s", "a"], ["f", True]]]},
            "malformed",
        ),
        ([1, 2], "not an object"),
    ],
)
def test_differences_and_malformed_reports_are_mismatches(got, why):
    assert why in compare_tables(got, REF, ordered=False)


def test_rules_are_checked_on_the_candidate_s_table():
    t = _t(["k", "v"], ["str", "float"], [[["s", "a"], ["f", 1.0]], [["s", "a"], None]])
    broken = check_rules(
        t,
        [
            {"type": "unique", "columns": ["k"]},
            {"type": "not_null", "columns": ["v"]},
            {"type": "total", "column": "v", "table": "x", "of": "y"},
            {"type": "row_count", "table": "x"},
            {"type": "sorted_by", "columns": ["v"]},
            {"type": "unique", "columns": ["nope"]},
        ],
        {"totals": {"v": 3.0}, "row_counts": {"x": 5}},
    )
    kinds = [b.split(":")[0] for b in broken]
    assert kinds == ["unique", "not_null", "total", "row_count", "sorted_by", "unique"]
    assert well_formed(t) == ""


@pytest.mark.parametrize(
    "cell", [["f", "abc"], ["i", 10**400], ["i", "1"], ["t", 3], ["x", 1], ["f", 1, 2]]
)
def test_forged_cells_are_malformed_not_crashes(cell):
    got = _t(["k", "v"], ["str", "float"], [[["s", "a"], cell], [["s", "b"], None]])
    assert "malformed" in compare_tables(got, REF, ordered=False)
    assert check_rules(got, [{"type": "unique", "columns": ["v"]}], {}) == [
        "the result is malformed"
    ]
