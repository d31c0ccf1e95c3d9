"""Distribution-shift wrappers: any environment, seeded perturbations of what the policy sees
and of how its tools behave, recorded on the trajectory; the verdict is never touched.

>>> from referee.envs import make_env
>>> from referee.envs.shift import wrap_env, shift_names
>>> "FailToolsTransiently" in shift_names()
True
>>> env = make_env("code", shift=["FailToolsTransiently(p=0.3)"])     # doctest: +SKIP
>>> env = wrap_env(make_env("code"), "AddObservationNoise:rate=0.05,seed=1")  # doctest: +SKIP

See docs/distribution-shift.md for each wrapper, and
:func:`referee.rollout.shift_report.compare_shifts` for clean-versus-shifted tables.
"""

from referee.envs.shift.base import (
    EpisodeCounter,
    ShiftSnapshot,
    ShiftWrapper,
    shift_label,
    shift_record,
)
from referee.envs.shift.observations import (
    MISLEADING_LINES,
    PARAPHRASES,
    AddObservationNoise,
    InjectMisleadingLogs,
    ParaphraseToolOutput,
    ReorderToolOutput,
    TruncateObservations,
)
from referee.envs.shift.spec import (
    ShiftSpec,
    parse_shift,
    parse_shifts,
    register_shift,
    shift_factory,
    shift_names,
    wrap_env,
)
from referee.envs.shift.tools import TRANSIENT_ERRORS, FailToolsTransiently, SlowTools

__all__ = [
    "MISLEADING_LINES",
    "PARAPHRASES",
    "TRANSIENT_ERRORS",
    "AddObservationNoise",
    "EpisodeCounter",
    "FailToolsTransiently",
    "InjectMisleadingLogs",
    "ParaphraseToolOutput",
    "ReorderToolOutput",
    "ShiftSnapshot",
    "ShiftSpec",
    "ShiftWrapper",
    "SlowTools",
    "TruncateObservations",
    "parse_shift",
    "parse_shifts",
    "register_shift",
    "shift_factory",
    "shift_label",
    "shift_names",
    "shift_record",
    "wrap_env",
]
