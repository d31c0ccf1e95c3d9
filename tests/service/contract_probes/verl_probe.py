"""veRL's SandboxFusion reward (``verl`` 0.9.1, ``verl/utils/reward_score/sandbox_fusion``).

``import verl`` imports ray, tensordict and torch (verl/__init__.py -> verl.protocol), so this
loads the ``sandbox_fusion`` folder of the installed package by path, as a package of its own:
its two modules import only the standard library and ``requests``.

veRL posts to ``sandbox_fusion_url`` exactly as configured (``reward.sandbox_fusion.url``, which
must therefore end in ``/run_code``), one request per test case, with ``memory_limit_MB`` added.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

_NAME = "verl_sandbox_fusion"


def load() -> ModuleType:
    """verl's ``verl.utils.reward_score.sandbox_fusion`` package, without importing verl."""
    if _NAME in sys.modules:
        return sys.modules[_NAME]
    spec = importlib.util.find_spec("verl")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("verl is not installed (scripts/bootstrap-contracts.sh)")
    folder = Path(next(iter(spec.submodule_search_locations))) / "utils/reward_score/sandbox_fusion"
    pkg_spec = importlib.util.spec_from_file_location(
        _NAME, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert pkg_spec is not None and pkg_spec.loader is not None
    module = importlib.util.module_from_spec(pkg_spec)
    sys.modules[_NAME] = module
    pkg_spec.loader.exec_module(module)
    return module


def compute_score(
    run_code_url: str, completion: str, test_cases: dict[str, Any] | str, *, continuous: bool = True
) -> tuple[float, list[dict[str, Any]]]:
    """What ``default_compute_score`` does for data sources codecontests/apps/codeforces/taco
    when ``sandbox_fusion_url`` is set (continuous=True: the pass rate of the first 10 cases)."""
    sf = load()
    return sf.compute_score(  # type: ignore[no-any-return]
        run_code_url, threading.Semaphore(64), 1024, completion, test_cases, continuous=continuous
    )


def check_correctness(
    run_code_url: str, in_outs: dict[str, Any], generation: str, *, timeout: int = 10
) -> tuple[list[Any], list[dict[str, Any]]]:
    """Per case: True, False, -1 (API or sandbox error), -2 runtime error, -3 timeout,
    -4 compile error."""
    sf = load()
    return sf.check_correctness(  # type: ignore[no-any-return]
        sandbox_fusion_url=run_code_url, in_outs=in_outs, generation=generation, timeout=timeout
    )


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080/run_code"
    answer = "```python\nprint(sum(map(int, input().split())))\n```"
    print(compute_score(url, answer, {"inputs": ["1 2\n"], "outputs": ["3\n"]}))
