"""Task synthesis from repositories: ``synthesize(source)`` or ``referee synth SOURCE``.

See ``pipeline.py`` for the steps; each has a module of its own.
"""

from referee.synth.mutate import OPERATORS, Mutation, apply_mutation, find_mutations
from referee.synth.pipeline import KINDS, SynthReport, synthesize

__all__ = [
    "KINDS",
    "OPERATORS",
    "Mutation",
    "SynthReport",
    "apply_mutation",
    "find_mutations",
    "synthesize",
]
