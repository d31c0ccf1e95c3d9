"""Which reasoning-gym datasets referee offers, how it judges each, and why the others are not.

reasoning-gym 0.1.25 registers 106 datasets. Each one offered here is a family ``rg-NAME``
(``referee tasks generate rg-chain_sum --count 20 --difficulty 0.5``) judged by one of the
text-only modes of :mod:`.judge`, chosen by reading that dataset's ``score_answer``: the mode
passes exactly the answers it scores 1.0 (``bench/reasoning_gym_agreement.py`` measures it).
A dataset is left out (:data:`EXCLUDED`, with the reason) when its scorer

* evaluates the answer as code (``sympy.parse_expr`` is ``eval``): judging it would run model
  text on the host, or a CAS in the sandbox that referee does not have yet;
* accepts several right answers checked by a solver or a simulator (moves of a puzzle, a
  colouring, a mapping) that referee has not reimplemented;
* scores by distance (``exp(-d)``, a share of matching cells) so that "1.0" is not the line
  between right and wrong, or accepts answers that are plainly wrong;
* or cannot generate without files or network this machine lacks.
"""

from __future__ import annotations

__all__ = ["DATASETS", "EXCLUDED", "family_name"]

#: dataset -> judge mode (:data:`referee.domains.reasoning.judge.JUDGES`).
DATASETS: dict[str, str] = {
    # The base scorer: 1.0 for the gold text only (a share for a longer answer containing it).
    **dict.fromkeys(
        [
            "acre",
            "aiw",
            "arc_1d",
            "base_conversion",
            "basic_arithmetic",
            "bf",
            "binary_alternation",
            "caesar_cipher",
            "count_bits",
            "count_primes",
            "course_schedule",
            "gcd",
            "isomorphic_strings",
            "largest_island",
            "lcm",
            "leg_counting",
            "letter_counting",
            "list_functions",
            "mahjong_puzzle",
            "maze",
            "modulo_grid",
            "number_filtering",
            "ransom_note",
            "rotate_matrix",
            "rotten_oranges",
            "simple_equations",
            "simple_geometry",
            "string_manipulation",
            "string_splitting",
            "string_synthesis",
            "syllogism",
            "word_sequence_reversal",
            # own scorers, 1.0 for the gold text only (a Python list of it earns 0.1)
            "ab",
            "circuit_logic",
            "emoji_mystery",
            "self_reference",
            "binary_matrix",
            "spiral_matrix",
            "string_insertion",
            # grids: 1.0 when equal but for trailing spaces, and then only if not longer
            "sudoku",
            "mini_sudoku",
            "futoshiki",
        ],
        "exact",
    ),
    **dict.fromkeys(
        [
            "color_cube_rotation",
            "family_relationships",
            "dice",
            "spell_backward",
            "zebra_puzzles",
        ],
        "casefold",
    ),
    "figlet_font": "nospace-casefold",
    "needle_haystack": "nospace-casefold",
    "path_star": "collapse-space",
    "letter_jumble": "words-casefold",
    "sentence_reordering": "words-casefold",
    "manipulate_matrix": "rows",
    "chain_sum": "decimal-commas",
    "products": "decimal-commas",
    "decimal_chain_sum": "decimal",
    "decimal_arithmetic": "decimal-within",
    "number_format": "number-within",
    "coin_flip": "fraction-within",
    "n_queens": "one-of",
    "group_anagrams": "anagram-groups",
    "palindrome_partitioning": "partitions",
    "palindrome_generation": "palindrome",
    "word_sorting": "word-list",
    "prime_factorization": "factors",
    "fraction_simplification": "fraction",
}

_EVAL = "its scorer parses the answer with sympy.parse_expr, which evaluates it as Python"
_SOLVER = "several answers are right; its scorer checks one with a solver or simulator"
_GRADED = "its scorer grades by distance, so a score of 1.0 is not the line between right and wrong"

#: dataset -> why referee does not offer it.
EXCLUDED: dict[str, str] = {
    "countdown": _EVAL,
    "puzzle24": _EVAL,
    "polynomial_multiplication": _EVAL,
    "simple_integration": _EVAL,
    "intermediate_integration": _EVAL,
    "propositional_logic": _SOLVER + " (entailment of a formula)",
    "cryptarithm": _SOLVER + " (any consistent letter-digit mapping)",
    "graph_color": _SOLVER + " (any proper colouring)",
    "jugs": _SOLVER + " (any pouring sequence)",
    "kakurasu": _SOLVER + " (any grid with the sums)",
    "knight_swap": _SOLVER + " (moves replayed on the board)",
    "rubiks_cube": _SOLVER + " (moves replayed on a cube)",
    "rush_hour": _SOLVER + " (moves replayed on the board)",
    "sokoban": _SOLVER + " (moves replayed in the game)",
    "tower_of_hanoi": _SOLVER + " (moves replayed)",
    "word_ladder": _SOLVER + " (any ladder of dictionary words)",
    "boxnet": _SOLVER + " (a plan replayed; the share of boxes moved)",
    "tsumego": _SOLVER + " (any killing move)",
    "quantum_lock": _SOLVER + " (button presses replayed)",
    "shortest_path": _SOLVER + " (any valid path of the same length)",
    "bitwise_arithmetic": _SOLVER + " (its own expression checker)",
    "survo": "its scorer parses a grid from free text with its own parser",
    "arc_agi": "its scorer parses boards with ARC's own format options",
    "rearc": "its scorer parses boards with ARC's own format options",
    "complex_arithmetic": _GRADED + " (exp(-|a - b|))",
    "polynomial_equations": _GRADED + " (exp of the distance, penalties)",
    "calendar_arithmetic": _GRADED + " (exp(-5 x relative error) on counts)",
    "time_intervals": _GRADED + " (partial credit by the time difference)",
    "advanced_geometry": _GRADED + " (rounding per task type, 0.5 for near radii)",
    "rectangle_count": _GRADED + " (credit by distance)",
    "game_of_life": _GRADED + " (the share of matching cells; extra rows ignored)",
    "knights_knaves": "its scorer normalises free-text assignments with its own parser",
    "gsm_symbolic": "its scorer takes the first number anywhere in the answer: '18 or 20' passes",
    "game_of_life_halting": "its scorer passes any non-empty answer when the gold one is non-empty",
    "codeio": "it reads a data file that reasoning-gym does not ship",
    "composite": "a mixture of the others, not a dataset of its own",
    "pool_matrix": _GRADED + " (numpy.allclose with rtol 1e-2)",
    "number_sequence": "its generator does not return on some seeds (seed 1000 at level 2: "
    "a big-integer computation no signal interrupts)",
    "number_sorting": "its scorer passes any sorted list whose numbers are within 1 of the "
    "gold ones",
    "power_function": "its scorer compares three significant figures of its own formatting",
}


def family_name(dataset: str) -> str:
    """The family that generates ``dataset``'s tasks: ``rg-`` and the dataset's name."""
    return f"rg-{dataset}"
