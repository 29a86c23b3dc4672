"""The HTML report: `loadaware plan -o html`, render_plan_html and render_round_html.

Covered: the page is well-formed HTML (every element closed in order, one
html/head/body/title, a charset, the doctype first) and self-contained (no
script, link, img, iframe or external URL of any kind, no url() or @import in
the styles); nodes are grouped by class with an SVG bar per resource; evictions
are listed with reasons (and results for a round); budgets used and the solver
gap are shown; observed utilisation appears for a round's verified nodes;
names from the cluster are escaped; a partial round's header says so with the
hot nodes relieved and the evictions carried out of those planned. A summary
(hot nodes before and after, evictions, relief verdicts, breaker) comes before
the node table; only the nodes the plan or round touched (sources, expected and
actual landings, steered, verified) or left hot get bars, every other node one
line in a collapsed <details> (a 5,000-node round: 4 rows with bars). A slow test
renders the page in headless Chromium and checks the screenshot is not blank.
"""

from __future__ import annotations

import datetime
import html.parser
import json
import pathlib
import shutil
import struct
import subprocess
import zlib
from collections.abc import Iterator
from typing import Any

import pytest

from loadaware import cli, report, runtime
from loadaware import round as rounds
from loadaware.sim import builtin_scenario

NOW = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source"}
SVG_LEAVES = {"rect", "line", "circle", "path", "polyline"}
FORBIDDEN_TAGS = {"script", "link", "img", "iframe", "object", "embed", "base", "frame"}


