"""Verifying replacements: after each eviction, finding the pod the controller created
and waiting (bounded by verify.timeout) for it to be Ready on a good node.

A replacement anywhere in its landing set is success, and one on another good node is
counted (off-set); one that stays Pending, or lands back on its source, on a hot or
excluded node or on a node it takes over its targets, opens the circuit breaker. With
landing control, where each replacement was bound and when each evicted pod was gone
are told to it as they are seen.
"""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loadaware import plan, scheduling
from loadaware.errors import RefusedError
from loadaware.evict import _state, _stops
from loadaware.evict._execution_report import ExecutionReport, Landing, ReplacementReport
from loadaware.kube import Kube, RawObject
from loadaware.policy import LoadAwarePolicy

# The first wait for a replacement to be bound; later waits double up to poll_seconds.
FIRST_BIND_POLL_SECONDS = 0.1


@dataclass(kw_only=True)
class Waiting:
    """An evicted pod whose replacement is still to be verified."""

    eviction: plan.Eviction
    owner_uid: str
    labels: dict[str, str]
    known_uids: set[str]
    evicted_at: datetime.datetime
    evicted_uid: str = ""
    stopped_by: datetime.datetime | None = None


def off_plan_problem(pod: str, node: str | None, expected: str, node_count: int) -> str:
    """Why a replacement that landed on a good node other than the planned one opens
    the breaker, with the likely cause on a cluster kube-scheduler samples."""
    problem = f"replacement of {pod} landed on {node}, not on {expected} as planned"
    # From minFeasibleNodesToFind nodes kube-scheduler scores only a sample of the
    # feasible ones unless percentageOfNodesToScore is 100.
    if node_count >= scheduling.MIN_FEASIBLE_NODES_TO_FIND:
        problem += (
            f"; with {node_count} nodes, kube-scheduler scores only a sample of them "
            "unless its percentageOfNodesToScore is 100 "
            "(see docs/install.md, kube-scheduler settings)"
        )
    return problem


@dataclass(frozen=True, slots=True)
class Bound:
    """Where a replacement was bound, and when loadaware saw it bound."""

    node: str
    at: datetime.datetime


# Reads per eviction for evicted pods still terminating: a cache answers them from
# memory, an API server without one is spared a read per pod of the round.
DEPARTURES_PER_LOOK = 50


