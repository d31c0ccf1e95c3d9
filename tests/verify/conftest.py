import pytest


@pytest.fixture(scope="session")
def harness_sb():
    from referee.verify.function import harness_sandbox

    sb = harness_sandbox(python_workers=3)
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def humaneval(harness_sb):
    """All 164 HumanEval tasks with their tests recorded (in the sandbox)."""
    from referee.tasks.humaneval import humaneval_tasks
    from referee.verify.record import record_function_tasks

    return {t.id: t for t in record_function_tasks(harness_sb, humaneval_tasks())}


@pytest.fixture(scope="session")
def verifier(harness_sb):
    from referee.verify.function import FunctionVerifier

    return FunctionVerifier(harness_sb, call_timeout_s=1.0, run_timeout_s=10.0)
