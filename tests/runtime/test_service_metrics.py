"""loadaware's own metrics, updated from a round's record.

Covered: the stable names and label sets, counters moving by exactly what a
round did (rounds by result, a partial round not counted a success, refusals
by reason code, bounced replacements, landings against the plan in live
rounds only, eviction-to-Ready), gauges describing the last round (node
classes, per-node utilisation with departed nodes removed, sample age, solver
seconds and gap, budgets), the breaker from the state ConfigMap, and the
Pushgateway push.
"""

from __future__ import annotations

import dataclasses
import datetime
import http.server
import threading

from prometheus_client import REGISTRY

from loadaware import evict, metrics, plan, report, runtime
from loadaware import round as rounds
from loadaware.errors import LoadawareError, RefusedError
from loadaware.round import PartialRoundError, RoundResult
from loadaware.runtime import _service_metrics

NOW = datetime.datetime(2026, 11, 30, 8, 0, tzinfo=datetime.UTC)


def observe(
    record: rounds.RoundRecord,
    usage: metrics.Usage | None = None,
    *,
    error: LoadawareError | None = None,
) -> None:
    runtime.observe_round(RoundResult(record=record, error=error, usage=usage))


def value(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


def node(name: str, node_class: str, cpu: float) -> plan.NodeReport:
    return plan.NodeReport(
        name=name,
        node_class=node_class,  # type: ignore[arg-type]
        pool="default",
        before={"cpu": cpu, "memory": 0.5},
        after={"cpu": cpu, "memory": 0.5},
    )


def outcome(pod: str, result: str) -> evict.EvictionOutcome:
    return evict.EvictionOutcome(
        pod=pod,
        uid="u",
        node="hot-1",
        expected_node="cold-1",
        workload="Deployment/shop/web",
        result=result,  # type: ignore[arg-type]
        reason="hotspot",
        at=NOW,
    )


def replacement(pod: str, landing: str, seconds: float | None) -> evict.ReplacementReport:
    return evict.ReplacementReport(
        pod=pod,
        replacement=f"{pod}-new",
        node="cold-1",
        ready=seconds is not None,
        seconds_to_ready=seconds,
        landing=landing,  # type: ignore[arg-type]
    )


def executed_record(trigger: str = "schedule") -> rounds.RoundRecord:
    planned = plan.Plan(
        status="planned",
        reason="2 evictions",
        nodes=(
            node("hot-1", "hot", 0.93),
            node("cold-1", "cold", 0.2),
            node("mid-1", "normal", 0.5),
        ),
        solver=plan.SolverInfo(method="milp", seconds=0.25, objective=4.0, lower_bound=3.0),
    )
    execution = evict.ExecutionReport(round_id="r1", dry_run=False)
    execution.outcomes.extend([outcome("shop/a", "evicted"), outcome("shop/b", "evicted")])
    execution.replacements.extend(
        [replacement("shop/a", "expected", 4.0), replacement("shop/b", "source", 7.0)]
    )
    execution.breaker = "replacement of shop/b landed on source node hot-1"
    return rounds.RoundRecord(
        round_id="r1",
        trigger=trigger,
        started_at=NOW,
        finished_at=NOW + datetime.timedelta(seconds=42),
        dry_run=False,
        policy_hash="h",
        plan=planned,
        execution=execution,
        status="executed",
        reason="2 evicted",
        budgets={"round": {"maxNoOfPodsToEvictTotal": 5}, "windowLeft": 7},
    )


def test_an_executed_round() -> None:
    rounds = value("loadaware_rounds_total", trigger="schedule", result="executed") or 0
    bounced = value("loadaware_bounced_replacements_total") or 0
    ready_count = value("loadaware_eviction_to_ready_seconds_count") or 0
    duration_count = value("loadaware_round_duration_seconds_count", trigger="schedule") or 0
    usage = metrics.Usage(
        collected_at=NOW,
        nodes={
            "hot-1": metrics.UsageSample(
                cpu_cores=1, memory_bytes=1, timestamp=NOW - datetime.timedelta(seconds=30)
            ),
            "cold-1": metrics.UsageSample(
                cpu_cores=1, memory_bytes=1, timestamp=NOW - datetime.timedelta(seconds=95)
            ),
        },
    )
    observe(executed_record(), usage)

    assert value("loadaware_rounds_total", trigger="schedule", result="executed") == rounds + 1
    assert value("loadaware_round_duration_seconds_count", trigger="schedule") == duration_count + 1
    finished = (NOW + datetime.timedelta(seconds=42)).timestamp()
    assert value("loadaware_last_round_timestamp_seconds", result="executed") == finished
    assert value("loadaware_last_successful_round_timestamp_seconds") == finished
    assert value("loadaware_nodes", **{"class": "hot"}) == 1
    assert value("loadaware_nodes", **{"class": "cold"}) == 1
    assert value("loadaware_nodes", **{"class": "normal"}) == 1
    assert value("loadaware_nodes", **{"class": "excluded"}) == 0
    assert value("loadaware_node_utilisation_ratio", node="hot-1", resource="cpu") == 0.93
    assert value("loadaware_metrics_sample_age_seconds") == 95
    assert value("loadaware_solver_seconds", method="milp") == 0.25
    assert value("loadaware_solver_gap_ratio") == 0.25
    assert value("loadaware_budget_remaining", budget="window") == 7
    assert value("loadaware_budget_remaining", budget="round") == 3
    assert value("loadaware_breaker_open") == 1
    assert value("loadaware_bounced_replacements_total") == bounced + 1
    assert value("loadaware_eviction_to_ready_seconds_count") == ready_count + 2


def test_departed_nodes_leave_the_utilisation_gauge() -> None:
    observe(executed_record())
    record = executed_record()
    record.plan = plan.Plan(
        status="noop",
        reason="nothing hot",
        nodes=(node("cold-1", "cold", 0.1),),
        solver=plan.SolverInfo(method="greedy", seconds=0.01),
    )
    observe(record)
    assert value("loadaware_node_utilisation_ratio", node="hot-1", resource="cpu") is None
    assert value("loadaware_node_utilisation_ratio", node="cold-1", resource="cpu") == 0.1
    assert value("loadaware_solver_seconds", method="milp") is None
    assert value("loadaware_solver_seconds", method="greedy") == 0.01


def test_every_judged_resource_has_a_utilisation_series() -> None:
    gpu_node = plan.NodeReport(
        name="gpu-1",
        node_class="hot",
        pool="gpu",
        before={"cpu": 0.4, "memory": 0.5, "pods": 0.2, "gpu": 0.91},
        after={"cpu": 0.3, "memory": 0.4, "pods": 0.18, "gpu": 0.68},
    )
    record = dataclasses.replace(
        executed_record(), plan=plan.Plan(status="planned", reason="1 eviction", nodes=(gpu_node,))
    )
    observe(record)
    for resource, before in gpu_node.before.items():
        assert value("loadaware_node_utilisation_ratio", node="gpu-1", resource=resource) == before


def test_a_refused_round_counts_its_reason_code() -> None:
    before = value("loadaware_refused_rounds_total", reason="stale-metrics") or 0
    success = value("loadaware_last_successful_round_timestamp_seconds")
    record = rounds.RoundRecord(
        round_id="r2",
        trigger="alertmanager",
        started_at=NOW + datetime.timedelta(hours=1),
        finished_at=NOW + datetime.timedelta(hours=1, seconds=1),
        dry_run=False,
        policy_hash="h",
        status="refused",
        reason="stale-metrics: node-a sample is 900s old (max 120s)",
        exit_code=3,
    )
    observe(
        record,
        error=RefusedError("node-a sample is 900s old (max 120s)", reference="stale-metrics"),
    )
    assert value("loadaware_refused_rounds_total", reason="stale-metrics") == before + 1
    assert value("loadaware_last_successful_round_timestamp_seconds") == success


def test_a_partial_round_is_counted_as_partial_and_not_as_a_success() -> None:
    rounds = value("loadaware_rounds_total", trigger="schedule", result="partial") or 0
    executed = value("loadaware_rounds_total", trigger="schedule", result="executed") or 0
    success = value("loadaware_last_successful_round_timestamp_seconds")
    record = executed_record()
    record.finished_at = NOW + datetime.timedelta(hours=2)
    record.status, record.exit_code = "partial", 1
    observe(record, error=PartialRoundError(record.reason))
    assert value("loadaware_rounds_total", trigger="schedule", result="partial") == rounds + 1
    assert value("loadaware_rounds_total", trigger="schedule", result="executed") == executed
    assert value("loadaware_last_round_timestamp_seconds", result="partial") == (
        record.finished_at.timestamp()
    )
    assert value("loadaware_last_successful_round_timestamp_seconds") == success


def test_breaker_state_from_the_config_map() -> None:
    _service_metrics.observe_state(
        evict.Breaker(open_until=NOW + datetime.timedelta(minutes=1), reason="x"), NOW
    )
    assert value("loadaware_breaker_open") == 1
    _service_metrics.observe_state(evict.Breaker(open_until=NOW, reason="x"), NOW)
    assert value("loadaware_breaker_open") == 0


def test_solver_gap() -> None:
    assert _service_metrics.solver_gap(3.0, 3.0) == 0.0
    assert _service_metrics.solver_gap(None, 3.0) is None
    assert _service_metrics.solver_gap(0.0, 0.0) == 0.0


def test_push_to_a_pushgateway() -> None:
    received: list[tuple[str, str, bytes]] = []

    class Gateway(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_PUT(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            received.append((self.command, self.path, self.rfile.read(length)))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = http.server.HTTPServer(("127.0.0.1", 0), Gateway)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        runtime.push_metrics(f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()
    assert len(received) == 1
    method, path, body = received[0]
    assert (method, path) == ("PUT", "/metrics/job/loadaware")
    assert b"loadaware_rounds_total" in body


def test_profile_counts() -> None:
    from loadaware.plan._types import StrategyCount

    def count(profile: str, rule: str, outcome: str) -> float:
        return (
            value("loadaware_profile_evictions_total", profile=profile, rule=rule, outcome=outcome)
            or 0
        )

    before = (
        count("batch", "RemoveDuplicates", "planned"),
        count("batch", "RemoveDuplicates", "skipped"),
        count("default", "hotspot", "planned"),
    )
    record = executed_record()
    record.plan = plan.Plan(
        status="planned",
        reason="",
        profiles={
            "batch": {"RemoveDuplicates": StrategyCount(planned=2, skipped=1)},
            "default": {"hotspot": StrategyCount(planned=3)},
        },
    )
    observe(record)
    assert count("batch", "RemoveDuplicates", "planned") == before[0] + 2
    assert count("batch", "RemoveDuplicates", "skipped") == before[1] + 1
    assert count("default", "hotspot", "planned") == before[2] + 3
    assert count("default", "hotspot", "skipped") == 0


def test_landings_by_where_in_live_rounds_only() -> None:
    def landings(where: str) -> float | None:
        return value("loadaware_landings_total", where=where)

    wheres = ("planned", "off-set", "bad", "pending")
    for where in wheres:
        assert landings(where) is not None, f"{where} is not pre-created"
    before = {where: landings(where) or 0 for where in wheres}
    record = executed_record()
    assert record.execution is not None
    record.execution.replacements.extend(
        [
            replacement("shop/b", "in-set", 3.0),
            replacement("shop/c", "off-set", 3.0),
            replacement("shop/d", "excluded", 3.0),
            replacement("shop/e", "hot", 3.0),
            replacement("shop/h", "over-targets", 3.0),
            replacement("shop/f", "pending", None),
            replacement("shop/g", "not-found", None),
        ]
    )
    observe(record)
    # expected, in-set; off-set; source, excluded, hot, over-targets; pending, not-found
    assert landings("planned") == before["planned"] + 2
    assert landings("off-set") == before["off-set"] + 1
    assert landings("bad") == before["bad"] + 4
    assert landings("pending") == before["pending"] + 2

    dry = executed_record()
    assert dry.execution is not None
    dry.dry_run = True
    dry.execution.dry_run = True
    observe(dry)
    assert landings("planned") == before["planned"] + 2
    assert landings("bad") == before["bad"] + 4


def test_relief_verdicts_and_model_error_from_live_rounds() -> None:
    def verdicts(role: str, verdict: str) -> float:
        found = value("loadaware_relief_nodes_total", role=role, verdict=verdict)
        assert found is not None, f"{role}/{verdict} is not pre-created"
        return found

    def errors(role: str, resource: str, le: str) -> float:
        return value("loadaware_model_error_ratio_bucket", role=role, resource=resource, le=le) or 0

    keys = [
        ("relieved", "relieved"),
        ("relieved", "not-improved"),
        ("landing", "turned-hot"),
        ("landing", "unverified"),
    ]
    before = {key: verdicts(*key) for key in keys}
    small, large = errors("relieved", "cpu", "0.02"), errors("landing", "cpu", "0.2")
    record = executed_record()
    record.relief = [
        rounds.NodeRelief(
            node="hot-1",
            before={"cpu": 0.9, "memory": 0.5},
            expected={"cpu": 0.6, "memory": 0.5},
            observed={"cpu": 0.61, "memory": 0.5},
            verdict="relieved",
        ),
        rounds.NodeRelief(
            node="hot-2",
            before={"cpu": 0.9, "memory": 0.5},
            expected={"cpu": 0.6, "memory": 0.5},
            observed={"cpu": 0.95, "memory": 0.5},
            verdict="not improved",
        ),
        rounds.NodeRelief(
            node="cold-1",
            role="landing",
            before={"cpu": 0.2, "memory": 0.3},
            expected={"cpu": 0.3, "memory": 0.3},
            observed={"cpu": 0.45, "memory": 0.3},
            verdict="turned hot",
        ),
        rounds.NodeRelief(
            node="cold-2",
            role="landing",
            before={"cpu": 0.2, "memory": 0.3},
            expected={"cpu": 0.3, "memory": 0.3},
            observed=None,
        ),
    ]
    observe(record)
    for key in keys:
        assert verdicts(*key) == before[key] + 1, key
    # |0.61 - 0.6| = 0.01 falls in le=0.02; |0.45 - 0.3| = 0.15 in le=0.2; the
    # unverified node has no error.
    assert errors("relieved", "cpu", "0.02") == small + 1
    assert errors("landing", "cpu", "0.2") == large + 1
    assert report.model_error(record.relief) == {
        "relieved": {"cpu": 0.18, "memory": 0.0},
        "landing": {"cpu": 0.15, "memory": 0.0},
    }


def test_the_tainted_nodes_gauge_is_served() -> None:
    # Set by the evictor as it puts the steering taint on and takes it off (its
    # values: tests/evict/test_taint_footprint_on_sim.py); /metrics serves it, with
    # a value from the start.
    body, _content_type = _service_metrics.render_metrics()
    assert b"# TYPE loadaware_tainted_nodes gauge" in body
    assert value("loadaware_tainted_nodes") is not None