class ReplacementVerifier:
    """Finds and judges the replacements of one round's evictions (see the module)."""

    def __init__(
        self,
        *,
        kube: Kube,
        policy: LoadAwarePolicy,
        clock: Callable[[], datetime.datetime],
        sleep: Callable[[float], None],
        poll_seconds: float,
        stop_requested: Callable[[], str | None],
        check_view: Callable[[], None] | None,
        control: plan.LandingControl | None,
        open_breaker: Callable[[str, ExecutionReport], None],
    ) -> None:
        self._kube = kube
        self._policy = policy
        self._clock = clock
        self._sleep = sleep
        self._poll = poll_seconds
        self._stop_requested = stop_requested
        # Raises RefusedError when the evictor's view of the cluster (the cache its
        # reads come from) is older than its bound: nothing is judged on it then.
        self._check_view = check_view
        self._control = control
        self._open_breaker = open_breaker
        # Evicted pods last seen terminating, oldest first: the landing model counts
        # their requests on their sources until they are seen gone.
        self._departing: dict[str, Waiting] = {}

    def wait_bound(self, waiting: Waiting) -> Bound | None:
        """Hold the taints until kube-scheduler has bound the replacement (or found no
        node for it, or verify.timeout passed): changing them earlier would steer it
        somewhere the plan did not predict. Returns where and when it was seen bound;
        None: it was not."""
        deadline = waiting.evicted_at + self._policy.verify.timeout
        # kube-scheduler binds within a second or so: look again soon, then less often.
        pause = min(FIRST_BIND_POLL_SECONDS, self._poll)
        while True:
            if self._stale() is not None:
                return None
            found = self._replacement(waiting)
            if found is not None:
                node = (found.get("spec") or {}).get("nodeName")
                if node:
                    return Bound(node=node, at=self._clock())
                if _is_unschedulable(found):
                    return None
            if self._clock() >= deadline or self._stop_requested() is not None:
                return None
            self._sleep(pause)
            pause = min(pause * 2, self._poll)

    def is_bound(self, waiting: Waiting) -> bool:
        """Whether the replacement is bound to a node now (one look, no wait)."""
        if self._stale() is not None:
            return False
        found = self._replacement(waiting)
        return found is not None and bool((found.get("spec") or {}).get("nodeName"))

    def note_departures(self, most: int = DEPARTURES_PER_LOOK) -> None:
        """Look again at the evicted pods last seen terminating, oldest first, at most
        `most` of them. kube-scheduler stops counting a pod's requests on its node once
        the pod object is deleted (often well after its replacement is Ready); until
        the landing model learns it, a relieved source looks fuller than it is and
        can outscore a landing set without being steered."""
        if not self._departing or self._stale() is not None:
            return
        assert self._control is not None
        for pod, waiting in list(itertools.islice(self._departing.items(), most)):
            namespace, _, name = pod.partition("/")
            found = self._kube.read_pod(namespace, name)
            if found is None or found["metadata"].get("uid") != waiting.evicted_uid:
                del self._departing[pod]
                self._control.predecessor_gone(waiting.eviction, self._clock())

    def check_outstanding(
        self, waiting: dict[str, Waiting], classes: dict[str, str], report: ExecutionReport
    ) -> None:
        """A look, without waiting, at replacements not yet verified: those Ready are
        verified now; one the scheduler found no node for, or that landed badly,
        opens the breaker before anything else is evicted."""
        if self._stale() is not None:
            return  # judged later, on a current view, or not at all
        for workload, pending in list(waiting.items()):
            found = self._replacement(pending)
            if found is None:
                continue
            node = (found.get("spec") or {}).get("nodeName")
            if (
                _is_ready(found)
                or _is_unschedulable(found)
                or (node and (node == pending.eviction.node or classes.get(node) == "hot"))
                or (node and self._bad_landing(pending.eviction, node) is not None)
            ):
                del waiting[workload]
                if (
                    not self.verify(pending, classes, report, wait=False)
                    or report.stopped is not None
                ):
                    return

    def verify(
        self,
        waiting: Waiting,
        classes: dict[str, str],
        report: ExecutionReport,
        *,
        wait: bool = True,
    ) -> bool:
        """Wait for the replacement to be Ready; False (and the breaker open) when it is
        not, or when it landed on a hot node or back on its source."""
        deadline = waiting.evicted_at + self._policy.verify.timeout
        found: RawObject | None = None
        while True:
            stale = self._stale()
            if stale is not None:
                # Not verified, not failed: a view this old proves nothing either way.
                report.stopped = report.stopped or stale
                return True
            found = self._replacement(waiting)
            if found is not None and (_is_ready(found) or (not wait and _is_unschedulable(found))):
                break
            if not wait or self._clock() >= deadline:
                break
            if (stop := self._stop_requested()) is not None:
                report.stopped = report.stopped or _stops.StopRequestedError(stop)
                # Not verified, not failed: the round was told to stop.
                return True
            self._sleep(self._poll)
        eviction = waiting.eviction
        node = ((found or {}).get("spec") or {}).get("nodeName")
        ready = found is not None and _is_ready(found)
        landing: Landing
        bad = self._bad_landing(eviction, node) if node else None
        if found is None:
            landing = "not-found"
        elif not node:
            landing = "pending"
        elif node == eviction.node:
            landing = "source"
        elif classes.get(node) == "hot":
            landing = "hot"
        elif bad is not None:
            landing = bad  # type: ignore[assignment]
        elif node == eviction.expected_node:
            landing = "expected"
        elif node in eviction.landing_set:
            landing = "in-set"
        elif self._control is not None:
            landing = "off-set"
        elif classes.get(node) == "excluded":
            landing = "excluded"
        else:
            landing = "cool"
        seconds = (self._clock() - waiting.evicted_at).total_seconds() if ready else None
        report.replacements.append(
            ReplacementReport(
                pod=eviction.pod,
                replacement=((found or {}).get("metadata") or {}).get("name"),
                node=node,
                ready=ready,
                seconds_to_ready=seconds,
                landing=landing,
                ready_at=self._clock() if ready else None,
                predecessor_stopped_by=waiting.stopped_by,
            )
        )
        problem: str | None = None
        if landing in ("source", "hot"):
            problem = f"replacement of {eviction.pod} landed on {landing} node {node}"
        elif landing in ("excluded", "over-targets") and self._control is not None:
            what = (
                "an excluded node" if landing == "excluded" else "a node it takes over its targets"
            )
            problem = f"replacement of {eviction.pod} landed on {what}, {node}"
        elif landing in ("cool", "excluded") and eviction.expected_node is not None:
            # The model that chose the landing and its steering taints was wrong
            # here; further moves planned with it are not to be trusted this round.
            problem = off_plan_problem(eviction.pod, node, eviction.expected_node, len(classes))
        elif found is not None and not ready and _is_unschedulable(found):
            problem = f"replacement of {eviction.pod} is unschedulable (no node fits it)"
        elif not ready:
            problem = (
                f"replacement of {eviction.pod} not Ready within "
                f"{self._policy.verify.timeout.total_seconds():.0f}s ({landing})"
            )
        if problem is not None:
            self._open_breaker(problem, report)
            return False
        return True

    def _replacement(self, waiting: Waiting) -> RawObject | None:
        namespace = waiting.eviction.pod.partition("/")[0]
        selector = ",".join(f"{k}={v}" for k, v in sorted(waiting.labels.items()))
        listed = self._kube.list_pods(namespace, selector)
        predecessor = _listed_predecessor(waiting, listed)
        _note_predecessor(waiting, predecessor, self._clock())
        if waiting.evicted_uid and self._control is not None:
            if predecessor is None:
                self._departing.pop(waiting.eviction.pod, None)
                self._control.predecessor_gone(waiting.eviction, self._clock())
            else:
                self._departing.setdefault(waiting.eviction.pod, waiting)
        fresh = [
            p
            for p in listed
            if p["metadata"].get("uid") not in waiting.known_uids
            and not p["metadata"].get("deletionTimestamp")
            and _controlled_by(p, waiting.owner_uid)
        ]
        if not fresh:
            return None
        fresh.sort(key=lambda p: p["metadata"].get("creationTimestamp") or "")
        found = fresh[0]
        node = (found.get("spec") or {}).get("nodeName")
        if node and self._control is not None:
            self._control.replacement_bound(waiting.eviction, node, self._clock())
        return found

    def _stale(self) -> RefusedError | None:
        """Why the view of the cluster is too old to judge on, or None."""
        if self._check_view is None:
            return None
        try:
            self._check_view()
        except RefusedError as exc:
            return exc
        return None

    def _bad_landing(self, eviction: plan.Eviction, node: str) -> str | None:
        """Why landing on `node` is bad (see LandingControl.judge_landing); None when
        it is good or no landing control judges it."""
        if self._control is None:
            return None
        return self._control.judge_landing(eviction, node)