class StrictChecker(html.parser.HTMLParser):
    """Fails on anything a strict reader of a self-contained page would object to."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.counts: dict[str, int] = {}
        self.problems: list[str] = []
        self.first: str | None = None
        self.charset = False
        self.style_text = ""
        self.text: list[str] = []

    def _see(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.first is None:
            self.first = tag
        # SVG has a <title> of its own (the bars' tooltips): count it apart.
        key = f"svg:{tag}" if "svg" in self.stack else tag
        self.counts[key] = self.counts.get(key, 0) + 1
        if tag in FORBIDDEN_TAGS:
            self.problems.append(f"<{tag}> loads or runs something")
        for name, value in attrs:
            lowered = (value or "").strip().lower()
            if name.startswith("on"):
                self.problems.append(f"event handler {name}")
            if lowered.startswith(("http:", "https:", "//", "data:", "javascript:", "file:")):
                self.problems.append(f"external reference {name}={value}")
            if name in ("href", "src", "srcset", "xlink:href", "action"):
                self.problems.append(f"reference attribute {name}")
            if name == "style" and "url(" in lowered:
                self.problems.append("url() in a style attribute")
        if tag == "meta" and any(n == "charset" for n, _ in attrs):
            self.charset = True

    def handle_decl(self, decl: str) -> None:
        if self.first is None:
            self.first = f"!{decl.lower()}"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._see(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._see(tag, attrs)
        if tag not in VOID and tag not in SVG_LEAVES:
            self.problems.append(f"<{tag}/> self-closed outside SVG")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            self.problems.append(f"</{tag}> closes a void element")
        elif not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> does not close {self.stack[-1:]}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] == "style":
            self.style_text += data
        self.text.append(data)


def check_page(page: str) -> StrictChecker:
    checker = StrictChecker()
    checker.feed(page)
    checker.close()
    assert checker.problems == []
    assert checker.stack == [], "unclosed elements"
    assert checker.first == "!doctype html"
    for tag in ("html", "head", "body", "title"):
        assert checker.counts.get(tag) == 1, tag
    assert checker.charset
    assert "url(" not in checker.style_text
    assert "@import" not in checker.style_text
    assert "http" not in page.lower(), "no URL of any kind: the page must open offline"
    return checker


@pytest.fixture(scope="module")
def scenario_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, ...]:
    directory = tmp_path_factory.mktemp("scenario")
    scenario = builtin_scenario("peak-hour", now=NOW)
    cluster_file = directory / "cluster.json"
    metrics_file = directory / "metrics.json"
    policy_file = directory / "policy.yaml"
    cluster_file.write_text(json.dumps(scenario.cluster_document()))
    metrics_file.write_text(json.dumps(scenario.metrics))
    policy_file.write_text(
        "apiVersion: loadaware.io/v1alpha1\nkind: LoadAwarePolicy\n"
        "limits: {maxNoOfPodsToEvictPerNode: 3, maxNoOfPodsToEvictTotal: 10}\n"
    )
    return cluster_file, metrics_file, policy_file


@pytest.fixture(scope="module")
def plan_json(scenario_files: tuple[pathlib.Path, ...]) -> dict[str, Any]:
    from loadaware import plan

    cluster_file, metrics_file, policy_file = scenario_files
    result = runtime.plan_from_files(
        cluster_file=cluster_file,
        metrics_file=metrics_file,
        policy_file=policy_file,
        now=NOW,
        solver=None,
    )
    assert result.status == "planned", result.reason
    return plan.plan_to_json(result)


def _audit(plan_json: dict[str, Any]) -> dict[str, Any]:
    """An audit record as round_to_json writes it, for a round that evicted two pods."""
    from loadaware import plan

    record = rounds.RoundRecord(
        round_id="r-20261129-0800",
        trigger="alertmanager",
        started_at=NOW,
        finished_at=NOW + datetime.timedelta(minutes=3),
        dry_run=False,
        policy_hash="abc123",
        status="executed",
        reason="2 evictions",
    )
    audit = report.round_to_json(record)
    audit["plan"] = plan_json
    first, second = plan_json["evictions"][:2]
    audit["evictions"] = [
        {**first, "result": "evicted", "budget": "maxNoOfPodsToEvictPerNode", "at": None},
        {**second, "result": "refused-pdb", "budget": None, "at": None},
    ]
    hot = next(n for n in plan_json["nodes"] if n["class"] == "hot")
    audit["verification"]["relief"] = [
        {
            "node": hot["name"],
            "before": hot["before"],
            "expected": hot["after"],
            "observed": {k: v * 0.97 for k, v in hot["after"].items()},
            "verdict": "relieved",
        }
    ]
    cool = next(n for n in plan_json["nodes"] if n["class"] != "hot")
    audit["verification"]["landingNodes"] = [
        {
            "node": cool["name"],
            "verdict": "turned hot",
            "before": cool["before"],
            "expected": cool["after"],
            "observed": {k: min(v + 0.4, 1.0) for k, v in cool["after"].items()},
            "sampleTime": "2026-11-29T08:03:00Z",
        }
    ]
    audit["verification"]["modelError"] = {"relieved": {"cpu": 0.01}, "landing": {"cpu": 0.4}}
    audit["verification"]["verdict"] = "relieved"
    audit["budgets"] = {
        "round": {
            "maxNoOfPodsToEvictTotal": 10,
            "maxNoOfPodsToEvictPerNode": 3,
            "maxNoOfPodsToEvictPerNamespace": None,
            "maxNoOfPodsToEvictPerWorkload": None,
        },
        "windowLeft": 7,
        "coolingWorkloads": 1,
    }
    assert plan  # the JSON above follows plan.plan_to_json
    return audit


def _main_nodes(
    nodes: list[dict[str, Any]],
    evictions: list[dict[str, Any]],
    verification: dict[str, Any] | None = None,
) -> set[str]:
    """The nodes drawn with bars: hot, or touched by an eviction (source, expected node,
    steered) or by the round's verification (landings, relief rows)."""
    names = {n["name"] for n in nodes if n["class"] == "hot"}
    for eviction in evictions:
        names |= {eviction["node"], eviction.get("expectedNode"), *(eviction.get("steer") or ())}
    for key in ("replacements", "relief", "landingNodes"):
        names |= {r["node"] for r in (verification or {}).get(key) or ()}
    return names - {None}


def _before_details(page: str) -> str:
    return page.split("<details", 1)[0]


def _in_details(page: str) -> str:
    opening = page.index("<details")
    return page[opening : page.index("</details>", opening)]


