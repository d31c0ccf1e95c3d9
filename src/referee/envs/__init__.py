"""Environments: where a policy acts on a task, and what the verifier then judges.

:class:`Environment` is the contract (async ``reset``/``step``/``verify``, ``snapshot`` and
``restore`` for branching, :class:`SyncEnvironment` for synchronous callers); :class:`CodeEnv`
runs function and repository tasks with tools in the sandbox, or single-turn.

>>> from referee.envs import make_env, CodeRuntime                        # doctest: +SKIP
>>> with CodeRuntime() as rt:                                            # doctest: +SKIP
...     env = SyncEnvironment(make_env("code", runtime=rt, single_turn=False))
...     messages = env.reset(task)
...     result = env.step({"role": "assistant", "content": "", "tool_calls": [
...         {"id": "1", "type": "function",
...          "function": {"name": "submit", "arguments": "{}"}}]})
...     env.verify().reward

``examples/custom_env.py`` shows a whole custom environment in a few dozen lines.
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
