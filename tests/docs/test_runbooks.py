"""Runbooks: every alert links a page of the documentation site that exists.

Covered: each rule of alerts/loadaware.rules.yml (and so of the PrometheusRule
generated from it) has a runbook_url under the site's address (mkdocs.yml
site_url) naming its own alert; the page docs/runbooks/<alert>.md exists, is in
the site's nav, is titled with the alert's name and says what the alert means,
how to look and what to do; the dashboard panels it sends you to exist; and every
runbook page belongs to an alert.
"""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
RULES = ROOT / "alerts" / "loadaware.rules.yml"
RUNBOOKS = ROOT / "docs" / "runbooks"
SECTIONS = ("## What it means", "## How to look", "## What to do")


def _site() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def _alert_rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


def _alert_names() -> list[str]:
    return sorted({rule["alert"] for rule in _alert_rules()})


def _nav_pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in _nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return []


def _panel_titles() -> set[str]:
    titles: set[str] = set()
    for board in (ROOT / "dashboards").glob("*.json"):
        for panel in json.loads(board.read_text())["panels"]:
            titles.add(panel["title"])
            titles.update(p["title"] for p in panel.get("panels", []))
    return titles


def test_the_site_address_is_where_runbook_urls_point() -> None:
    assert _site()["site_url"] == "https://loadaware.io/docs/"


@pytest.mark.parametrize("rule", _alert_rules(), ids=lambda rule: rule["alert"])
def test_every_alert_rule_links_its_runbook(rule: dict[str, Any]) -> None:
    url = rule.get("annotations", {}).get("runbook_url")
    assert url, f"{rule['alert']} has no runbook_url annotation"
    assert url == f"{_site()['site_url']}runbooks/{rule['alert']}/"


@pytest.mark.parametrize("alert", _alert_names())
def test_every_runbook_page_exists_and_answers_the_three_questions(alert: str) -> None:
    page = RUNBOOKS / f"{alert}.md"
    assert page.is_file(), f"write docs/runbooks/{alert}.md"
    text = page.read_text()
    assert text.startswith(f"# {alert}\n")
    for heading in SECTIONS:
        assert f"\n{heading}\n" in text, f"{alert}: no {heading!r}"
    assert f"runbooks/{alert}.md" in _nav_pages(_site()["nav"])


@pytest.mark.parametrize("alert", _alert_names())
def test_the_panels_a_runbook_names_exist(alert: str) -> None:
    text = (RUNBOOKS / f"{alert}.md").read_text()
    look = text.split("## How to look", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"\*\*(.+?)\*\*", " ".join(look.split()))
    assert named, f"{alert}: name the dashboard panels to look at"
    assert set(named) <= _panel_titles(), set(named) - _panel_titles()


def test_every_runbook_page_belongs_to_an_alert() -> None:
    pages = {p.stem for p in RUNBOOKS.glob("*.md")} - {"index"}
    assert pages == set(_alert_names())
    index = (RUNBOOKS / "index.md").read_text()
    for alert in _alert_names():
        assert f"]({alert}.md)" in index
