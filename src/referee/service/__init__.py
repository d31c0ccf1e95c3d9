"""``referee serve``: referee's API and trainers' wire protocols over HTTP.

One server holds task files, a sandbox with warm workers and the verifiers; a trainer on
another machine verifies samples, runs programs and drives environment sessions through it.

>>> from referee.service import ServeConfig, Service, running          # doctest: +SKIP
>>> config = ServeConfig(tasks=("he.jsonl",), no_auth=True)
>>> with running(Service.start(config)) as url:                        # doctest: +SKIP
...     httpx.post(url + "/v1/verify", json={"samples": [
...         {"task_id": "HumanEval/0", "completion": "    return True\\n"}]}).json()

The native routes are listed in :mod:`referee.service.app`; the trainer protocols in
:mod:`referee.service.compat`.
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
