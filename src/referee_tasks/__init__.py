"""The ``referee-tasks`` taskset of ``verifiers`` v1 (prime-rl): ``--env.taskset.id referee-tasks``.

verifiers imports a taskset id as a top-level module and takes the one ``Taskset`` subclass its
``__all__`` exports, so this module only re-exports :class:`referee.train.prime.RefereeTaskset`
(it needs ``verifiers`` installed). See :mod:`referee.train.prime`.
"""

from referee.train.prime import RefereeTaskset

__all__ = ["RefereeTaskset"]
