"""Reports of a round for people and machines: the plan table and the audit
record. Reads Plans and execution reports; changes nothing."""

from loadaware.report._audit import NodeRelief, RoundRecord, round_to_json
from loadaware.report._table import bar, render_plan_table

__all__ = ["NodeRelief", "RoundRecord", "bar", "render_plan_table", "round_to_json"]
