"""The landing model learns when an evicted pod is gone, also after its replacement
was verified.

kube-scheduler counts a terminating pod's requests on its node until the pod
object is deleted, often well after the replacement is Ready. A predecessor
still terminating when its replacement was verified must be looked at again, or
the model keeps its requests on the (relieved) source for the rest of the round,
scores that source lower than kube-scheduler does, and leaves it unsteered while
it outscores the next landing sets.

The landing control here only records what the verifier tells it: the verifier's
reads of the simulated API are what is under test.
"""

from __future__ import annotations

import datetime
import pathlib
from typing import Any

from loadaware import plan
from loadaware.evict import _verify
from loadaware.evict._execution_report import ExecutionReport
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import sim_server


class _RecordedControl:
    """What a LandingControl is told of one eviction's predecessor and replacement."""

    def __init__(self) -> None:
        self.gone: list[str] = []
        self.bound: list[tuple[str, str]] = []

    def predecessor_gone(self, eviction: plan.Eviction, at: datetime.datetime) -> None:
        self.gone.append(eviction.pod)

    def replacement_bound(self, eviction: plan.Eviction, node: str, at: datetime.datetime) -> None:
        self.bound.append((eviction.pod, node))

    def judge_landing(self, eviction: plan.Eviction, node: str) -> str | None:
        return None


def _replicated_pod(server: Any) -> dict[str, Any]:
    return next(
        p
        for p in server.list("pods")
        if any(o.get("kind") == "ReplicaSet" for o in p["metadata"].get("ownerReferences") or [])
        and p["spec"].get("nodeName")
    )


def test_a_predecessor_terminating_past_its_replacements_verification_is_seen_gone(
    tmp_path: pathlib.Path,
) -> None:
    with sim_server("small", ready_delay=1.0) as server:
        policy = metrics_server_policy()
        context = live_context(server, tmp_path, policy)
        control = _RecordedControl()
        verifier = _verify.ReplacementVerifier(
            kube=context.kube,
            policy=policy,
            clock=server.clock.now,
            sleep=server.advance,
            poll_seconds=1.0,
            stop_requested=lambda: None,
            check_view=None,
            control=control,  # type: ignore[arg-type]
            open_breaker=lambda problem, report: None,
        )
        pod = _replicated_pod(server)
        meta = pod["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        owner = meta["ownerReferences"][0]["uid"]
        known = {p["metadata"]["uid"] for p in server.list("pods", meta["namespace"])}
        evicted_at = server.clock.now()
        context.kube.evict_pod(
            meta["namespace"], meta["name"], uid=meta["uid"], grace_period_seconds=30, dry_run=False
        )
        waiting = _verify.Waiting(
            eviction=plan.Eviction(
                pod=key,
                node=pod["spec"]["nodeName"],
                expected_node=None,
                cpu_cores=0.1,
                memory_bytes=0.0,
                uid=meta["uid"],
            ),
            owner_uid=owner,
            labels=dict(meta.get("labels") or {}),
            known_uids=known,
            evicted_at=evicted_at,
            evicted_uid=meta["uid"],
        )

        bound = verifier.wait_bound(waiting)
        assert bound is not None
        server.advance(5)  # the replacement is Ready; its predecessor still terminates
        outstanding = {"workload": waiting}
        verifier.check_outstanding(outstanding, {}, ExecutionReport(round_id="r", dry_run=False))
        assert outstanding == {}, "the Ready replacement was verified"
        verifier.note_departures()
        assert control.gone == []

        server.advance(60)  # past the grace period: the pod object is deleted
        verifier.note_departures()
        assert control.gone == [key]
        verifier.note_departures()
        assert control.gone == [key], "told once"
