"""Proof of relief on the simulated API with metrics-server: a live round waits
for samples that cover only time after its moves, judges every relieved and
landing node, and opens the breaker when the cluster did not behave as the
model said. Hot nodes that did not improve make the round partial (exit 1);
one that improved as far as a budget let the plan go does not, but it is left
hot, as is a hot node the budget left no eviction for.

Time is the simulator's: metrics-server samples every 15 s with a 15 s window,
evicted pods terminate for 30 s, and the round's waits move the clock.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from loadaware import evict, report
from loadaware import round as rounds
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import call, sim_server

WINDOW = datetime.timedelta(seconds=15)  # the simulated metrics-server's window


@pytest.fixture
def server():
    with sim_server("small", ready_delay=5.0) as running:
        yield running


def _time(text: str) -> datetime.datetime:
    parsed = evict.parse_rfc3339(text)
    assert parsed is not None, text
    return parsed


def _run(server, tmp_path, policy=None, *, sleep=None, phases=None) -> dict[str, Any]:
    policy = policy or metrics_server_policy()
    fields = {"sleep": sleep} if sleep is not None else {}
    context = live_context(server, tmp_path, policy, **fields)
    options = rounds.RoundOptions(on_phase=phases.append if phases is not None else None)
    record = rounds.run_round(policy, context, options).record
    return report.round_to_json(record)


def test_every_relieved_node_is_judged_on_samples_taken_after_its_pods_stopped(
    server, tmp_path
) -> None:
    phases: list[str] = []
    audit = _run(server, tmp_path, phases=phases)
    assert phases == ["planning", "evicting", "verifying"]
    verification = audit["verification"]
    evicted = [e for e in audit["evictions"] if e["result"] == "evicted"]
    assert evicted
    assert verification["verdict"] == "relieved"
    relief = verification["relief"]
    assert {r["node"] for r in relief} == {e["node"] for e in evicted}
    finished = _time(audit["finishedAt"])
    for row in relief:
        assert row["verdict"] == "relieved"
        changed = _time(row["changedBy"])
        # The evicted pods terminate for their 30 s grace period after the eviction.
        last_eviction = max(_time(e["at"]) for e in evicted if e["node"] == row["node"])
        assert changed >= last_eviction
        # The sample covers only time after the change, and the round waited for it.
        sample = _time(row["sampleTime"])
        assert sample - WINDOW > changed
        assert _time(row["coversFrom"]) == sample - WINDOW
        assert sample <= finished
        for resource, limit in row["targets"].items():
            assert row["observed"][resource] <= limit
            assert abs(row["observed"][resource] - row["expected"][resource]) <= 0.05
    landings = verification["landingNodes"]
    assert {r["node"] for r in landings} == {
        r["node"] for r in verification["replacements"] if r["ready"]
    }
    for row in landings:
        assert row["verdict"] == "within targets"
        assert _time(row["sampleTime"]) - WINDOW > _time(row["changedBy"])
        for resource in row["observed"]:
            assert abs(row["observed"][resource] - row["expected"][resource]) <= 0.05
    assert set(verification["modelError"]) == {"relieved", "landing"}
    assert all(v <= 0.05 for by in verification["modelError"].values() for v in by.values())
    # Polled at the source's resolution: no more reads than 15 s steps in the wait.
    evidence = verification["evidence"]
    assert evidence["pollSeconds"] == 15.0
    assert evidence["timeoutSeconds"] == 30.0  # two metrics-server resolutions
    assert evidence["reads"] <= evidence["waitedSeconds"] / 15.0 + 1
    assert audit["exitCode"] == 0


def test_no_evidence_within_the_timeout_leaves_the_nodes_unverified(server, tmp_path) -> None:
    """metrics-server stops answering once the evictions are done: the round waits
    verify.reliefTimeout after the last change and says why each node is unverified."""
    policy = metrics_server_policy(verify={"reliefTimeout": "45s"})
    context = live_context(server, tmp_path, policy)

    def failing_after_the_evictions(step: str) -> None:
        if step == "verifying":
            call(server, "POST", "/_sim/faults", {"path": "/apis/metrics.k8s.io", "status": 503})

    record = rounds.run_round(
        policy, context, rounds.RoundOptions(on_phase=failing_after_the_evictions)
    ).record
    audit = report.round_to_json(record)
    verification = audit["verification"]
    assert verification["verdict"].startswith("partly unverified"), verification["verdict"]
    rows = verification["relief"] + verification["landingNodes"]
    assert rows
    for row in rows:
        assert row["verdict"] == "unverified"
        assert row["observed"] is None
        assert "could not be read" in row["why"], row["why"]
        assert "45s" in row["why"], row["why"]
    latest = max(_time(r["changedBy"]) for r in rows)
    # Waited until the timeout after the latest change, and no longer than one poll past it.
    assert latest + datetime.timedelta(seconds=45) <= _time(audit["finishedAt"])
    assert _time(audit["finishedAt"]) <= latest + datetime.timedelta(seconds=45 + 15)
    # Unverified is not a failure: no breaker.
    assert verification["breaker"] is None
    assert audit["exitCode"] == 0


def _heat(server, started: datetime.datetime, cpu_cores: float) -> None:
    """Replacements created since `started` use `cpu_cores` each: the workload runs
    hotter on its new node than it did on the old one (a cold cache, a noisy
    neighbour), which no model of the old usage can know."""
    for pod in server.list("pods"):
        created = _time(pod["metadata"]["creationTimestamp"])
        if created > started and pod["spec"].get("nodeName"):
            server.set_pod_usage(
                pod["metadata"]["namespace"], pod["metadata"]["name"], cpu_cores, 256 * 1024**2
            )


def test_a_landing_node_that_turns_hot_opens_the_breaker(server, tmp_path) -> None:
    started = server.clock.now()

    def sleep(seconds: float) -> None:
        server.advance(seconds)
        _heat(server, started, cpu_cores=6.0)

    audit = _run(server, tmp_path, sleep=sleep)
    verification = audit["verification"]
    hot = [r for r in verification["landingNodes"] if r["verdict"] == "turned hot"]
    assert hot, verification["landingNodes"]
    for row in hot:
        assert any(row["observed"][r] > limit for r, limit in row["targets"].items())
        assert row["observed"]["cpu"] > row["expected"]["cpu"] + 0.05
    assert "landing node turned hot" in verification["verdict"]
    assert verification["breaker"] == verification["verdict"]
    # The breaker holds for later rounds.
    again = _run(server, tmp_path)
    assert again["status"] == "refused"
    assert again["reason"].startswith("breaker-open")


def test_a_hotspot_that_does_not_improve_opens_the_breaker(server, tmp_path) -> None:
    """The pods left on the hot nodes take up what the evicted ones used, and more."""
    plan = _run(server, tmp_path, metrics_server_policy(dryRun=True))
    moved = {e["pod"] for e in plan["evictions"]}
    # One pod that stays on each source takes up the usage of those that leave.
    heavier: dict[str, tuple[str, str, float, float]] = {}
    for pod in server.list("pods"):
        node, meta = pod["spec"].get("nodeName"), pod["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        leaving = [e for e in plan["plan"]["evictions"] if e["node"] == node]
        if leaving and key not in moved and node not in heavier:
            cpu, memory = server.usage.pods[key]
            heavier[node] = (
                meta["namespace"],
                meta["name"],
                cpu + sum(e["cpu"] for e in leaving) + 0.2,
                memory + sum(e["memory"] for e in leaving),
            )
    assert heavier

    def sleep(seconds: float) -> None:
        server.advance(seconds)
        for namespace, name, cpu, memory in heavier.values():
            server.set_pod_usage(namespace, name, cpu, memory)

    audit = _run(server, tmp_path, sleep=sleep)
    verification = audit["verification"]
    worse = [r for r in verification["relief"] if r["verdict"] == "not improved"]
    assert worse, verification["relief"]
    assert "hotspot did not improve" in verification["breaker"]
    # Every eviction was carried out, and the nodes it was for are still hot.
    planned = len(audit["plan"]["evictions"])
    assert audit["status"] == "partial"
    assert audit["exitCode"] == 1
    assert verification["verdict"].startswith(
        f"partial: 0/{len(worse)} hot nodes relieved, {planned}/{planned} evictions carried out; "
        f"left hot: {', '.join(r['node'] for r in worse)}"
    ), verification["verdict"]
    assert verification["verdict"].endswith(f"; relief check: {verification['breaker']}")
    assert audit["completion"]["hotNodes"]["leftHot"] == [r["node"] for r in worse]


def test_a_budget_that_stops_short_leaves_the_hotspot_improved(server, tmp_path) -> None:
    """One eviction in all: the hot node it came from is cooler, not cool enough,
    and the other hot node, which the budget left no eviction for, is as hot as
    it was. Both are left hot, in the audit record, the table and the page."""
    policy = metrics_server_policy(limits={"maxNoOfPodsToEvictTotal": 1})
    context = live_context(server, tmp_path, policy)
    record = rounds.run_round(policy, context).record
    audit = report.round_to_json(record)
    verification = audit["verification"]
    hot = sorted(n["name"] for n in audit["plan"]["nodes"] if n["class"] == "hot")
    [source] = {e["node"] for e in audit["evictions"]}
    [untouched] = set(hot) - {source}
    row, left = verification["relief"]
    assert row["node"] == source
    assert row["verdict"] == "improved", row
    over = [r for r, limit in row["targets"].items() if row["observed"][r] > limit]
    assert over
    assert all(row["observed"][r] < row["before"][r] for r in over)
    # The hot node no eviction was planned from: left hot, with the plan's reason.
    assert (left["node"], left["verdict"], left["observed"]) == (untouched, "left hot", None)
    assert left["why"] == "still hot: budget maxNoOfPodsToEvictTotal reached"
    assert any(left["before"][r] > limit for r, limit in left["targets"].items())
    assert verification["leftHot"] == hot
    assert verification["verdict"] == (
        f"left hot: {', '.join(hot)}; relief check: improved: still over its targets: {source}"
    )
    # Improved is not a failure: no breaker.
    assert verification["breaker"] is None
    # The plan said both nodes would stay hot (the budget ran out), and the one it
    # moved a pod off improved as planned: the round did what it set out to do.
    assert audit["status"] == "executed"
    assert audit["exitCode"] == 0
    nodes = {n["node"]: n for n in audit["completion"]["nodes"]}
    assert nodes[source]["result"] == "improved-as-planned"
    assert nodes[source]["expectedWithinTargets"] is False
    assert nodes[untouched]["result"] == "hot-as-planned"
    assert nodes[untouched]["plannedEvictions"] == 0
    assert audit["completion"]["hotNodes"] == {
        "planned": len(hot),
        "relieved": 0,
        "leftHot": hot,
        "fellShort": [],
    }
    # Per round: where the replacements landed against the plan.
    assert verification["landings"] == {"planned": 1, "off-set": 0, "bad": 0, "pending": 0}
    # The table a person reads and the HTML page say the same.
    table = report.render_round_table(record)
    assert f"hot nodes relieved: 0/{len(hot)} (left hot: {', '.join(hot)})\n" in table
    relief = table.split("\nRELIEF ", 1)[1].splitlines()
    assert relief[1].split()[:3] == ["NODE", "ROLE", "VERDICT"]
    assert [line.split()[:3] for line in relief[2:4]] == [
        [source, "hot", "improved"],
        [untouched, "hot", "left"],
    ]
    assert relief[3].endswith("still hot: budget maxNoOfPodsToEvictTotal reached")
    page = report.render_round_html(audit)
    assert f"<th>hot nodes relieved</th><td>0/{len(hot)}</td>" in page
    assert f"<th>left hot</th><td>{', '.join(hot)}</td>" in page
    assert (
        f"<th>hot nodes after, observed</th><td>1: {source}; left hot, not read again: "
        f"{untouched}</td>"
    ) in page


def test_a_node_crowded_by_pod_count_is_relieved_and_judged_by_its_count(server, tmp_path) -> None:
    """A pool judging `pods` alone: default-a-002 holds 23 of its 110 pod slots,
    over a 19% target; the round moves pods off it until it is under, and judges
    the count read back from the API once the moved pods are gone."""
    pool = {"name": "default", "thresholds": {"pods": 5}, "targetThresholds": {"pods": 19}}
    audit = _run(server, tmp_path, metrics_server_policy(nodePools=[pool]))
    hot = {n["name"] for n in audit["plan"]["nodes"] if n["class"] == "hot"}
    assert hot == {"default-a-002"}
    verification = audit["verification"]
    assert verification["verdict"] == "relieved", verification["verdict"]
    [row] = verification["relief"]
    count = sum(1 for p in server.list("pods") if p["spec"].get("nodeName") == "default-a-002")
    assert row["observed"]["pods"] == pytest.approx(count / 110, abs=1e-4)
    assert row["observed"]["pods"] <= 0.19
    assert row["observed"]["pods"] == pytest.approx(row["expected"]["pods"], abs=1e-4)
    for landing in verification["landingNodes"]:
        assert landing["verdict"] == "within targets"
        assert landing["observed"]["pods"] <= 0.19
