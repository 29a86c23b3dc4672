"""The re-check before each eviction answers as data, and the executor acts on it.

Covers: Skip(reason) leaves that pod with the reason as its outcome and the
round goes on; Stop(error) ends the evictions, the error itself is the report's
`stopped` (a refusal stays a RefusedError, a stop asked for a
StopRequestedError) and its summary() is what the outcomes and the audit record
say; round.Rechecker answers Stop with the source's refusal, Stop when a stop is
asked for, and Skip when the source is no longer hot. Against the simulated API
with the official client, in dry run (nothing is changed).
"""

from __future__ import annotations

import dataclasses
import datetime
import pathlib

import pytest

from loadaware import cluster, evict, metrics, plan, policy, report
from loadaware import round as rounds
from loadaware.errors import RefusedError
from loadaware.round import _recheck
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import sim_server


@pytest.fixture(scope="module")
def server():
    with sim_server("small") as running:
        yield running


def _planned(
    server, tmp_path: pathlib.Path
) -> tuple[
    policy.LoadAwarePolicy, rounds.RoundContext, cluster.ClusterState, metrics.Usage, plan.Plan
]:
    settings = metrics_server_policy()
    context = live_context(server, tmp_path, settings)
    snapshot = context.read_cluster()
    usage = context.read_usage(snapshot)
    planned = rounds.timed_plan(snapshot, usage, settings, context.clock())
    assert len(planned.evictions) >= 3, "the small scenario plans at least three evictions"
    return settings, context, snapshot, usage, planned


def _execute(
    server, tmp_path: pathlib.Path, recheck: evict.Recheck
) -> tuple[plan.Plan, evict.ExecutionReport]:
    settings, context, snapshot, _, planned = _planned(server, tmp_path)
    executor = evict.Executor(
        kube=context.kube,
        state=evict.StateStore(context.kube, settings, context.clock),
        policy=settings,
        clock=context.clock,
        sleep=context.sleep,
        round_id="recheck",
        dry_run=True,
    )
    return planned, executor.run(planned, snapshot, recheck)


def test_skip_and_stop_reach_the_report_as_data(server, tmp_path) -> None:
    refusal = RefusedError("node-a sample is 900s old (max 120s)", reference="stale-metrics")
    answers: list[evict.RecheckOutcome] = [
        evict.PROCEED,
        evict.Skip("not this one"),
        evict.Stop(refusal),
    ]
    asked: list[str] = []

    def recheck(eviction: plan.Eviction) -> evict.RecheckOutcome:
        asked.append(eviction.pod)
        return answers[len(asked) - 1]

    planned, execution = _execute(server, tmp_path, recheck)
    pods = [e.pod for e in planned.evictions]
    assert asked == pods[:3], "nothing is re-checked after the stop"
    outcomes = [(o.pod, o.result, o.reason) for o in execution.outcomes]
    assert outcomes[0] == (pods[0], "dry-run", planned.evictions[0].reason)
    assert outcomes[1] == (pods[1], "skipped", "not this one")
    assert outcomes[2] == (
        pods[2],
        "skipped",
        "stale-metrics: node-a sample is 900s old (max 120s)",
    )
    assert all(
        reason == "round stopped: stale-metrics: node-a sample is 900s old (max 120s)"
        for _, _, reason in outcomes[3:]
    )
    assert len(outcomes) == len(pods)
    # The error itself, not a text about it: the round keeps it a refusal (exit 3).
    assert execution.stopped is refusal
    assert execution.stop_reason == refusal.summary()
    audit = report.round_to_json(
        rounds.RoundRecord(
            round_id="recheck",
            trigger="once",
            started_at=datetime.datetime.now(datetime.UTC),
            dry_run=True,
            policy_hash="test",
            plan=planned,
            execution=execution,
        )
    )
    assert audit["verification"]["stopped"] == "stale-metrics: node-a sample is 900s old (max 120s)"


def test_a_stop_asked_for_reads_as_it_was_asked(server, tmp_path) -> None:
    def recheck(eviction: plan.Eviction) -> evict.RecheckOutcome:
        return evict.Stop(evict.StopRequestedError("SIGTERM received"))

    planned, execution = _execute(server, tmp_path, recheck)
    assert isinstance(execution.stopped, evict.StopRequestedError)
    assert not isinstance(execution.stopped, RefusedError)
    assert execution.stop_reason == "SIGTERM received"
    assert [(o.result, o.reason) for o in execution.outcomes] == [
        ("skipped", "SIGTERM received"),
        *[("skipped", "round stopped: SIGTERM received")] * (len(planned.evictions) - 1),
    ]


def test_the_rechecker_answers_stop_on_a_refusal_and_on_a_stop(server, tmp_path) -> None:
    settings, context, snapshot, usage, planned = _planned(server, tmp_path)
    first = planned.evictions[0]
    refusal = RefusedError("the source answered 503", reference="metrics-query-failed")

    def refusing(state: cluster.ClusterState) -> metrics.Usage:
        raise refusal

    stopping = _recheck.Rechecker(
        settings,
        snapshot,
        usage,
        read_usage=context.read_usage,
        clock=context.clock,
        stop_requested=lambda: "lost-leadership",
    )
    answer = stopping(first)
    assert isinstance(answer, evict.Stop)
    assert isinstance(answer.error, evict.StopRequestedError)
    assert answer.error.summary() == "lost-leadership"

    refused = _recheck.Rechecker(
        settings, snapshot, usage, read_usage=refusing, clock=context.clock
    )(first)
    assert refused == evict.Stop(refusal)

    fresh = _recheck.Rechecker(
        settings, snapshot, usage, read_usage=context.read_usage, clock=context.clock
    )
    assert fresh(first) == evict.PROCEED


