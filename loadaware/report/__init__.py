"""Reports of a round for people and machines: the plan and round tables, the HTML page,
the audit record and what a round did of its plan. Reads Plans and execution reports;
changes nothing."""

from loadaware.report._audit import (
    LANDING_WHERE,
    LANDINGS_WHERE,
    NodeRelief,
    RoundRecord,
    model_error,
    relief_rows,
    relief_to_json,
    round_to_json,
    round_verdict,
)
from loadaware.report._completion import (
    NodeCompletion,
    NodeResult,
    RoundCompletion,
    completion_to_json,
    describe_completion,
    name_nodes,
)
from loadaware.report._html import render_plan_html, render_round_html
from loadaware.report._round_table import render_round_table
from loadaware.report._table import bar, render_plan_table

__all__ = [
    "LANDINGS_WHERE",
    "LANDING_WHERE",
    "NodeCompletion",
    "NodeRelief",
    "NodeResult",
    "RoundCompletion",
    "RoundRecord",
    "bar",
    "completion_to_json",
    "describe_completion",
    "model_error",
    "name_nodes",
    "relief_rows",
    "relief_to_json",
    "render_plan_html",
    "render_plan_table",
    "render_round_html",
    "render_round_table",
    "round_to_json",
    "round_verdict",
]
