"""The ``list-ops`` experiment behind ``referee train``: does RL beat imitation of an imperfect
demonstrator on held-out tasks, on a CPU? Single-turn completions or multi-turn tool episodes,
one SFT stage, one GRPO stage, the control, paired statistics.

Names are imported lazily, so ``import referee.experiments.listops`` does not import torch.

>>> from referee.experiments.listops import experiment_config, run_experiment  # doctest: +SKIP
>>> results = run_experiment(experiment_config({"rl_steps": 5}, env="code"))   # doctest: +SKIP
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
