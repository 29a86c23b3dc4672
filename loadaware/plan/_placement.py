"""Where replacements land: evictions replayed the way a cluster applies them.

loadaware does not bind pods. An evicted pod's controller creates a replacement
and kube-scheduler places it by requests, not usage — so it can land back on
the node it left or on another hot node (the bounce-back the descheduler's
users report). Every planned eviction is therefore checked against the
kube-scheduler model: the replacement must be predicted to land on a node that
is neither hot, excluded nor the source, and that stays at or below its
targetThresholds with the pod's usage added.

From 100 nodes kube-scheduler scores only a sample of the feasible nodes
(`scheduling`), so a replacement lands on the best node of a sample it cannot be
told. There a landing is a set: the best-scoring good nodes, enough of them that
a sample misses them all with a chance of at most `steering.missProbability`,
and the soft taint on every other node that could outscore the weakest of them
(within `SCORE_MARGIN`). A move is planned only where the taint provably puts
that set ahead of every node that is not a good landing. Where the sample is
every feasible node, this is the single best node and the fewest taints that
make it kube-scheduler's choice.

A node is tainted only while it could outscore the current move's landing set:
a move's steer set is its own rivals, nothing kept from earlier moves, as the
evictor takes a move's taints off once its replacement is bound. Every pod the
cluster schedules meanwhile is pushed off the tainted nodes, so a move whose
steer set, with the taints still held for replacements not yet bound
(`Placement.hold`), would exceed `steering.maxTaintedFraction` of the nodes is
not planned (TAINT_CAP): the solvers try another pod instead.

Must-move pods (named by a deschedule strategy) are held to the same landing
rules, except that their source need not be hot, and two more: a replacement
that fits nowhere is never allowed (even with nodeFit off), and it must land
where the strategy's rule holds (`Candidate.landing_check`). Failed pods
(RemoveFailedPods) hold nothing and need no landing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from loadaware import scheduling
from loadaware.cluster import ClusterState, Pod
from loadaware.plan._problem import AppliedMove, Candidate, Problem

# The soft taint steering puts on the few nodes that would otherwise outscore a
# replacement's chosen landing.
HOTSPOT_TAINT = scheduling.STEERING_TAINT

# The cap on tainted nodes never goes below this many: a fraction of a small cluster
# is less than the few nodes that outscore a landing there, and a handful of soft
# taints leaves most of its nodes to everything else.
MIN_TAINT_CAP = 10

# Why a candidate's replacement may not land where it is predicted to.
BOUNCE_BACK = "bounce-back"  # predicted back on its source or on another hot/excluded node
TARGET_OVER_THRESHOLD = "target-over-threshold"  # the landing node would end above its targets
NO_FIT = "no-fit"  # no node fits: the replacement would stay Pending
STILL_VIOLATES = "still-violates"  # a must-move's replacement would break its rule again
# Too few good landings near the top for kube-scheduler's sample to be sure to hold one.
FEW_GOOD_LANDINGS = "few-good-landings"
# The pod names a scheduler (spec.schedulerName) the model has no profile of.
UNMODELLED_SCHEDULER = "unmodelled-scheduler"
# Steering it would taint more nodes than steering.maxTaintedFraction allows.
TAINT_CAP = "taint-cap"

# Points of a node's total score the model may be off by on a sample: the plugins
# it leaves out (volume binding), and the normalising plugins (PodTopologySpread,
# InterPodAffinity, NodeAffinity), which kube-scheduler normalises over the nodes
# it scored, not over every feasible node.
SCORE_MARGIN = 10
# A node is a good landing with room for its expected usage plus this many standard
# deviations of what earlier replacements, each landing somewhere in its set, may
# have added to it.
LANDING_DEVIATIONS = 3.0

# Good landings tried, best score first, when a must-move's rule rejects one.
_LANDINGS_TRIED = 3
# Nodes judged first, best scores first, for a good landing (see _good_near_top).
_SHORTLIST = 64


@dataclass(frozen=True, slots=True)
class Landing:
    """Where a replacement lands if its pod is evicted now: `target` (None: it stays
    Pending, allowed only with nodeFit off), the nodes to carry the soft taint while
    it is scheduled (`steer`), or the reason it must not be evicted."""

    target: int | None
    steer: tuple[int, ...] = ()
    reason: str | None = None
    where: int | None = None  # with a reason: the node the replacement would land badly on
    # Every node the replacement may land on under those taints, all good landings;
    # `target` is the best of them.
    landing_set: tuple[int, ...] = ()
    # The chance of each landing_set node being where it lands, in the same order.
    shares: tuple[float, ...] = ()


def taint_cap(fraction: float, node_count: int) -> int:
    """The most nodes that may carry the soft taint at once: `fraction`
    (steering.maxTaintedFraction) of the cluster's nodes, cordoned ones included,
    rounded down, but never fewer than MIN_TAINT_CAP unless the fraction is 0."""
    if fraction <= 0:
        return 0
    return max(int(fraction * node_count + 1e-9), MIN_TAINT_CAP)


def _round_view(cluster: ClusterState) -> ClusterState:
    """The cluster as a round will see it, nodes in the NodeTable's order (by name):
    a killed round's soft taints are removed before anything is evicted, and
    steering sets its own."""
    nodes = tuple(
        dataclasses.replace(n, taints=tuple(t for t in n.taints if t != HOTSPOT_TAINT))
        if HOTSPOT_TAINT in n.taints
        else n
        for n in sorted(cluster.nodes, key=lambda n: n.name)
    )
    return dataclasses.replace(cluster, nodes=nodes)


def _landing_shares(totals: scheduling.IntArray, sampled: float) -> tuple[float, ...]:
    """The chance of each node being the best of kube-scheduler's sample, given that
    the sample holds one of them: each node is in the sample with chance `sampled`
    (independently, near enough), and the best of those present wins; tied nodes
    share their ranks' chances, as kube-scheduler picks among them at random."""
    order = np.argsort(-totals, kind="stable")
    rank_chance = sampled * (1.0 - sampled) ** np.arange(len(totals))
    chance = np.empty(len(totals))
    chance[order] = rank_chance
    _values, tie = np.unique(totals, return_inverse=True)
    chance = (np.bincount(tie, weights=chance) / np.bincount(tie))[tie]
    return tuple((chance / chance.sum()).tolist())


