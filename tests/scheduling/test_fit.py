"""nodeFit (Occupancy.fit_failure): each rule both ways.

Covered: readiness, cordons (and the unschedulable toleration), taints (Equal,
Exists with an empty key, NoExecute, PreferNoSchedule ignored), nodeSelector,
required node affinity (ORed terms, matchFields metadata.name, Gt/Lt), cpu,
memory and pod-count room including moves recorded with add/remove, host
ports, required pod affinity (with the first-pod special case), required
anti-affinity over a zone in both directions, namespaceSelector, nodes without
the topology label, the order of reasons, and that the vectorised fit_mask
agrees with fit_failure.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Mapping, Sequence

import pytest

from loadaware.cluster._types import (
    LabelSelector,
    Node,
    NodeSelectorTerm,
    Pod,
    PodAffinityTerm,
    Requirement,
    Taint,
    Toleration,
)
from loadaware.scheduling import FIT_REASONS, Occupancy
from tests.lib.builders import GiB, MiB, make_cluster, make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def occupancy(
    nodes: Iterable[Node],
    pods: Iterable[Pod] = (),
    namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
) -> Occupancy:
    return Occupancy.from_cluster(make_cluster(nodes, pods, namespace_labels=namespace_labels))


def incoming(name: str = "new", **fields: object) -> Pod:
    """A pod not yet placed anywhere (a replacement)."""
    return make_pod(name, node=None, **fields)  # type: ignore[arg-type]


def term(labels: Mapping[str, str], topology_key: str = ZONE, **fields: object) -> PodAffinityTerm:
    return PodAffinityTerm(
        label_selector=LabelSelector(match_labels=dict(labels)),
        topology_key=topology_key,
        **fields,  # type: ignore[arg-type]
    )


def node_affinity(*terms: NodeSelectorTerm) -> dict[str, object]:
    return {"required_node_affinity": terms}


def fit_case(
    name: str,
    pod: Pod,
    expected: str | None,
    *,
    nodes: Sequence[Node] | None = None,
    placed: Sequence[Pod] = (),
    target: str = "n1",
) -> object:
    """A case of test_fit_rule: `pod` on `target` gives the `expected` reason (None:
    it fits), with `placed` pods on `nodes` (one ready node "n1" unless given)."""
    return pytest.param(
        [make_node("n1")] if nodes is None else list(nodes),
        list(placed),
        pod,
        target,
        expected,
        id=name,
    )


STATIC_CASES = [
    fit_case("ready node fits", incoming(), None),
    fit_case(
        "not-ready node refuses", incoming(), "node-not-ready", nodes=[make_node("n1", ready=False)]
    ),
    fit_case(
        "cordoned node refuses",
        incoming(),
        "node-unschedulable",
        nodes=[make_node("n1", unschedulable=True)],
    ),
    fit_case(
        "cordoned node takes a pod tolerating node.kubernetes.io/unschedulable",
        incoming(
            tolerations=(Toleration(key="node.kubernetes.io/unschedulable", operator="Exists"),)
        ),
        None,
        nodes=[make_node("n1", unschedulable=True)],
    ),
    fit_case(
        "untolerated NoSchedule taint refuses",
        incoming(),
        "untolerated-taint",
        nodes=[make_node("n1", taints=[Taint(key="gpu", value="yes", effect="NoSchedule")])],
    ),
    fit_case(
        "Equal toleration with matching value fits",
        incoming(tolerations=(Toleration(key="gpu", value="yes"),)),
        None,
        nodes=[make_node("n1", taints=[Taint(key="gpu", value="yes", effect="NoSchedule")])],
    ),
    fit_case(
        "Equal toleration with other value refuses",
        incoming(tolerations=(Toleration(key="gpu", value="no"),)),
        "untolerated-taint",
        nodes=[make_node("n1", taints=[Taint(key="gpu", value="yes", effect="NoSchedule")])],
    ),
    fit_case(
        "Exists toleration with empty key tolerates every taint",
        incoming(tolerations=(Toleration(operator="Exists"),)),
        None,
        nodes=[
            make_node(
                "n1",
                taints=[
                    Taint(key="a", effect="NoSchedule"),
                    Taint(key="b", value="x", effect="NoExecute"),
                ],
            )
        ],
    ),
    fit_case(
        "untolerated NoExecute taint refuses",
        incoming(),
        "untolerated-taint",
        nodes=[make_node("n1", taints=[Taint(key="evict", effect="NoExecute")])],
    ),
    fit_case(
        "toleration limited to NoSchedule does not cover NoExecute",
        incoming(tolerations=(Toleration(key="evict", operator="Exists", effect="NoSchedule"),)),
        "untolerated-taint",
        nodes=[make_node("n1", taints=[Taint(key="evict", effect="NoExecute")])],
    ),
    fit_case(
        "toleration for NoExecute fits",
        incoming(tolerations=(Toleration(key="evict", operator="Exists", effect="NoExecute"),)),
        None,
        nodes=[make_node("n1", taints=[Taint(key="evict", effect="NoExecute")])],
    ),
    fit_case(
        "PreferNoSchedule taint is ignored by fit",
        incoming(),
        None,
        nodes=[make_node("n1", taints=[Taint(key="soft", effect="PreferNoSchedule")])],
    ),
    fit_case(
        "nodeSelector matching node labels fits",
        incoming(node_selector={"disk": "ssd"}),
        None,
        nodes=[make_node("n1", labels={"disk": "ssd"})],
    ),
    fit_case(
        "nodeSelector with other value refuses",
        incoming(node_selector={"disk": "ssd"}),
        "node-selector",
        nodes=[make_node("n1", labels={"disk": "hdd"})],
    ),
    fit_case(
        "nodeSelector on a missing label refuses",
        incoming(node_selector={"disk": "ssd"}),
        "node-selector",
    ),
    fit_case(
        "node affinity In matching fits",
        incoming(
            **node_affinity(
                NodeSelectorTerm(
                    match_expressions=(Requirement(key=ZONE, operator="In", values=("a", "b")),)
                )
            )
        ),
        None,
        nodes=[make_node("n1", zone="a")],
    ),
    fit_case(
        "node affinity In not matching refuses",
        incoming(
            **node_affinity(
                NodeSelectorTerm(
                    match_expressions=(Requirement(key=ZONE, operator="In", values=("a", "b")),)
                )
            )
        ),
        "node-affinity",
        nodes=[make_node("n1", zone="c")],
    ),
    fit_case(
        "node affinity terms are ORed",
        incoming(
            **node_affinity(
                NodeSelectorTerm(
                    match_expressions=(Requirement(key=ZONE, operator="In", values=("a",)),)
                ),
                NodeSelectorTerm(
                    match_expressions=(Requirement(key=ZONE, operator="In", values=("c",)),)
                ),
            )
        ),
        None,
        nodes=[make_node("n1", zone="c")],
    ),
    fit_case(
        "node affinity matchFields metadata.name selects the node",
        incoming(
            **node_affinity(
                NodeSelectorTerm(
                    match_fields=(Requirement(key="metadata.name", operator="In", values=("n1",)),)
                )
            )
        ),
        None,
    ),
    fit_case(
        "node affinity matchFields metadata.name for another node refuses",
        incoming(
            **node_affinity(
                NodeSelectorTerm(
                    match_fields=(Requirement(key="metadata.name", operator="In", values=("n2",)),)
                )
            )
        ),
        "node-affinity",
    ),
    fit_case(
        "node affinity Gt above the bound fits",
        incoming(
            **node_affinity(
                NodeSelectorTerm(
                    match_expressions=(Requirement(key="cores", operator="Gt", values=("32",)),)
                )
            )
        ),
        None,
        nodes=[make_node("n1", labels={"cores": "64"})],
    ),
    fit_case(
        "node affinity Gt at the bound refuses",
        incoming(
            **node_affinity(
                NodeSelectorTerm(
                    match_expressions=(Requirement(key="cores", operator="Gt", values=("32",)),)
                )
            )
        ),
        "node-affinity",
        nodes=[make_node("n1", labels={"cores": "32"})],
    ),
    fit_case(
        "node affinity Lt below the bound fits",
        incoming(
            **node_affinity(
                NodeSelectorTerm(
                    match_expressions=(Requirement(key="cores", operator="Lt", values=("16",)),)
                )
            )
        ),
        None,
        nodes=[make_node("n1", labels={"cores": "8"})],
    ),
    fit_case(
        "node affinity Lt above the bound refuses",
        incoming(
            **node_affinity(
                NodeSelectorTerm(
                    match_expressions=(Requirement(key="cores", operator="Lt", values=("16",)),)
                )
            )
        ),
        "node-affinity",
        nodes=[make_node("n1", labels={"cores": "64"})],
    ),
]

GPU = "nvidia.com/gpu"

RESOURCE_CASES = [
    fit_case(
        "gpu request filling the node's gpus exactly fits",
        incoming(extended_requests={GPU: 1}),
        None,
        nodes=[make_node("n1", extended={GPU: 4})],
        placed=[make_pod("a", extended_requests={GPU: 3})],
    ),
    fit_case(
        "gpu request over the node's free gpus refuses",
        incoming(extended_requests={GPU: 2}),
        "insufficient-extended-resource",
        nodes=[make_node("n1", extended={GPU: 4})],
        placed=[make_pod("a", extended_requests={GPU: 3})],
    ),
    fit_case(
        "gpu request on a node without gpus refuses",
        incoming(extended_requests={GPU: 1}),
        "insufficient-extended-resource",
    ),
    fit_case(
        "a pod's own gpus are free for it on its own node",
        incoming(extended_requests={GPU: 2}),
        None,
        nodes=[make_node("n1", extended={GPU: 2})],
        placed=[make_pod("new", extended_requests={GPU: 2})],
    ),
    fit_case(
        "a pod requesting no gpu fits a node whose gpus are all taken",
        incoming(),
        None,
        nodes=[make_node("n1", extended={GPU: 1})],
        placed=[make_pod("a", extended_requests={GPU: 1})],
    ),
    fit_case(
        "cpu request filling the node exactly fits",
        incoming(cpu_millicores=400),
        None,
        nodes=[make_node("n1", cpu_millicores=1000)],
        placed=[make_pod("a", cpu_millicores=600)],
    ),
    fit_case(
        "cpu request over what is left refuses",
        incoming(cpu_millicores=401),
        "insufficient-cpu",
        nodes=[make_node("n1", cpu_millicores=1000)],
        placed=[make_pod("a", cpu_millicores=600)],
    ),
    fit_case(
        "zero cpu request fits an overcommitted node",
        incoming(cpu_millicores=0),
        None,
        nodes=[make_node("n1", cpu_millicores=1000)],
        placed=[make_pod("a", cpu_millicores=1200)],
    ),
    fit_case(
        "memory request filling the node exactly fits",
        incoming(memory_bytes=512 * MiB),
        None,
        nodes=[make_node("n1", memory_bytes=1 * GiB)],
        placed=[make_pod("a", memory_bytes=512 * MiB)],
    ),
    fit_case(
        "memory request over what is left refuses",
        incoming(memory_bytes=512 * MiB + 1),
        "insufficient-memory",
        nodes=[make_node("n1", memory_bytes=1 * GiB)],
        placed=[make_pod("a", memory_bytes=512 * MiB)],
    ),
    fit_case(
        "pod count below allocatable pods fits",
        incoming(),
        None,
        nodes=[make_node("n1", pods=2)],
        placed=[make_pod("a")],
    ),
    fit_case(
        "pod count at allocatable pods refuses",
        incoming(),
        "too-many-pods",
        nodes=[make_node("n1", pods=2)],
        placed=[make_pod("a"), make_pod("b")],
    ),
    fit_case(
        "a pod already on the node is not counted twice",
        make_pod("a", cpu_millicores=800),
        None,
        nodes=[make_node("n1", cpu_millicores=1000, pods=1)],
        placed=[make_pod("a", cpu_millicores=800)],
    ),
    fit_case(
        "other host port fits",
        incoming(host_ports=(9090,)),
        None,
        placed=[make_pod("a", host_ports=(8080,))],
    ),
    fit_case(
        "host port in use refuses",
        incoming(host_ports=(9090, 8080)),
        "host-port",
        placed=[make_pod("a", host_ports=(8080,))],
    ),
    fit_case(
        "a pod's own host port on its own node fits",
        make_pod("a", host_ports=(8080,)),
        None,
        placed=[make_pod("a", host_ports=(8080,))],
    ),
    fit_case(
        "terminated pods free their requests",
        incoming(cpu_millicores=1000),
        None,
        nodes=[make_node("n1", cpu_millicores=1000)],
        placed=[make_pod("a", cpu_millicores=1000, phase="Succeeded")],
    ),
]

ZONED = [make_node("a1", zone="a"), make_node("a2", zone="a"), make_node("b1", zone="b")]
WEB = {"app": "web"}
DB = {"app": "db"}

AFFINITY_CASES = [
    fit_case(
        "pod affinity fits a node in the zone of a matching pod",
        incoming(labels=WEB, required_pod_affinity=(term(DB),)),
        None,
        nodes=ZONED,
        placed=[make_pod("db-0", node="a1", labels=DB)],
        target="a2",
    ),
    fit_case(
        "pod affinity refuses a node in another zone",
        incoming(labels=WEB, required_pod_affinity=(term(DB),)),
        "pod-affinity",
        nodes=ZONED,
        placed=[make_pod("db-0", node="a1", labels=DB)],
        target="b1",
    ),
    fit_case(
        "pod affinity refuses a node without the topology label",
        incoming(labels=WEB, required_pod_affinity=(term(DB),)),
        "pod-affinity",
        nodes=[*ZONED, make_node("bare")],
        placed=[make_pod("db-0", node="a1", labels=DB)],
        target="bare",
    ),
    fit_case(
        "pod affinity needs one pod matching every term",
        incoming(labels=WEB, required_pod_affinity=(term(DB), term({"tier": "cache"}))),
        "pod-affinity",
        nodes=ZONED,
        placed=[
            make_pod("db-0", node="a1", labels=DB),
            make_pod("cache-0", node="a1", labels={"tier": "cache"}),
        ],
        target="a2",
    ),
    fit_case(
        "pod affinity to itself lets the first pod of the group anywhere",
        incoming(labels=WEB, required_pod_affinity=(term(WEB),)),
        None,
        nodes=ZONED,
        target="b1",
    ),
    fit_case(
        "pod affinity to itself refuses another zone once a matching pod exists",
        incoming(labels=WEB, required_pod_affinity=(term(WEB),)),
        "pod-affinity",
        nodes=ZONED,
        placed=[make_pod("web-0", node="a1", labels=WEB)],
        target="b1",
    ),
    fit_case(
        "pod affinity to pods that do not exist refuses when the pod does not match itself",
        incoming(labels=WEB, required_pod_affinity=(term(DB),)),
        "pod-affinity",
        nodes=ZONED,
        target="a1",
    ),
    fit_case(
        "the only matching pod may move away from its own zone",
        make_pod("web-0", node="a1", labels=WEB, required_pod_affinity=(term(WEB),)),
        None,
        nodes=ZONED,
        placed=[make_pod("web-0", node="a1", labels=WEB, required_pod_affinity=(term(WEB),))],
        target="b1",
    ),
    fit_case(
        "incoming anti-affinity refuses another node of the zone of a matching pod",
        incoming(labels=WEB, required_pod_anti_affinity=(term(WEB),)),
        "pod-anti-affinity",
        nodes=ZONED,
        placed=[make_pod("web-0", node="a1", labels=WEB)],
        target="a2",
    ),
    fit_case(
        "incoming anti-affinity fits another zone",
        incoming(labels=WEB, required_pod_anti_affinity=(term(WEB),)),
        None,
        nodes=ZONED,
        placed=[make_pod("web-0", node="a1", labels=WEB)],
        target="b1",
    ),
    fit_case(
        "incoming anti-affinity ignores a node without the topology label",
        incoming(labels=WEB, required_pod_anti_affinity=(term(WEB),)),
        None,
        nodes=[*ZONED, make_node("bare")],
        placed=[make_pod("web-0", node="bare", labels=WEB)],
        target="bare",
    ),
    fit_case(
        "incoming hostname anti-affinity fits another node of the same zone",
        incoming(labels=WEB, required_pod_anti_affinity=(term(WEB, HOSTNAME),)),
        None,
        nodes=ZONED,
        placed=[make_pod("web-0", node="a1", labels=WEB)],
        target="a2",
    ),
    fit_case(
        "existing pod's anti-affinity selecting the incoming pod refuses its zone",
        incoming(labels=WEB),
        "pod-anti-affinity",
        nodes=ZONED,
        placed=[make_pod("db-0", node="a1", labels=DB, required_pod_anti_affinity=(term(WEB),))],
        target="a2",
    ),
    fit_case(
        "existing pod's anti-affinity does not reach another zone",
        incoming(labels=WEB),
        None,
        nodes=ZONED,
        placed=[make_pod("db-0", node="a1", labels=DB, required_pod_anti_affinity=(term(WEB),))],
        target="b1",
    ),
    fit_case(
        "existing pod's anti-affinity does not reach a node without the topology label",
        incoming(labels=WEB),
        None,
        nodes=[*ZONED, make_node("bare")],
        placed=[make_pod("db-0", node="bare", labels=DB, required_pod_anti_affinity=(term(WEB),))],
        target="bare",
    ),
    fit_case(
        "existing pod's anti-affinity for other labels fits",
        incoming(labels=WEB),
        None,
        nodes=ZONED,
        placed=[make_pod("db-0", node="a1", labels=DB, required_pod_anti_affinity=(term(DB),))],
        target="a1",
    ),
    fit_case(
        "existing pod's anti-affinity defaults to its own namespace",
        incoming(labels=WEB, namespace="other"),
        None,
        nodes=ZONED,
        placed=[make_pod("db-0", node="a1", labels=DB, required_pod_anti_affinity=(term(WEB),))],
        target="a1",
    ),
    fit_case(
        "existing pod's anti-affinity with a matching namespaceSelector refuses",
        incoming(labels=WEB, namespace="shop"),
        "pod-anti-affinity",
        nodes=ZONED,
        placed=[
            make_pod(
                "db-0",
                node="a1",
                labels=DB,
                required_pod_anti_affinity=(
                    term(WEB, namespace_selector=LabelSelector(match_labels={"team": "shop"})),
                ),
            )
        ],
        target="a1",
    ),
    fit_case(
        "existing pod's anti-affinity with a non-matching namespaceSelector fits",
        incoming(labels=WEB, namespace="blog"),
        None,
        nodes=ZONED,
        placed=[
            make_pod(
                "db-0",
                node="a1",
                labels=DB,
                required_pod_anti_affinity=(
                    term(WEB, namespace_selector=LabelSelector(match_labels={"team": "shop"})),
                ),
            )
        ],
        target="a1",
    ),
    fit_case(
        "incoming anti-affinity with a matching namespaceSelector refuses",
        incoming(
            labels=WEB,
            required_pod_anti_affinity=(
                term(WEB, namespace_selector=LabelSelector(match_labels={"team": "shop"})),
            ),
        ),
        "pod-anti-affinity",
        nodes=ZONED,
        placed=[make_pod("web-0", node="a1", labels=WEB, namespace="shop")],
        target="a2",
    ),
    fit_case(
        "incoming anti-affinity listing other namespaces fits",
        incoming(labels=WEB, required_pod_anti_affinity=(term(WEB, namespaces=("blog",)),)),
        None,
        nodes=ZONED,
        placed=[make_pod("web-0", node="a1", labels=WEB, namespace="shop")],
        target="a2",
    ),
    fit_case(
        "a pod's anti-affinity against its own labels does not refuse its own node",
        make_pod("web-0", node="a1", labels=WEB, required_pod_anti_affinity=(term(WEB),)),
        None,
        nodes=ZONED,
        placed=[make_pod("web-0", node="a1", labels=WEB, required_pod_anti_affinity=(term(WEB),))],
        target="a2",
    ),
]

NAMESPACE_LABELS = {"shop": {"team": "shop"}, "blog": {"team": "blog"}}


@pytest.mark.parametrize(
    ("nodes", "placed", "pod", "target", "expected"),
    STATIC_CASES + RESOURCE_CASES + AFFINITY_CASES,
)
def test_fit_rule(
    nodes: list[Node], placed: list[Pod], pod: Pod, target: str, expected: str | None
) -> None:
    occ = occupancy(nodes, placed, NAMESPACE_LABELS)
    assert occ.fit_failure(pod, target) == expected
    mask = occ.fit_mask(pod, occ.node_indexes([target]))
    assert bool(mask[0]) is (expected is None)


def test_requests_of_pods_moved_in_with_add_count_on_their_new_node() -> None:
    occ = occupancy(
        [make_node("n1", cpu_millicores=1000), make_node("n2", cpu_millicores=1000)],
        [make_pod("a", node="n2", cpu_millicores=700)],
    )
    pod = incoming(cpu_millicores=500)
    assert occ.fit_failure(pod, "n1") is None
    occ.remove(make_pod("a", node="n2"))
    occ.add(make_pod("a", node="n2", cpu_millicores=700), "n1")
    assert occ.fit_failure(pod, "n1") == "insufficient-cpu"
    assert occ.fit_failure(pod, "n2") is None
    assert occ.requested("n1") == (700, 128 * MiB, 1)
    assert occ.requested("n2") == (0, 0, 0)


def test_adding_a_placed_pod_moves_it() -> None:
    occ = occupancy(
        [make_node("n1"), make_node("n2")], [make_pod("a", node="n1", cpu_millicores=300)]
    )
    occ.add(make_pod("a", node="n1", cpu_millicores=300), "n2")
    assert occ.requested("n1") == (0, 0, 0)
    assert occ.requested("n2") == (300, 128 * MiB, 1)
    assert occ.placement(make_pod("a")) == "n2"


def test_removing_a_pod_that_is_not_placed_is_an_error() -> None:
    occ = occupancy([make_node("n1")])
    with pytest.raises(KeyError):
        occ.remove(make_pod("ghost"))


@pytest.mark.parametrize(
    "blocker",
    [
        pytest.param(
            make_pod("web-0", node="a1", labels=WEB), id="a pod the incoming term selects"
        ),
        pytest.param(
            make_pod("db-0", node="a1", labels=DB, required_pod_anti_affinity=(term(WEB),)),
            id="a pod whose term selects the incoming pod",
        ),
    ],
)
def test_a_pod_removed_from_the_zone_no_longer_blocks(blocker: Pod) -> None:
    occ = occupancy(ZONED, [blocker])
    pod = incoming(labels=WEB, required_pod_anti_affinity=(term(WEB),))
    assert occ.fit_failure(pod, "a2") == "pod-anti-affinity"
    occ.remove(blocker)
    assert occ.fit_failure(pod, "a2") is None
    occ.add(blocker, "b1")
    assert occ.fit_failure(pod, "a2") is None
    assert occ.fit_failure(pod, "b1") == "pod-anti-affinity"


def test_a_pod_moved_into_the_zone_satisfies_affinity() -> None:
    db = make_pod("db-0", node="b1", labels=DB)
    occ = occupancy(ZONED, [db])
    pod = incoming(labels=WEB, required_pod_affinity=(term(DB),))
    assert occ.fit_failure(pod, "a2") == "pod-affinity"
    occ.add(db, "a1")
    assert occ.fit_failure(pod, "a2") is None
    assert occ.fit_failure(pod, "b1") == "pod-affinity"


@pytest.mark.parametrize(
    ("node", "pod", "expected"),
    [
        pytest.param(
            make_node("n1", ready=False, unschedulable=True),
            incoming(),
            "node-not-ready",
            id="not ready before cordoned",
        ),
        pytest.param(
            make_node("n1", taints=[Taint(key="x", effect="NoSchedule")], labels={"disk": "hdd"}),
            incoming(node_selector={"disk": "ssd"}),
            "untolerated-taint",
            id="taint before nodeSelector",
        ),
        pytest.param(
            make_node("n1", cpu_millicores=100, memory_bytes=100 * MiB),
            incoming(cpu_millicores=200, memory_bytes=200 * MiB),
            "insufficient-cpu",
            id="cpu before memory",
        ),
        pytest.param(
            make_node("n1", memory_bytes=100 * MiB, pods=0),
            incoming(memory_bytes=200 * MiB),
            "insufficient-memory",
            id="memory before pod count",
        ),
    ],
)
def test_first_failing_rule_is_reported(node: Node, pod: Pod, expected: str) -> None:
    assert occupancy([node]).fit_failure(pod, "n1") == expected
    assert expected in FIT_REASONS


def test_extra_taints_count_as_node_taints() -> None:
    occ = occupancy([make_node("n1")])
    hard = (Taint(key="loadaware.io/hotspot", effect="NoSchedule"),)
    soft = (Taint(key="loadaware.io/hotspot", effect="PreferNoSchedule"),)
    assert occ.fit_failure(incoming(), "n1", extra_taints=hard) == "untolerated-taint"
    assert occ.fit_failure(incoming(), "n1", extra_taints=soft) is None


def test_fit_mask_agrees_with_fit_failure_on_a_mixed_cluster() -> None:
    rng = random.Random(7)
    nodes = [
        make_node(
            f"n{i:02d}",
            cpu_millicores=rng.choice([1000, 2000, 4000]),
            pods=rng.choice([3, 110]),
            zone=rng.choice(["a", "b", "c", None]),
            taints=[Taint(key="t", effect="NoSchedule")] if i % 7 == 0 else (),
            ready=i % 11 != 0,
            extended={GPU: rng.choice([1, 2])} if i % 3 == 0 else None,
        )
        for i in range(30)
    ]
    apps = ["web", "db", "cache"]

    def random_pod(name: str, node: str | None) -> Pod:
        anti = ()
        affinity = ()
        roll = rng.random()
        if roll < 0.3:
            anti = (term({"app": rng.choice(apps)}, rng.choice([ZONE, HOSTNAME])),)
        elif roll < 0.4:
            affinity = (term({"app": rng.choice(apps)}, rng.choice([ZONE, HOSTNAME])),)
        return make_pod(
            name,
            node=node,
            labels={"app": rng.choice(apps)},
            namespace=rng.choice(["shop", "blog"]),
            cpu_millicores=rng.choice([0, 100, 500]),
            host_ports=(8080,) if rng.random() < 0.1 else (),
            extended_requests={GPU: 1} if rng.random() < 0.2 else {},
            required_pod_anti_affinity=anti,
            required_pod_affinity=affinity,
        )

    placed = [random_pod(f"p{j}", rng.choice(nodes).name) for j in range(60)]
    occ = occupancy(nodes, placed, NAMESPACE_LABELS)
    names = [n.name for n in nodes]
    probes = [random_pod(f"q{j}", None) for j in range(40)] + rng.sample(placed, 20)
    for step, pod in enumerate(probes):
        if step % 5 == 0:  # interleave moves so the indexes are exercised
            mover = rng.choice(placed)
            occ.add(mover, rng.choice(names))
        mask = occ.fit_mask(pod, occ.node_indexes(names))
        expected = [occ.fit_failure(pod, name) is None for name in names]
        assert mask.tolist() == expected, pod.key


def test_placed_pods_keep_their_reasons_after_round_trip_moves() -> None:
    pods = [make_pod(f"web-{i}", node="a1", labels=WEB, cpu_millicores=100) for i in range(3)]
    occ = occupancy(ZONED, pods)
    before = occ.requested("a1")
    for pod in pods:
        occ.remove(pod)
        occ.add(dataclasses.replace(pod, node_name="b1"), "b1")
        occ.remove(pod)
        occ.add(pod, "a1")
    assert occ.requested("a1") == before
    assert occ.requested("b1") == (0, 0, 0)
