"""Landing control during a round: each planned move's landing derived again from
the cluster as observed just before its eviction.

A plan is made once; the cluster it is carried out in is not the one it
assumed by the tenth eviction. kube-scheduler samples nodes, so a replacement
lands anywhere in its landing set, not on the planned node; the next moves'
scores, room and rivals depend on where it went. So the evictor keeps a
LandingControl for the round: it starts from the cluster and usage the plan was
made on (from_basis: the planner's own node table, candidates and Placement,
the plan's moves undone, so nothing is classified twice), learns where each
replacement was bound and when each predecessor is gone, moves the pod's usage
from its source to where it really landed, and before each eviction derives
that move's landing set and steer set with the same functions the planner uses
(`Placement.landing`). It also says whether a source is still over its targets,
and whether an observed landing is good.

Pure: the evictor tells it what it observed; it reads no clock and no API.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from loadaware import metrics, scheduling
from loadaware.cluster import ClusterState, Pod
from loadaware.errors import RefusedError
from loadaware.metrics import Usage
from loadaware.plan import _build, _classify, _profiles
from loadaware.plan._basis import LandingBasis
from loadaware.plan._budget import NO_CARRIED_BUDGET
from loadaware.plan._placement import Placement
from loadaware.plan._problem import HOTSPOT, Candidate, Problem
from loadaware.plan._types import Eviction, Plan
from loadaware.policy import LoadAwarePolicy

# Why a planned move is not carried out, as the evictor records it.
SOURCE_NOT_HOT = "source-no-longer-hot"
NO_GOOD_LANDING = "no-good-landing"
UNKNOWN_POD = "not-in-plan"

# Why an observed landing is bad.
BAD_SOURCE = "source"
BAD_HOT = "hot"
BAD_EXCLUDED = "excluded"
BAD_OVER_TARGETS = "over-targets"


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveLanding:
    """A move's landing as derived now: where the replacement is expected, the nodes
    to carry the soft taint, every node it may land on; or why not to evict."""

    expected_node: str | None = None
    steer: tuple[str, ...] = ()
    landing_set: tuple[str, ...] = ()
    skip: str | None = None  # a reason not to evict: the move no longer holds

    def applied_to(self, eviction: Eviction) -> Eviction:
        return dataclasses.replace(
            eviction,
            expected_node=self.expected_node,
            steer=self.steer,
            landing_set=self.landing_set,
        )


class LandingControl:
    """The round's cluster as observed, and each move's landing derived from it."""

    def __init__(
        self,
        problem: Problem,
        candidates: dict[str, Candidate],
        placement: Placement | None = None,
    ) -> None:
        """`placement`: one built on `problem` with nothing applied, which the
        control takes over; None builds it."""
        self._problem = problem
        self._placement = placement if placement is not None else Placement(problem)
        self._candidates = candidates
        self._names = problem.table.names
        self._landed: dict[str, int | None] = {}  # pod key -> where its replacement is
        self._terminating: set[str] = set()  # pod keys of predecessors marked deleted
        self._gone: set[str] = set()

    @classmethod
    def from_basis(cls, basis: LandingBasis) -> LandingControl:
        """Built on what the planner made the plan on (plan_with_basis): its node
        table, its candidates and its Placement, the plan's moves undone, which this
        control takes over. What for_plan derives again, without deriving it."""
        basis.placement.restore()
        candidates = {c.pod.key: c for c in basis.candidates}
        return cls(basis.problem, candidates, basis.placement)

    @classmethod
    def for_plan(
        cls,
        cluster: ClusterState,
        usage: Usage,
        policy: LoadAwarePolicy,
        now: datetime.datetime,
        planned: Plan,
    ) -> LandingControl:
        """Built on the cluster, usage and policy `planned` was made on (the same
        classification), for its evictions: for a caller that has only the Plan
        (a round that planned has its basis: from_basis)."""
        scopes = _classify.node_scopes(cluster, policy.node_pools)
        try:
            assessment = metrics.assess_usage(usage, scopes, policy.metrics, now)
        except RefusedError:
            assessment = metrics.UsageAssessment()
        table = _build.classify_for_plan(cluster, usage, policy, assessment)
        pods = {p.key: p for p in cluster.pods}
        must: dict[str, Candidate] = {}
        if any(e.reason != HOTSPOT for e in planned.evictions):
            # The strategies' landing rules (a spread constraint, a node's taints)
            # hold for the moves they named, re-derived or not.
            profiles = _profiles.scoped_profiles(policy, cluster)
            found = _build._must_moves(
                cluster,
                usage,
                table,
                assessment.stale_pods,
                now,
                NO_CARRIED_BUDGET,
                None,
                profiles,
                _profiles.Tally(),
                Counter(),
            )
            must = {c.pod.key: c for c in found}
        candidates: dict[str, Candidate] = {}
        for eviction in planned.evictions:
            pod = pods.get(eviction.pod)
            if pod is None or eviction.node not in table.index:
                continue
            if eviction.pod in must:
                candidates[eviction.pod] = must[eviction.pod]
                continue
            terminal = pod.phase == "Failed"
            sample = usage.pods.get(eviction.pod)
            candidates[eviction.pod] = Candidate(
                pod=pod,
                node_index=table.index[eviction.node],
                usage=table.pod_usage(None if terminal else sample),
                prefer_no_eviction=False,
                pdbs=(),
                reason=eviction.reason,
                terminal=terminal,
            )
        problem = Problem(
            cluster=cluster,
            policy=policy,
            table=table,
            candidates={},
            target_indexes=_build.target_indexes(cluster, table),
        )
        return cls(problem, candidates)

    def landing(self, eviction: Eviction, held: Iterable[str] = ()) -> MoveLanding:
        """The move's landing, derived from the cluster as observed now. `held`: nodes
        that stay tainted meanwhile for replacements not yet bound; they count against
        steering.maxTaintedFraction with the move's own steer set."""
        candidate = self._candidates.get(eviction.pod)
        if candidate is None:
            return MoveLanding(skip=UNKNOWN_POD)
        if not candidate.must_move and not self._problem.is_hot(
            self._placement.usage, candidate.node_index
        ):
            # The moves carried out so far relieved it already.
            return MoveLanding(skip=SOURCE_NOT_HOT)
        index = self._names_index
        self._placement.hold(frozenset(index[n] for n in held if n in index))
        found = self._placement.landing(candidate)
        if found.reason is not None:
            where = f" on {self._names[found.where]}" if found.where is not None else ""
            return MoveLanding(skip=f"{NO_GOOD_LANDING}: {found.reason}{where}")
        names = self._names
        return MoveLanding(
            expected_node=None if found.target is None else names[found.target],
            steer=tuple(sorted(names[i] for i in found.steer)),
            landing_set=tuple(sorted(names[i] for i in found.landing_set)),
        )

    def replacement_bound(self, eviction: Eviction, node: str, at: datetime.datetime) -> None:
        """The replacement of the evicted pod was bound to `node`: its requests count
        there, and the pod's usage moves from its source to it. The predecessor's
        requests stay on its source until it is gone, as kube-scheduler counts them."""
        candidate = self._candidates.get(eviction.pod)
        if candidate is None or eviction.pod in self._landed or node not in self._names_index:
            return
        occupancy = self._placement.occupancy
        if scheduling.recreated_after_deletion(candidate.pod):
            # A StatefulSet recreates its pod only once the old one is gone.
            self.predecessor_gone(eviction, at)
        else:
            self._mark_terminating(candidate.pod, at)
        target = self._names_index[node]
        occupancy.add(scheduling.replacement_of(candidate.pod), node)
        usage = self._placement.usage
        usage[candidate.node_index] -= candidate.usage
        usage[target] += candidate.usage
        self._landed[eviction.pod] = target

    def predecessor_gone(self, eviction: Eviction, at: datetime.datetime) -> None:
        """The evicted pod's object is deleted: nothing of it counts any more."""
        candidate = self._candidates.get(eviction.pod)
        if candidate is None or eviction.pod in self._gone:
            return
        occupancy = self._placement.occupancy
        if occupancy.placed_index(candidate.pod) is not None:
            occupancy.remove(candidate.pod)
        self._terminating.discard(eviction.pod)
        self._gone.add(eviction.pod)

    def judge_landing(self, eviction: Eviction, node: str) -> str | None:
        """Why the node the replacement landed on is a bad landing (source, hot,
        excluded, over its targets with the pod), or None when it is good."""
        candidate = self._candidates.get(eviction.pod)
        index = self._names_index.get(node)
        if candidate is None or index is None:
            return None
        if index == candidate.node_index:
            return BAD_SOURCE
        node_class = self._problem.table.classes[index]
        if node_class == "hot":
            return BAD_HOT
        if node_class == "excluded":
            return BAD_EXCLUDED
        usage = self._placement.usage
        if self._landed.get(eviction.pod) != index:
            usage = usage.copy()
            usage[index] += candidate.usage
        if self._problem.is_hot(usage, index):
            return BAD_OVER_TARGETS
        return None

    def still_hot(self) -> list[str]:
        """The nodes classed hot that are still over their targets, by the usage the
        observed moves left them."""
        usage = self._placement.usage
        return [self._names[i] for i in self._problem.hot_indexes if self._problem.is_hot(usage, i)]

    @property
    def _names_index(self) -> dict[str, int]:
        return self._problem.table.index  # type: ignore[return-value]

    def _mark_terminating(self, pod: Pod, at: datetime.datetime) -> None:
        """The evicted pod, still placed, as marked for deletion: kube-scheduler counts
        its requests and ports, but not its spreading."""
        if pod.key in self._terminating or pod.key in self._gone:
            return
        occupancy = self._placement.occupancy
        placed = occupancy.placed_index(pod)
        if placed is None:
            return
        marked = dataclasses.replace(pod, deletion_timestamp=pod.deletion_timestamp or at)
        occupancy.remove(pod)
        occupancy.add(marked, occupancy.node_names[placed])
        self._terminating.add(pod.key)
