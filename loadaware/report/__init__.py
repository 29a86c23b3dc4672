"""Reports of a round for people and machines: the plan and round tables, the HTML
page, the audit record's JSON and the JSON text the CLI prints. Reads Plans and the
round's records (round.RoundRecord); changes nothing."""

from loadaware.report._audit import model_error, round_to_json
from loadaware.report._html import render_plan_html, render_round_html
from loadaware.report._json_text import json_text
from loadaware.report._round_table import render_round_table
from loadaware.report._table import bar, render_plan_table

__all__ = [
    "bar",
    "json_text",
    "model_error",
    "render_plan_html",
    "render_plan_table",
    "render_round_html",
    "render_round_table",
    "round_to_json",
]