def _sorted_ints(values: scheduling.IntArray) -> tuple[int, ...]:
    return tuple(np.sort(values).tolist())


def _best_first(totals: scheduling.IntArray, size: int) -> scheduling.IntArray:
    """A prefix of at least `size` positions (all of them when there are fewer) of
    the order best total first, equal totals in position order: every position
    scoring at least the size-th best. Sorting only the top costs a fraction of
    sorting 5,000 nodes, and a landing rarely reads further."""
    count = len(totals)
    if size >= count:
        return np.argsort(-totals, kind="stable")
    cut = np.partition(totals, count - size)[count - size]
    top = np.flatnonzero(totals >= cut)
    return top[np.argsort(-totals[top], kind="stable")]


class Placement:
    """A working copy of the cluster that evictions are applied to, in order.

    Building the occupancy of a large cluster costs more than solving, so one
    Placement serves every replay of a round: reset() undoes the moves applied.
    """

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.occupancy = scheduling.Occupancy.from_cluster(_round_view(problem.cluster))
        self.usage = problem.table.usage.copy()
        self._applied: list[tuple[Candidate, int | None]] = []
        # The usage each applied move put on its landing set's nodes, and its variance:
        # where a replacement lands within its set is kube-scheduler's draw.
        self._spread: list[tuple[tuple[int, ...], np.ndarray, np.ndarray]] = []
        # Nodes that stay tainted for replacements not yet bound (landing control).
        self._held: frozenset[int] = frozenset()
        self.variance = np.zeros_like(self.usage)
        table = problem.table
        self._names = table.names
        # Nodes kube-scheduler may choose from, as indexes of both the table and
        # the occupancy (both in node name order).
        self._indexes: scheduling.IntArray = np.arange(len(problem.cluster.nodes), dtype=np.int64)
        self._allowed = np.zeros(len(table.names), dtype=bool)
        self._allowed[problem.target_indexes] = True
        self._node_fit = problem.policy.evictor.node_fit
        self._steering = problem.policy.steering.soft_taint
        self._scale = np.where(table.allocatable > 0, table.allocatable, 1.0)
        self._high = np.where(np.isnan(table.high), np.inf, table.high)
        steering = problem.policy.steering
        self._profiles = scheduling.modelled_profiles(
            steering.scheduler_config, steering.scheduler_names
        )
        # kube-scheduler counts every node, cordoned or not, to size its sample; a
        # profile's own percentageOfNodesToScore overrides the policy's.
        self._sample_sizes = {
            name: scheduling.num_feasible_nodes_to_find(
                profile.sample_percentage(steering.percentage_of_nodes_to_score),
                len(problem.cluster.nodes),
            )
            for name, profile in self._profiles.by_name.items()
        }
        self._miss_probability = steering.miss_probability
        self.taint_cap = taint_cap(steering.max_tainted_fraction, len(problem.cluster.nodes))

    def landing(self, candidate: Candidate) -> Landing:
        """Where the replacement would land if the pod were evicted now, and the soft
        taints that make kube-scheduler choose it.

        The landing is the best-scoring good node: it fits, is not hot, excluded or
        the source, and stays at or below its targets with the pod's usage. Without
        steering (off, or a pod that tolerates the taint) the move is planned only
        when every node tied for the best score is good. With steering, every other
        node scoring at least as well gets the taint, and the move is planned only
        if that makes the landing kube-scheduler's single best choice. With nodeFit
        off, a replacement that fits nowhere is allowed, as in the descheduler."""
        if candidate.terminal:
            return Landing(None)
        pod = candidate.pod
        profile = self._profiles.for_pod(pod)
        if profile is None:
            # Another scheduler binds it: where its replacement lands is unknown.
            return Landing(None, reason=UNMODELLED_SCHEDULER)
        scores = scheduling.score_replacement(pod, self.occupancy, self._indexes, profile=profile)
        indexes = scores.indexes
        if not indexes.size:
            if self._node_fit or candidate.must_move:
                return Landing(None, reason=NO_FIT)
            return Landing(None)
        sample_size = self._sample_sizes[profile.scheduler_name]
        if indexes.size > sample_size:
            return self._sampled_landing(candidate, scores, sample_size)
        totals = scores.totals
        held = self._held_mask(indexes)
        good = self._good_near_top(candidate, indexes, totals) & ~held
        best = scores.best()
        if not self._steering or scores.tolerates_steering:
            if not good[best].all():
                return self._bad(candidate, indexes[best[~good[best]]])
            first = min(best.tolist(), key=lambda p: self._names[int(indexes[p])])
            if not self._rule_holds(candidate, int(indexes[first])):
                return Landing(None, reason=STILL_VIOLATES)
            return Landing(int(indexes[first]), landing_set=_sorted_ints(indexes[best]))
        if not good.any():
            return self._bad(candidate, indexes[best])
        unchosen = np.iinfo(np.int64).min
        open_totals = np.where(good, totals, unchosen)
        for _attempt in range(_LANDINGS_TRIED):
            top = open_totals.max()
            if top == unchosen:
                break
            tied = np.flatnonzero(open_totals == top).tolist()
            position = min(tied, key=lambda p: self._names[int(indexes[p])])
            target = int(indexes[position])
            if not self._rule_holds(candidate, target):
                open_totals[position] = unchosen
                continue
            steer = totals >= totals[position]
            steer[position] = False
            if not self._within_cap(int(np.count_nonzero(steer & ~held))):
                return self._tied_landing(candidate, scores, good, held, position)
            steered = scores.with_steering(steer | held)
            rivals = np.delete(steered, position)
            if rivals.size and rivals.max() >= steered[position]:
                # A bad node leads by more than the taint costs it: not steerable.
                break
            return Landing(
                target, steer=tuple(int(i) for i in indexes[steer]), landing_set=(target,)
            )
        if not good[best].all():
            return self._bad(candidate, indexes[best[~good[best]]])
        return Landing(None, reason=STILL_VIOLATES)

    def _tied_landing(
        self,
        candidate: Candidate,
        scores: scheduling.NodeScores,
        good: np.ndarray,
        held: np.ndarray,
        position: int,
    ) -> Landing:
        """The landing when making `position` the single best node would taint more
        nodes than the cap allows: every good node tied with it is a landing too
        (kube-scheduler picks among them at random), and only the nodes that are not
        and score as well carry the taint."""
        indexes, totals = scores.indexes, scores.totals
        tied = np.flatnonzero(good & (totals == totals[position]))
        if candidate.landing_check is not None:
            tied = np.array(
                [p for p in tied.tolist() if self._rule_holds(candidate, int(indexes[p]))],
                dtype=np.int64,
            )
        steer = totals >= totals[position]
        steer[tied] = False
        if len(tied) < 2 or not self._within_cap(int(np.count_nonzero(steer & ~held))):
            return Landing(None, reason=TAINT_CAP)
        steered = scores.with_steering(steer | held)
        others = np.ones(len(indexes), dtype=bool)
        others[tied] = False
        if others.any() and steered[others].max() >= steered[position]:
            return Landing(None, reason=TAINT_CAP)
        return Landing(
            int(indexes[position]),
            steer=_sorted_ints(indexes[steer & ~held]),
            landing_set=_sorted_ints(indexes[tied]),
            shares=(1.0 / len(tied),) * len(tied),
        )

    def is_modelled(self, pod: Pod) -> bool:
        """Whether the model knows the scheduler that binds the pod's replacement."""
        return self._profiles.for_pod(pod) is not None

    def _sampled_landing(
        self, candidate: Candidate, scores: scheduling.NodeScores, sample_size: int
    ) -> Landing:
        """The landing when kube-scheduler scores a sample of the feasible nodes: the
        eligible set E is the best-scoring good nodes, as many as a sample cannot
        miss (but by steering.missProbability), with every good node tied with its
        weakest; the soft taint goes on every other node scoring within SCORE_MARGIN
        of that weakest, and the move is planned only when, under the taint, every
        node outside the good ones trails E by more than SCORE_MARGIN."""
        indexes, totals = scores.indexes, scores.totals
        count = len(indexes)
        need = scheduling.eligible_needed(count, sample_size, self._miss_probability)
        good = np.zeros(count, dtype=bool)
        judged = 0
        chunk = max(_SHORTLIST, 2 * need)
        # Best first; among equal totals in name order (indexes are in name order).
        order = _best_first(totals, 2 * chunk + 1)
        floor: int | None = None
        held = self._held_mask(indexes)
        while judged < count:
            if judged + chunk >= len(order) and len(order) < count:
                order = _best_first(totals, 4 * len(order))
            block = order[judged : judged + chunk]
            good[block] = self._good(candidate, indexes[block]) & ~held[block]
            if candidate.landing_check is not None:
                for position in block[good[block]].tolist():
                    good[position] = self._rule_holds(candidate, int(indexes[position]))
            judged += len(block)
            eligible = order[:judged][good[order[:judged]]]
            if len(eligible) >= need:
                floor = int(totals[eligible[need - 1]])
                if judged == count or totals[order[judged]] < floor - SCORE_MARGIN:
                    break
        if floor is None:
            worst = order[:judged][~good[order[:judged]]]
            if not len(worst):
                return Landing(None, reason=FEW_GOOD_LANDINGS)
            return self._bad(candidate, indexes[worst[:1]])
        known_good = good  # unjudged positions count as bad below
        rivals = ~known_good & (totals >= floor - SCORE_MARGIN)
        steered = totals
        steer: tuple[int, ...] = ()
        if rivals.any() and (not self._steering or scores.tolerates_steering):
            return self._bad(candidate, indexes[order[rivals[order]][:1]])
        if self._steering and not scores.tolerates_steering:
            # Only the nodes that could outscore the set: a taint kept from an earlier
            # move would push every other pod off its node for nothing.
            if not self._within_cap(int(np.count_nonzero(rivals & ~held))):
                return Landing(None, reason=TAINT_CAP)
            if rivals.any() or held.any():
                steered = scores.with_steering(rivals | held)
                steer = _sorted_ints(indexes[rivals & ~held])
        eligible_mask = known_good & (totals >= floor)
        weakest = int(steered[eligible_mask].min())
        outside = ~known_good
        if outside.any() and int(steered[outside].max()) + SCORE_MARGIN >= weakest:
            # A bad node leads by more than the taint costs it: not steerable.
            leader = np.flatnonzero(outside & (steered == steered[outside].max()))
            return self._bad(candidate, indexes[leader[:1]])
        landing = known_good & (steered >= weakest)
        best = np.flatnonzero(landing & (steered == steered[landing].max()))
        target = int(indexes[int(best[0])])
        members = np.flatnonzero(landing)
        return Landing(
            target,
            steer=steer,
            landing_set=tuple(indexes[members].tolist()),
            shares=_landing_shares(steered[members], min(sample_size / count, 1.0)),
        )

    def hold(self, nodes: frozenset[int]) -> None:
        """The nodes that stay tainted whatever the next move needs (landing control:
        the steer sets of evicted pods whose replacements are not bound yet). They are
        no landing, count against the cap, and the next move is scored under them."""
        self._held = nodes

    def _held_mask(self, indexes: scheduling.IntArray) -> np.ndarray:
        if not self._held:
            return np.zeros(len(indexes), dtype=bool)
        return np.isin(indexes, np.fromiter(self._held, dtype=np.int64))

    def _within_cap(self, steered: int) -> bool:
        """Whether `steered` more tainted nodes, with those held, stay under the cap."""
        return steered == 0 or steered + len(self._held) <= self.taint_cap

    def _good_near_top(
        self, candidate: Candidate, indexes: scheduling.IntArray, totals: scheduling.IntArray
    ) -> np.ndarray:
        """Which feasible nodes are good landings, judged only among the best-scoring
        ones when a good landing is found there: every decision reads the nodes that
        score at least as well as the best good one, and judging 5,000 nodes per
        prediction cost more than scoring them."""
        count = len(totals)
        if count > _SHORTLIST:
            cut = np.partition(totals, count - _SHORTLIST)[count - _SHORTLIST]
            near = np.flatnonzero(totals >= cut)
            good_near = self._good(candidate, indexes[near])
            if good_near.any():
                good = np.zeros(count, dtype=bool)
                good[near] = good_near
                return good
        return self._good(candidate, indexes)

    def _good(self, candidate: Candidate, indexes: scheduling.IntArray) -> np.ndarray:
        """Which of the indexed nodes are good landings for the candidate's replacement."""
        room = self.usage[indexes] + LANDING_DEVIATIONS * np.sqrt(self.variance[indexes])
        after = (room + candidate.usage) / self._scale[indexes]
        under = np.all(after <= self._high[indexes] + 1e-12, axis=1)
        return self._allowed[indexes] & (indexes != candidate.node_index) & under

    def _bad(self, candidate: Candidate, indexes: scheduling.IntArray) -> Landing:
        """No move: the first of these (bad) landings is where it would go, and why."""
        index = int(indexes[0])
        if index == candidate.node_index or not self._allowed[index]:
            return Landing(None, reason=BOUNCE_BACK, where=index)
        return Landing(None, reason=TARGET_OVER_THRESHOLD, where=index)

    def _rule_holds(self, candidate: Candidate, target: int) -> bool:
        if candidate.landing_check is None:
            return True
        return candidate.landing_check(self._names[target], self.applied_moves())

    def close(self, index: int) -> None:
        """Take a node out of the scheduler's choice and of the allowed targets: a node
        being emptied, which kube-scheduler is expected not to use (see _consolidate)."""
        self._allowed[index] = False
        self._indexes = self._indexes[self._indexes != index]

    def undo_last(self) -> None:
        """Undo the most recently applied move."""
        candidate, target = self._applied.pop()
        nodes, added, variance = self._spread.pop()
        if candidate.terminal:
            return
        if target is not None:
            self.occupancy.remove(candidate.pod)
            self.usage[list(nodes)] -= added
            self.variance[list(nodes)] -= variance
        self.occupancy.add(candidate.pod, self._names[candidate.node_index])
        self.usage[candidate.node_index] += candidate.usage

    def applied_moves(self) -> list[AppliedMove]:
        """The moves applied so far, in order, as (pod, source, landing node)."""
        names = self._names
        return [
            (c.pod, names[c.node_index], None if t is None else names[t]) for c, t in self._applied
        ]

    def apply(self, candidate: Candidate, found: Landing) -> None:
        """Evict the candidate. Its replacement's requests go to the landing's target;
        its usage is shared over the landing set by the chance of landing on each
        node, which is what the later moves' landings see."""
        target = found.target
        if candidate.terminal:
            # Not in the occupancy and without usage: nothing to take away.
            self._applied.append((candidate, None))
            self._spread.append(((), candidate.usage, candidate.usage))
            return
        self.occupancy.remove(candidate.pod)
        self.usage[candidate.node_index] -= candidate.usage
        nodes: tuple[int, ...] = ()
        added = variance = candidate.usage
        if target is not None:
            self.occupancy.add(candidate.pod, self._names[target])
            if len(found.landing_set) > 1:
                nodes = found.landing_set
                shares = np.asarray(found.shares)
                added = np.outer(shares, candidate.usage)
                variance = np.outer(shares * (1.0 - shares), candidate.usage**2)
                self.variance[list(nodes)] += variance
            else:
                nodes = (target,)
                added = candidate.usage[np.newaxis, :]
                variance = np.zeros_like(added)
            self.usage[list(nodes)] += added
        self._applied.append((candidate, target))
        self._spread.append((nodes, added, variance))

    def reset(self) -> None:
        """Undo every applied move, newest first."""
        self._spread.clear()
        self.variance[:] = 0.0
        while self._applied:
            candidate, target = self._applied.pop()
            if candidate.terminal:
                continue
            if target is not None:
                self.occupancy.remove(candidate.pod)
            self.occupancy.add(candidate.pod, self._names[candidate.node_index])
        self.usage = self.problem.table.usage.copy()

    def restore(self) -> None:
        """Back to the Placement as built: every applied move undone (reset), every
        node close() took out open again, none held. Landing control starts from the
        planner's Placement this way rather than building the occupancy again."""
        self.reset()
        self._allowed[:] = False
        self._allowed[self.problem.target_indexes] = True
        self._indexes = np.arange(len(self.problem.cluster.nodes), dtype=np.int64)
        self._held = frozenset()
