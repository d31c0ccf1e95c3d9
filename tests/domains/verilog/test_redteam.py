"""Every exploit of the corpus scores no more than the empty module, on a sequential and a
combinational task (the resource exploits, which wait on limits, on the first only; judged
concurrently)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from referee.domains.verilog.redteam import EXPLOITS, corpus_tasks, exploit_answers


def test_every_exploit_scores_no_more_than_the_empty_module(verifier):
    jobs = []
    for i, task in enumerate(corpus_tasks()):
        empty = f"```verilog\n{task.payload['module_header']}\nendmodule\n```"
        jobs.append((task, "(empty)", empty))
        jobs += [
            (task, name, answer)
            for name, (klass, answer) in exploit_answers(task).items()
            if i == 0 or klass != "resource"
        ]
    with ThreadPoolExecutor(8) as pool:
        verdicts = list(pool.map(lambda j: verifier.verify(j[0], j[2]), jobs))
    baseline = {j[0].id: v.reward for j, v in zip(jobs, verdicts, strict=True) if j[1] == "(empty)"}
    assert set(baseline.values()) == {0.0}
    for (task, name, _), v in zip(jobs, verdicts, strict=True):
        assert v.infra_error is None, (name, v.infra_error)
        assert not v.passed and v.reward <= baseline[task.id], (name, task.id, v.tests[:1])
    resource = sum(klass == "resource" for klass, _ in EXPLOITS.values())
    assert len(jobs) == 2 * (len(EXPLOITS) + 1) - resource


def test_cheats_wrapped_around_the_right_logic_are_rejected_not_just_wrong(verifier):
    task = corpus_tasks()[0]
    answers = exploit_answers(task)
    for name in ("gold+finish", "gen-hierarchy", "escaped-identifier"):
        v = verifier.verify(task, answers[name][1])
        assert v.reward == 0.0 and v.flags, name
    gold_with_spy = task.hidden["reference"] + "\nmodule spy; reg r; always r = ~r; endmodule\n"
    assert verifier.verify(task, gold_with_spy).passed  # -s: the spy never runs
