"""Reports of a round for people and machines: the plan table (and, later, audit
records, metrics and Events). Reads Plans; changes nothing."""

from loadaware.report._table import bar, render_plan_table

__all__ = ["bar", "render_plan_table"]
