"""One place that records what happened to each planned eviction: the log line,
the metric and the Kubernetes Event, so the three never disagree."""

from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass
from typing import Literal

from prometheus_client import Counter

from loadaware.kube import Kube

log = logging.getLogger(__name__)

Result = Literal[
    "evicted",  # the API accepted the eviction
    "dry-run",  # accepted with dryRun=All: nothing changed
    "refused-pdb",  # 429: a PodDisruptionBudget said no
    "gone",  # 404: already gone
    "skipped",  # not attempted: a re-check or a budget said no (see reason)
    "failed",  # 409, 5xx, timeout: the round stopped
]

EVICTIONS = Counter(
    "loadaware_evictions_total",
    "Planned evictions by what happened to them.",
    ["result", "reason", "namespace", "node"],
)


@dataclass(frozen=True, slots=True, kw_only=True)
class EvictionOutcome:
    pod: str
    uid: str
    node: str
    expected_node: str | None
    workload: str
    result: Result
    reason: str  # the rule that planned it ("hotspot"), or why it was skipped or failed
    at: datetime.datetime
    budget: str = ""  # which budget stopped it, when one did
    steer: tuple[str, ...] = ()  # nodes carrying the steering taint when it was sent
    landing_set: tuple[str, ...] = ()  # every good node its replacement may land on


def record_outcome(
    outcome: EvictionOutcome,
    *,
    kube: Kube | None,
    round_id: str,
    dry_run: bool,
    progress: str | None = None,
) -> None:
    """`progress`: which planned eviction this was, "3/12", for the log line."""
    namespace, _, name = outcome.pod.partition("/")
    extra = {
        "round": round_id,
        "progress": progress,
        "pod": outcome.pod,
        "namespace": namespace,
        "node": outcome.node,
        "expected_node": outcome.expected_node,
        "result": outcome.result,
        "reason": outcome.reason,
        "dry_run": dry_run,
    }
    level = logging.WARNING if outcome.result == "failed" else logging.INFO
    log.log(level, "eviction outcome", extra=extra)
    EVICTIONS.labels(outcome.result, outcome.reason, namespace, outcome.node).inc()
    if kube is None or outcome.result in ("dry-run", "gone"):
        return
    evicted = outcome.result == "evicted"
    message = (
        f"evicted by loadaware ({outcome.reason}) from hot node {outcome.node}; "
        f"replacement expected on {outcome.expected_node or 'any node'}; round {round_id}"
        if evicted
        else f"loadaware did not evict ({outcome.result}: {outcome.reason}); round {round_id}"
    )
    stamp = outcome.at.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{name}.loadaware-", "namespace": namespace},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": namespace,
            "name": name,
            "uid": outcome.uid,
        },
        "reason": "LoadawareEvicted" if evicted else "LoadawareEvictionSkipped",
        "message": message,
        "type": "Normal" if evicted else "Warning",
        "source": {"component": "loadaware"},
        "reportingComponent": "loadaware",
        "reportingInstance": "loadaware",
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }
    try:
        kube.create_event(namespace, event)
    except Exception:
        # An Event is a courtesy; failing to post one must not stop the round.
        log.warning("could not post event", extra=extra, exc_info=True)
