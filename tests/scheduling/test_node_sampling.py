"""The simulated kube-scheduler samples nodes as kube-scheduler does by default
(pkg/scheduler/schedule_one.go: findNodesThatFitPod, findNodesThatPassFilters).

Covered: the walk's start index moves by the nodes checked
(TestFairEvaluationForNodes: 500 nodes, 30 percent), infeasible nodes count as
checked, the feasible node that stops the walk does not, a walk that finds
too few has checked every node; a pod whose node affinity names its node is
filtered over that node only; in a simulated cluster of more than 100 nodes a
pod lands on the best node of the sample, not the best of the cluster, the
next pod's walk starts where the last stopped, only feasible nodes are
sampled, and TaintToleration normalises over the sample (so the landing is not
the cluster's best restricted to the sample); percentage 100 lands on the
cluster's best; below 100 nodes every feasible node is scored. Through `loadaware
sim serve` and the official client, --percentage-of-nodes-to-score moves a
pod's landing; a value outside 0..100 exits 2.
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import kubernetes.client
import numpy as np
import pytest

from loadaware import cli, cluster, errors, kube, scheduling, sim
from loadaware.cluster import NodeSelectorTerm, Requirement
from loadaware.scheduling import _node_sampling, _node_tree
from tests.lib.builders import make_node, make_pod
from tests.lib.objects import raw_pod
from tests.lib.sim import NOW
from tests.lib.wait import poll

# --- the walk ---


def _sampler(count: int, percentage: int = 0) -> tuple[_node_sampling.NodeSampler, Any]:
    nodes = [make_node(f"node-{i:03d}") for i in range(count)]
    tree = _node_tree.NodeTree((n.name, n.labels) for n in nodes)
    sampler = _node_sampling.NodeSampler(tree, percentage_of_nodes_to_score=percentage)
    return sampler, scheduling.Occupancy(nodes, [])


def test_start_index_moves_by_the_nodes_found_fair_evaluation() -> None:
    # TestFairEvaluationForNodes: 500 nodes that all fit, 30 percent so that
    # 500 is no multiple of the 150 nodes to find; more than twice round.
    sampler, occupancy = _sampler(500, percentage=30)
    to_find = scheduling.num_feasible_nodes_to_find(30, 500)
    assert to_find == 150
    order = sampler.tree.list()
    pod = make_pod("fits-anywhere", node=None, cpu_millicores=0, memory_bytes=0)
    for i in range(2 * (500 // to_find + 1)):
        start = sampler.next_start_index
        sample = sampler.sample(pod, occupancy)
        assert len(sample) == to_find
        assert sample == tuple(order[(start + k) % 500] for k in range(to_find))
        assert sampler.next_start_index == (i + 1) * to_find % 500


def test_infeasible_nodes_count_as_checked_and_the_stopping_node_does_not() -> None:
    feasible = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1], dtype=np.bool_)
    positions, checked = _node_sampling.walk(feasible, 1, 3)
    assert positions.tolist() == [2, 3, 6]
    # Positions 1-6 and 7 (infeasible, met before the fourth feasible node, 8).
    assert checked == 7


def test_a_walk_that_finds_too_few_has_checked_every_node() -> None:
    feasible = np.array([1, 0, 0, 1, 0], dtype=np.bool_)
    positions, checked = _node_sampling.walk(feasible, 4, 3)
    assert positions.tolist() == [0, 3]
    assert checked == 5
    assert _node_sampling.walk(feasible, 12, 1)[0].tolist() == [3]  # wraps


def test_exactly_as_many_feasible_as_wanted_checks_every_node() -> None:
    # The Go code stops only on finding one feasible node too many.
    feasible = np.array([0, 1, 1, 0], dtype=np.bool_)
    positions, checked = _node_sampling.walk(feasible, 0, 2)
    assert positions.tolist() == [1, 2]
    assert checked == 4


def test_a_pod_pinned_by_name_is_filtered_over_its_node_only() -> None:
    sampler, occupancy = _sampler(150)
    pinned = make_pod(
        "ds-pod",
        node=None,
        required_node_affinity=(
            NodeSelectorTerm(
                match_fields=(
                    Requirement(key="metadata.name", operator="In", values=("node-120",)),
                )
            ),
        ),
    )
    assert _node_sampling.named_nodes(pinned) == frozenset({"node-120"})
    assert sampler.sample(pinned, occupancy) == ("node-120",)
    assert sampler.next_start_index == 1
    anywhere = make_pod("web-1", node=None)
    assert _node_sampling.named_nodes(anywhere) is None
    assert sampler.sample(anywhere, occupancy)[0] == "node-001"


def test_a_term_without_names_leaves_every_node() -> None:
    pod = make_pod(
        "either",
        node=None,
        required_node_affinity=(
            NodeSelectorTerm(
                match_fields=(Requirement(key="metadata.name", operator="In", values=("a",)),)
            ),
            NodeSelectorTerm(
                match_expressions=(Requirement(key="disk", operator="In", values=("ssd",)),)
            ),
        ),
    )
    assert _node_sampling.named_nodes(pod) is None


def test_a_percentage_outside_0_to_100_is_refused() -> None:
    with pytest.raises(errors.InputError, match="0 \\(adaptive\\) to 100, not 101"):
        _node_sampling.NodeSampler(_node_tree.NodeTree(), percentage_of_nodes_to_score=101)


# --- in a simulated cluster ---

GiB = 1024**3


def _node(
    name: str,
    *,
    cpu: int = 4,
    memory_gib: int = 16,
    taints: Sequence[dict[str, str]] = (),
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {"taints": list(taints)} if taints else {},
        "status": {
            "capacity": {"cpu": str(cpu), "memory": f"{memory_gib}Gi", "pods": "110"},
            "allocatable": {"cpu": str(cpu), "memory": f"{memory_gib}Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _pod(
    name: str, *, node: str | None = None, cpu: str = "1", memory: str = "4Gi", second: int = 0
) -> dict[str, Any]:
    return raw_pod(
        name,
        created=f"2026-11-29T07:00:{second:02d}Z",
        image="app:1",
        cpu=cpu,
        memory=memory,
        node=node,
        phase="Running" if node else "Pending",
    )


def _names(count: int) -> list[str]:
    return [f"node-{i:03d}" for i in range(count)]


def _outsider_cluster() -> list[dict[str, Any]]:
    """120 nodes in one zone, so walked in name order. 4 cpu and 16Gi each but
    node-050 (8 and 32Gi), the best of the first 100, and node-110 (64 and 256Gi),
    the best of all; a 100-node sample from node-000 leaves node-110 out."""
    sizes = {"node-050": (8, 32), "node-110": (64, 256)}
    return [
        _node(n, cpu=sizes.get(n, (4, 16))[0], memory_gib=sizes.get(n, (4, 16))[1])
        for n in _names(120)
    ]


def _cluster(objects: Iterable[dict[str, Any]], percentage: int = 0) -> sim.SimCluster:
    return sim.build_cluster(
        objects=list(objects),
        clock=sim.SimClock(NOW, speed=0.0),
        ready_delay=0.0,
        percentage_of_nodes_to_score=percentage,
    )


def _bound(served: sim.SimCluster, name: str) -> str:
    return str(served.get("pods", "default", name)["spec"].get("nodeName") or "")


def test_a_pod_lands_on_the_best_of_the_sample_not_of_the_cluster() -> None:
    served = _cluster([*_outsider_cluster(), _pod("first", second=1), _pod("second", second=2)])
    served.reconcile()
    # 120 nodes: max(120 * 49 // 100, 100) = 100 to find, node-000 to node-099.
    assert _bound(served, "first") == "node-050"
    # The next walk starts at node-100 and wraps: node-110 is in its sample.
    assert _bound(served, "second") == "node-110"
    # It checked node-100 to node-079 and stopped at node-080.
    assert served.controllers.node_sampler.next_start_index == 80


def test_every_node_scored_at_percentage_100() -> None:
    served = _cluster([*_outsider_cluster(), _pod("first")], percentage=100)
    served.reconcile()
    assert _bound(served, "first") == "node-110"


def test_only_feasible_nodes_are_sampled_and_infeasible_ones_move_the_start() -> None:
    # 150 nodes; the first 30 are tainted NoSchedule, node-005 the largest of all.
    # The walk checks them, then finds 100 feasible nodes (node-030 to node-129)
    # and stops at node-130: 130 checked. node-140, larger than node-070, is past it.
    tainted = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    sizes = {"node-005": (64, 256), "node-070": (8, 32), "node-140": (16, 64)}
    nodes = [
        _node(
            n,
            cpu=sizes.get(n, (4, 16))[0],
            memory_gib=sizes.get(n, (4, 16))[1],
            taints=tainted if i < 30 else (),
        )
        for i, n in enumerate(_names(150))
    ]
    served = _cluster([*nodes, _pod("web")])
    served.reconcile()
    assert _bound(served, "web") == "node-070"
    assert served.controllers.node_sampler.next_start_index == 130


def _soft_taints(count: int) -> list[dict[str, str]]:
    return [{"key": f"soft-{k}", "value": "x", "effect": "PreferNoSchedule"} for k in range(count)]


def test_taint_toleration_normalises_over_the_sample() -> None:
    """node-000 (large, empty, one soft taint) against node-001 (small, busy, no
    taint), among 98 nodes like node-001 with one soft taint; outside the sample,
    20 small nodes with ten soft taints each.

    Over every node the most taints are ten, so one costs node-000 only 30 points
    and it wins: 192 + 270 against node-001's 112 + 300. Over the sample the most
    are one, which costs node-000 all 300 points: node-001 wins, 412 to 192."""
    nodes = [_node("node-000", cpu=16, memory_gib=64, taints=_soft_taints(1))]
    nodes.append(_node("node-001"))
    nodes += [_node(n, taints=_soft_taints(1)) for n in _names(100)[2:]]
    nodes += [_node(n, taints=_soft_taints(10)) for n in _names(120)[100:]]
    load = [_pod(f"load-{n}", node=n, cpu="2500m", memory="256Mi") for n in _names(120)[1:]]
    incoming = _pod("web", memory="1Gi")

    sampled = _cluster([*nodes, *load, incoming])
    state = cluster.cluster_state_from_objects([*nodes, *load])
    occupancy = scheduling.Occupancy.from_cluster(state)
    web = cluster.cluster_state_from_objects([incoming]).pods[0]
    # The cluster's best, and it is in the sample: scoring every node and keeping
    # the sample's best would land there.
    assert scheduling.best_nodes(web, occupancy, _names(120)) == ("node-000",)
    sampled.reconcile()
    assert _bound(sampled, "web") == "node-001"

    every = _cluster([*nodes, *load, incoming], percentage=100)
    every.reconcile()
    assert _bound(every, "web") == "node-000"


def test_below_100_nodes_every_feasible_node_is_scored() -> None:
    sizes = {"node-098": (64, 256)}
    nodes = [
        _node(n, cpu=sizes.get(n, (4, 16))[0], memory_gib=sizes.get(n, (4, 16))[1])
        for n in _names(99)
    ]
    served = _cluster([*nodes, _pod("web")])
    served.reconcile()
    assert _bound(served, "web") == "node-098"
    # Every node checked: the start index comes back where it was.
    assert served.controllers.node_sampler.next_start_index == 0


# --- through `loadaware sim serve` ---


def _write_cluster(path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    objects = path / "cluster.json"
    objects.write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": _outsider_cluster()})
    )
    stamp = NOW.isoformat().replace("+00:00", "Z")
    metrics = path / "metrics.json"
    metrics.write_text(
        json.dumps(
            {
                "collectedAt": stamp,
                "nodes": {
                    n: {"cpu": 0.5, "memory": 2 * GiB, "timestamp": stamp} for n in _names(120)
                },
                "pods": {},
            }
        )
    )
    return objects, metrics


@pytest.fixture
def cluster_files(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    return _write_cluster(tmp_path)


@contextlib.contextmanager
def _serve(
    tmp_path: pathlib.Path, files: tuple[pathlib.Path, pathlib.Path], *flags: str
) -> Iterator[pathlib.Path]:
    config = tmp_path / "kubeconfig"
    objects, metrics = files
    command = [sys.executable, "-m", "loadaware", "sim", "serve", "--cluster", str(objects)]
    command += ["--metrics", str(metrics), "--port", "0", "--kubeconfig-out", str(config)]
    process = subprocess.Popen([*command, *flags], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("kubeconfig written to")
        yield config
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def _landing(config: pathlib.Path) -> str:
    from loadaware.kube import ClientSettings

    core = kubernetes.client.CoreV1Api(kube.api_client(ClientSettings(kubeconfig=str(config))))
    created = _pod("web")
    del created["status"], created["metadata"]["creationTimestamp"]
    core.create_namespaced_pod("default", created)
    node = poll(
        lambda: core.read_namespaced_pod("web", "default").spec.node_name,
        "the pod bound to a node",
        timeout=30,
    )
    return str(node)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        pytest.param((), "node-050", id="default: the best of the first 100 nodes"),
        pytest.param(
            ("--percentage-of-nodes-to-score", "100"), "node-110", id="100: the best of all"
        ),
    ],
)
def test_sim_serve_flag_decides_the_landing(
    tmp_path: pathlib.Path,
    cluster_files: tuple[pathlib.Path, pathlib.Path],
    flags: tuple[str, ...],
    expected: str,
) -> None:
    with _serve(tmp_path, cluster_files, *flags) as config:
        assert _landing(config) == expected


def test_sim_serve_refuses_a_percentage_outside_0_to_100(
    cluster_files: tuple[pathlib.Path, pathlib.Path], capsys: pytest.CaptureFixture[str]
) -> None:
    objects, metrics = cluster_files
    flags = ["--metrics", str(metrics), "--port", "0", "--percentage-of-nodes-to-score", "101"]
    code = cli.main(["sim", "serve", "--cluster", str(objects), *flags])
    assert code == 2
    assert "--percentage-of-nodes-to-score must be 0 (adaptive) to 100, not 101" in (
        capsys.readouterr().err
    )