def _listed_predecessor(waiting: Waiting, listed: list[RawObject]) -> RawObject | None:
    """The evicted pod in the same list that finds its replacement, or None: gone."""
    if not waiting.evicted_uid:
        return None
    return next((p for p in listed if p["metadata"].get("uid") == waiting.evicted_uid), None)


def _note_predecessor(
    waiting: Waiting, predecessor: RawObject | None, now: datetime.datetime
) -> None:
    """Learn by when the evicted pod stopped (`predecessor`: it as still listed, or
    None): relief is judged on samples taken after that."""
    if waiting.stopped_by is not None or not waiting.evicted_uid:
        return
    if predecessor is not None:
        # Not yet gone: the kubelet stops it by its deletionTimestamp at the latest.
        deleting = predecessor["metadata"].get("deletionTimestamp")
        waiting.stopped_by = _state.parse_rfc3339(deleting)
        return
    waiting.stopped_by = now


def _controlled_by(pod: RawObject, owner_uid: str) -> bool:
    if not owner_uid:
        return True
    refs: list[dict[str, Any]] = pod["metadata"].get("ownerReferences") or []
    return any(r.get("uid") == owner_uid for r in refs)


def _is_unschedulable(pod: RawObject) -> bool:
    """kube-scheduler tried and found no node (PodScheduled False, reason Unschedulable)."""
    return any(
        c.get("type") == "PodScheduled"
        and c.get("status") == "False"
        and c.get("reason") == "Unschedulable"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _is_ready(pod: RawObject) -> bool:
    status = pod.get("status") or {}
    if not (pod.get("spec") or {}).get("nodeName"):
        return False
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
