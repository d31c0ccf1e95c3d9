"""Policies: what produces the assistant's next message.

* :class:`OpenAIPolicy`: any OpenAI-compatible chat server (vLLM, SGLang, ...), with tool
  calls, token ids and log-probabilities where the server returns them;
* :class:`TransformersPolicy`: a local transformers model;
* :class:`ScriptedPolicy`: replies written in advance, for tests and benchmarks;
* :func:`policy_from_spec`: one of them from a command-line string
  (``openai:http://host:8000/v1#model``, ``local:/path``, ``scripted:42``).

Both are imported on first use, so ``import referee.policy`` imports neither torch nor httpx.

>>> import asyncio
>>> from referee.policy import ScriptedPolicy, Sampling
>>> g = asyncio.run(ScriptedPolicy(["4"]).generate([{"role": "user", "content": "2+2?"}]))
>>> g.message
{'role': 'assistant', 'content': '4'}
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
