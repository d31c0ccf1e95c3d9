"""The dataframe domain's families and what each makes: read by the registration (the package)
and by the builders (:mod:`.families`), so that the builders need not import the package."""

from __future__ import annotations

__all__ = ["FAMILY_NAMES"]

#: The families this domain registers, with what each makes.
FAMILY_NAMES = {
    "df-clean": "clean a raw table: dedupe, normalise text, cast, fill missing values",
    "df-join-aggregate": "join two tables, filter, group and aggregate",
    "df-pivot": "reshape: long to wide with every category, or wide to long",
    "df-window": "per-group running totals, ranks and rolling means",
    "df-dates": "calendar buckets (months, weeks) with empty periods filled",
    "df-pipeline": "a multi-step cleaning pipeline over dirty inputs, judged by a data contract",
}