def test_the_rechecker_skips_a_source_no_longer_hot(server, tmp_path) -> None:
    settings, context, snapshot, usage, planned = _planned(server, tmp_path)
    first = next(e for e in planned.evictions if e.reason == "hotspot")

    def cooled(state: cluster.ClusterState) -> metrics.Usage:
        read = context.read_usage(state)
        calm = dataclasses.replace(read.nodes[first.node], cpu_cores=0.0, memory_bytes=0)
        return dataclasses.replace(read, nodes={**read.nodes, first.node: calm})

    answer = _recheck.Rechecker(settings, snapshot, usage, read_usage=cooled, clock=context.clock)(
        first
    )
    assert answer == evict.Skip(plan.SOURCE_NOT_HOT)


def test_the_rechecker_reads_the_nodes_usage_not_every_pods(server, tmp_path) -> None:
    # Whether a source is still hot is its node's usage: the pods' samples (150,000
    # at 5,000 nodes) are not read again before each eviction.
    settings, context, snapshot, usage, planned = _planned(server, tmp_path)
    recheck = _recheck.Rechecker(
        settings,
        snapshot,
        usage,
        read_usage=context.read_usage,
        clock=context.clock,
        reuse_seconds=0.0,
    )
    server.sim.requests.clear()
    answers = [recheck(e) for e in planned.evictions[:3]]
    assert answers == [evict.PROCEED] * 3
    counts = server.sim.requests.counts()
    assert counts.get(("list", "nodes.metrics.k8s.io"), 0) == 3
    assert counts.get(("list", "pods.metrics.k8s.io"), 0) == 0


def test_the_rechecker_classifies_the_sources_it_is_asked_about_not_every_node(
    server, tmp_path
) -> None:
    # A node's class is its own usage against its pool's targets: each reading
    # classifies the sources the re-checks ask about, not the whole cluster again.
    settings, context, snapshot, usage, planned = _planned(server, tmp_path)
    hotspot = [e for e in planned.evictions if e.reason == "hotspot"]
    sources = {e.node for e in hotspot[:3]}
    recheck = _recheck.Rechecker(
        settings, snapshot, usage, read_usage=context.read_usage, clock=context.clock
    )
    answers = [recheck(e) for e in hotspot[:3]]
    assert answers == [evict.PROCEED] * 3
    assert recheck.classified == len(sources) < len(snapshot.nodes)
    # As classifying every node at once says.
    every = plan.classify_nodes(
        snapshot,
        context.read_usage(dataclasses.replace(snapshot, pods=())),
        settings.node_pools,
        {},
        allocatable_names=plan.allocatable_names(settings),
    )
    assert {node: every.classes[every.index[node]] for node in sources} == dict.fromkeys(
        sources, "hot"
    )

    # Targets as distances from a pool's mean: every node's class depends on all of them.
    pool = {
        "name": "all",
        "useDeviationThresholds": True,
        "thresholds": {"cpu": 10, "memory": 10},
        "targetThresholds": {"cpu": 10, "memory": 10},
    }
    deviation = metrics_server_policy(nodePools=[pool])
    recheck = _recheck.Rechecker(
        deviation, snapshot, usage, read_usage=context.read_usage, clock=context.clock
    )
    for eviction in hotspot[:3]:
        recheck(eviction)
    assert recheck.classified == len(snapshot.nodes)


def test_the_rechecker_reads_only_the_nodes_it_will_ask_about(server, tmp_path) -> None:
    # Usage is read again every 15 s: judging the whole cluster's samples each time
    # grew with the cluster, not with the round.
    settings, context, snapshot, usage, planned = _planned(server, tmp_path)
    hotspot = [e for e in planned.evictions if e.reason == "hotspot"]
    asked = {e.node for e in hotspot}
    read_for: list[set[str]] = []

    def reading(state: cluster.ClusterState) -> metrics.Usage:
        read_for.append({n.name for n in state.nodes})
        assert not state.pods
        return context.read_usage(state)

    recheck = _recheck.Rechecker(
        settings, snapshot, usage, read_usage=reading, clock=context.clock, asked=asked
    )
    assert [recheck(e) for e in hotspot[:3]] == [evict.PROCEED] * 3
    assert read_for == [asked]
    assert len(asked) < len(snapshot.nodes)

    # Where each node's class depends on every node's usage, every node is read.
    pool = {
        "name": "all",
        "useDeviationThresholds": True,
        "thresholds": {"cpu": 10, "memory": 10},
        "targetThresholds": {"cpu": 10, "memory": 10},
    }
    read_for.clear()
    _recheck.Rechecker(
        metrics_server_policy(nodePools=[pool]),
        snapshot,
        usage,
        read_usage=reading,
        clock=context.clock,
        asked=asked,
    )(hotspot[0])
    assert read_for == [{n.name for n in snapshot.nodes}]
