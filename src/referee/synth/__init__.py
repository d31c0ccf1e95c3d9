"""Task synthesis from repositories. So far: mutation operators that preserve formatting."""

from referee.synth.mutate import OPERATORS, Mutation, apply_mutation, find_mutations

__all__ = ["OPERATORS", "Mutation", "apply_mutation", "find_mutations"]