def test_plan_html_from_the_cli_is_a_self_contained_page(
    scenario_files: tuple[pathlib.Path, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    cluster_file, metrics_file, policy_file = scenario_files
    code = cli.main(
        [
            "plan",
            f"--cluster={cluster_file}",
            f"--metrics={metrics_file}",
            f"--policy={policy_file}",
            "--now=2026-11-29T08:00:00Z",
            "-o",
            "html",
        ]
    )
    page = capsys.readouterr().out
    assert code == 0
    check_page(page)
    assert "<h1>loadaware plan</h1>" in page


def test_plan_page_shows_nodes_by_class_evictions_budgets_and_gap(
    plan_json: dict[str, Any],
) -> None:
    page = report.render_plan_html(plan_json)
    checker = check_page(page)
    text = "".join(checker.text)
    main = _main_nodes(plan_json["nodes"], plan_json["evictions"])
    classes = {node["class"] for node in plan_json["nodes"] if node["name"] in main}
    for node_class in classes:
        assert f"<h3>{node_class} (" in page
    assert page.index("<h3>hot (") < page.index("<h3>cold (") if "cold" in classes else True
    for node in plan_json["nodes"]:
        assert node["name"] in text
    # One SVG per resource of each node the plan touched or hot; the others in one line.
    assert checker.counts["svg"] == 2 * len(main)
    assert len(main) < len(plan_json["nodes"])
    for eviction in plan_json["evictions"]:
        assert eviction["pod"] in text
    assert plan_json["evictions"][0]["reason"] in text
    assert "Budgets used" in text
    assert f"{len(plan_json['evictions'])}" in text
    assert "gap" in text
    gap = report.render_plan_html.__globals__["solver_gap"](plan_json["solver"])
    if gap is not None:
        assert f"{gap * 100:.2f}%" in text
    assert "observed" not in text, "a plan has nothing observed yet"


def test_round_page_adds_results_observed_utilisation_and_limits(
    plan_json: dict[str, Any],
) -> None:
    audit = _audit(plan_json)
    page = report.render_round_html(audit)
    checker = check_page(page)
    text = "".join(checker.text)
    for expected in ("r-20261129-0800", "alertmanager", "relieved", "executed", "refused-pdb"):
        assert expected in text
    assert "maxNoOfPodsToEvictPerNode" in text
    assert "observed" in text
    hot = audit["verification"]["relief"][0]
    assert f'aria-label="{hot["node"]} cpu"' in page
    # Three bars (before, expected, observed) on the verified node only.
    segment = page.split(f'aria-label="{hot["node"]} cpu"', 1)[1].split("</svg>", 1)[0]
    assert segment.count("</title></rect>") == 3
    # The pool's thresholds and targetThresholds are drawn on every bar.
    node = next(n for n in audit["plan"]["nodes"] if n["name"] == hot["node"])
    low, high = node["thresholds"]["cpu"], node["targetThresholds"]["cpu"]
    assert f"<title>threshold: {low * 100:.0f}%</title>" in segment
    assert f"<title>target threshold: {high * 100:.0f}%</title>" in segment
    main = _main_nodes(audit["plan"]["nodes"], audit["evictions"], audit["verification"])
    assert page.count('class="target-threshold"') == 2 * len(main)
    # The relief check: the relieved node and the landing node with their verdicts.
    relief = page.split("<h2>Relief</h2>", 1)[1].split("</table>", 1)[0]
    assert hot["node"] in relief
    assert "relieved" in relief
    landing = audit["verification"]["landingNodes"][0]
    assert landing["node"] in relief
    assert "turned hot" in relief
    assert "model error" in text
    assert "windowLeft" in text


def test_round_page_says_when_a_hot_node_s_moves_were_all_carried_out(
    plan_json: dict[str, Any],
) -> None:
    audit = _audit(plan_json)
    hot = audit["verification"]["relief"][0]["node"]
    relief = report.render_round_html(audit).split("<h2>Relief</h2>", 1)[1]
    # An older record without the times: no column.
    assert "moves done" not in relief.split("</table>", 1)[0]
    audit["completion"] = {
        "result": "complete",
        "summary": "1/1 hot nodes relieved",
        "stopped": None,
        "hotNodes": {"planned": 1, "relieved": 1, "leftHot": []},
        "evictions": {"planned": 2, "carriedOut": 2, "byResult": {"evicted": 2}},
        "nodes": [{"node": hot, "result": "relieved", "carriedOutAt": "2026-11-29T08:01:05Z"}],
    }
    page = report.render_round_html(audit)
    check_page(page)
    table = page.split("<h2>Relief</h2>", 1)[1].split("</table>", 1)[0]
    assert "<th>moves done</th>" in table
    row = next(r for r in table.split("<tr>") if f"<td>{hot}</td>" in r)
    assert '<td class="num">+65s</td>' in row


def test_round_page_of_a_partial_round_says_so_with_the_counts(
    plan_json: dict[str, Any],
) -> None:
    audit = _audit(plan_json)
    audit["status"] = "partial"
    audit["reason"] = "0/1 hot nodes relieved, 1/2 evictions carried out; left hot: hot-9"
    audit["completion"] = {
        "result": "partial",
        "summary": audit["reason"],
        "stopped": "breaker opened: replacement of shop/a is unschedulable",
        "hotNodes": {"planned": 1, "relieved": 0, "leftHot": ["hot-9"]},
        "evictions": {"planned": 2, "carriedOut": 1, "byResult": {"evicted": 1, "skipped": 1}},
        "nodes": [],
    }
    page = report.render_round_html(audit)
    checker = check_page(page)
    text = " ".join(checker.text)
    assert '<span class="status status-partial">partial</span>' in page
    assert ".status-partial {" in checker.style_text
    # Counted out of every hot node of the plan, whatever the completion says it planned.
    hot = sum(1 for n in plan_json["nodes"] if n["class"] == "hot")
    assert hot > 1
    for expected in (
        f"hot nodes relieved 0/{hot}",
        "evictions carried out 1/2",
        "stopped breaker opened: replacement of shop/a is unschedulable",
        "left hot hot-9",
    ):
        assert expected in " ".join(text.split()), expected


def test_plan_page_opens_with_a_summary_and_collapses_untouched_cool_nodes(
    plan_json: dict[str, Any],
) -> None:
    page = report.render_plan_html(plan_json)
    check_page(page)
    assert page.index("<h2>Summary</h2>") < page.index("<h2>Nodes</h2>")
    summary = " ".join(page.split("<h2>Summary</h2>", 1)[1].split("</table>", 1)[0].split())
    hot = [n for n in plan_json["nodes"] if n["class"] == "hot"]
    assert f"<th>hot nodes before</th><td>{len(hot)}: " in summary
    assert "<th>hot nodes after, expected</th>" in summary
    assert f"<th>evictions planned</th><td>{len(plan_json['evictions'])} from " in summary
    main = _main_nodes(plan_json["nodes"], plan_json["evictions"])
    cool = sorted(
        n["name"] for n in plan_json["nodes"] if n["class"] == "cold" and n["name"] not in main
    )
    assert cool, "the scenario has cold nodes no eviction touches"
    # Collapsed: <details> without `open`, after every bar.
    assert "<details open" not in page
    assert "<svg" not in _in_details(page)
    for name in cool:
        assert f"<td>{name}</td>" in _in_details(page)
        assert f"<td>{name}</td>" not in _before_details(page)
    source = plan_json["evictions"][0]["node"]
    landing = next(e["expectedNode"] for e in plan_json["evictions"] if e["expectedNode"])
    for name in (source, landing, *(n["name"] for n in hot)):
        assert f'aria-label="{name} cpu"' in _before_details(page)
        assert f"<td>{name}</td>" not in _in_details(page)


def _big_round(nodes: int) -> dict[str, Any]:
    """A round over `nodes` nodes: node-0000 relieved by two evictions landing on
    node-0001 (steered off node-0002), node-0003 hot and untouched, the rest cool."""
    low, high = {"cpu": 0.4, "memory": 0.5}, {"cpu": 0.7, "memory": 0.8}

    def node(i: int, node_class: str, before: float, after: float) -> dict[str, Any]:
        return {
            "name": f"node-{i:04d}",
            "class": node_class,
            "pool": "default",
            "before": {"cpu": before, "memory": 0.3},
            "after": {"cpu": after, "memory": 0.3},
            "thresholds": low,
            "targetThresholds": high,
        }

    plan_nodes = [node(0, "hot", 0.9, 0.6), node(1, "cold", 0.2, 0.35)]
    plan_nodes += [node(2, "cold", 0.1, 0.1), node(3, "hot", 0.85, 0.85)]
    plan_nodes += [node(i, "cold" if i % 2 else "normal", 0.3, 0.3) for i in range(4, nodes)]
    planned = [
        {"pod": f"shop/web-{k}", "node": "node-0000", "expectedNode": "node-0001",
         "reason": "hotspot", "workload": "shop/Deployment/web", "steer": ["node-0002"],
         "landingSet": ["node-0001"], "cpu": 0.6, "memory": 1}
        for k in range(2)
    ]  # fmt: skip
    record = rounds.RoundRecord(
        round_id="r-big",
        trigger="schedule",
        started_at=NOW,
        dry_run=False,
        policy_hash="abc",
        status="partial",
        reason="1/2 hot nodes relieved",
    )
    audit = report.round_to_json(record)
    audit["plan"] = {"status": "planned", "reason": "", "evictions": planned, "nodes": plan_nodes,
                     "solver": {"method": "greedy", "seconds": 1.0, "objective": 2.0,
                                "lowerBound": None}, "skipped": {}}  # fmt: skip
    audit["evictions"] = [{**e, "result": "evicted", "budget": None, "at": None} for e in planned]
    audit["verification"]["replacements"] = [
        {"pod": e["pod"], "replacement": f"{e['pod']}-r", "node": "node-0001", "ready": True,
         "secondsToReady": 3.0, "landing": "expected"}
        for e in planned
    ]  # fmt: skip
    audit["verification"]["relief"] = [
        {"node": "node-0000", "verdict": "relieved", "before": {"cpu": 0.9},
         "expected": {"cpu": 0.6}, "observed": {"cpu": 0.58}}
    ]  # fmt: skip
    audit["verification"]["landingNodes"] = [
        {"node": "node-0001", "verdict": "within targets", "before": {"cpu": 0.2},
         "expected": {"cpu": 0.35}, "observed": {"cpu": 0.37}}
    ]  # fmt: skip
    audit["verification"]["landings"] = {"planned": 2, "off-set": 0, "bad": 0, "pending": 0}
    audit["verification"]["breaker"] = "open until 2026-11-29T08:30:00Z: replacement pending"
    audit["verification"]["verdict"] = "partial: 1/2 hot nodes relieved"
    audit["completion"] = {
        "result": "partial",
        "summary": "1/2 hot nodes relieved, 2/2 evictions carried out; left hot: node-0003",
        "stopped": None,
        "hotNodes": {"planned": 2, "relieved": 1, "leftHot": ["node-0003"]},
        "evictions": {"planned": 2, "carriedOut": 2, "byResult": {"evicted": 2}},
        "nodes": [],
    }
    return audit


def test_round_page_of_5000_nodes_lists_only_the_nodes_the_round_touched_or_left_hot() -> None:
    page = report.render_round_html(_big_round(5000))
    checker = check_page(page)
    assert page.index("<h2>Summary</h2>") < page.index("<h2>Nodes</h2>")
    summary = " ".join(page.split("<h2>Summary</h2>", 1)[1].split("</table>", 1)[0].split())
    for expected in (
        "<th>nodes</th><td>5000 (2 hot, 2498 normal, 2500 cold)</td>",
        "<th>hot nodes before</th><td>2: node-0000, node-0003</td>",
        "<th>hot nodes after, expected</th><td>1: node-0003</td>",
        "<th>hot nodes after, observed</th><td>0</td>",
        "<th>evictions carried out</th><td>2/2 (2 evicted)</td>",
        "<th>left hot</th><td>node-0003</td>",
        "<th>relief of hot nodes</th><td>1 relieved</td>",
        "<th>landing nodes</th><td>1 within targets</td>",
        "<th>replacements landed</th><td>2 planned</td>",
        "<th>breaker</th><td>open until 2026-11-29T08:30:00Z: replacement pending</td>",
    ):
        assert expected in summary, expected
    main = _before_details(page)
    # Source, landing, steered and the node left hot get bars; nothing else does.
    for name in ("node-0000", "node-0001", "node-0002", "node-0003"):
        assert f'aria-label="{name} cpu"' in main, name
    assert checker.counts["svg"] == 2 * 4
    assert "<p>4 of 5000 nodes: " in main
    collapsed = _in_details(page)
    assert "4996 other nodes, untouched and not hot (2498 normal, 2498 cold)" in collapsed
    assert "<td>node-4999</td>" in collapsed
    assert "<td>node-4999</td>" not in main
    assert "<td>node-0003</td>" not in collapsed


def test_round_page_of_a_refused_round_without_a_plan() -> None:
    record = rounds.RoundRecord(
        round_id="r1",
        trigger="schedule",
        started_at=NOW,
        dry_run=True,
        policy_hash="x",
        status="refused",
        reason="stale-metrics: node-a sample is 900s old (max 120s)",
    )
    page = report.render_round_html(report.round_to_json(record))
    check_page(page)
    assert "stale-metrics: node-a sample is 900s old" in page
    assert "No nodes in this plan." in page


def test_names_from_the_cluster_are_escaped() -> None:
    plan_json = {
        "status": "planned",
        "reason": "<b>x</b>",
        "evictions": [
            {"pod": "ns/<script>alert(1)</script>", "node": "n&1", "expectedNode": None,
             "reason": "hotspot", "workload": None},
        ],
        "nodes": [
            {"name": 'n"1', "class": "hot", "before": {"cpu": 1.3, "memory": 0.2},
             "after": {"cpu": 0.6, "memory": 0.2}},
        ],
        "solver": {"method": "greedy", "seconds": 0.01, "objective": None, "lowerBound": None},
        "skipped": {"DaemonSetPods": 2},
    }  # fmt: skip
    page = report.render_plan_html(plan_json)
    check_page(page)
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page


# ---- rendering in a real browser ---------------------------------------------------------


def _png_pixels(data: bytes) -> Iterator[bytes]:
    """Rows of an 8-bit, non-interlaced PNG (what Chromium writes), unfiltered."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, idat = 8, b""
    width = height = channels = 0
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        chunk = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8
            assert interlace == 0
            channels = {2: 3, 6: 4, 0: 1, 4: 2}[colour]
        elif kind == b"IDAT":
            idat += chunk
        position += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        previous = line
        yield bytes(line)


@pytest.mark.slow
def test_page_renders_in_headless_chromium(
    plan_json: dict[str, Any], tmp_path: pathlib.Path
) -> None:
    browser = shutil.which("chromium")
    if browser is None:
        pytest.fail("chromium is needed: run `make system-deps`")
    page = tmp_path / "round.html"
    page.write_text(report.render_round_html(_audit(plan_json)))
    screenshot = tmp_path / "round.png"
    result = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={screenshot}",
            "--window-size=1024,900",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert screenshot.exists(), result.stderr[-2000:]
    rows = list(_png_pixels(screenshot.read_bytes()))
    assert len(rows) == 900
    colours = {row[i : i + 3] for row in rows[::4] for i in range(0, len(row), 16)}
    # Text, three bar colours and the grey background: far more than a blank page.
    assert len(colours) > 20
    bar_red = bytes.fromhex("c0392b")
    assert any(bar_red in row for row in rows), "the 'before' bars are drawn"


def test_round_page_names_a_node_the_relief_check_found_still_hot_as_left_hot(
    plan_json: dict[str, Any],
) -> None:
    """An audit record whose completion left out a node still over its targets (as
    records did before every hot node was counted): the page still names it, and
    counts the hot nodes relieved out of the plan's hot nodes."""
    audit = _audit(plan_json)
    hot = [n for n in plan_json["nodes"] if n["class"] == "hot"]
    row = audit["verification"]["relief"][0]
    row["verdict"] = "improved"
    audit["completion"] = {
        "result": "complete",
        "summary": "0/1 hot nodes relieved, 1/1 evictions carried out",
        "stopped": None,
        "hotNodes": {"planned": 1, "relieved": 0, "leftHot": []},
        "evictions": {"planned": 1, "carriedOut": 1, "byResult": {"evicted": 1}},
        "nodes": [],
    }
    page = report.render_round_html(audit)
    check_page(page)
    assert f"<th>left hot</th><td>{row['node']}</td>" in page
    assert f"<th>hot nodes relieved</th><td>0/{len(hot)}</td>" in page
