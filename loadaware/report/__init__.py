"""Reports of a round for people and machines: the plan table, the HTML page and the audit
record. Reads Plans and execution reports; changes nothing."""

from loadaware.report._audit import (
    LANDING_WHERE,
    LANDINGS_WHERE,
    NodeRelief,
    RoundRecord,
    model_error,
    relief_to_json,
    round_to_json,
)
from loadaware.report._html import render_plan_html, render_round_html
from loadaware.report._table import bar, render_plan_table

__all__ = [
    "LANDINGS_WHERE",
    "LANDING_WHERE",
    "NodeRelief",
    "RoundRecord",
    "bar",
    "model_error",
    "relief_to_json",
    "render_plan_html",
    "render_plan_table",
    "render_round_html",
    "round_to_json",
]
