"""Properties of build_plan on random small clusters (Hypothesis).

Covers: every eviction is from a hot node, of an evictable running pod, to a
node that fits and stays under its targetThresholds; limits and PDB budgets
hold; DaemonSet and mirror pods are never chosen; the same input gives the
same plan.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadaware.cluster import LabelSelector, PodAffinityTerm, Taint
from loadaware.plan import build_plan, plan_to_json
from loadaware.policy import parse_policy
from tests.lib.builders import (
    NOW,
    GiB,
    MiB,
    daemonset,
    make_cluster,
    make_node,
    make_pdb,
    make_pod,
    make_usage,
    sample,
)
from tests.lib.plan_checks import check_plan

APPS = ("web", "api", "db", "cache", "batch")


@st.composite
def scenarios(draw):
    node_count = draw(st.integers(2, 6))
    nodes, node_usage = [], {}
    for i in range(node_count):
        name = f"n{i}"
        taints = (
            [Taint(key="dedicated", value="x", effect="NoSchedule")]
            if draw(st.booleans()) and i
            else []
        )
        nodes.append(
            make_node(
                name,
                zone=f"z{i % 2}",
                taints=taints,
                unschedulable=draw(st.booleans()) and i > 1,
                cpu_millicores=draw(st.sampled_from([2000, 4000, 8000])),
            )
        )
    pods, pod_usage = [], {}
    for node in nodes:
        total_cpu = 0.2
        for j in range(draw(st.integers(0, 6))):
            app = draw(st.sampled_from(APPS))
            kind = draw(st.sampled_from(["rs", "rs", "rs", "ds", "mirror"]))
            name = f"{app}-{node.name}-{j}"
            fields = {}
            if kind == "ds":
                fields = {"owner": daemonset(app)}
            elif kind == "mirror":
                fields = {"annotations": {"kubernetes.io/config.mirror": "x"}, "owner": None}
            if app == "db":
                term = PodAffinityTerm(
                    label_selector=LabelSelector(match_labels={"app": "db"}),
                    topology_key=draw(
                        st.sampled_from(["kubernetes.io/hostname", "topology.kubernetes.io/zone"])
                    ),
                )
                fields["required_pod_anti_affinity"] = (term,)
            pod = make_pod(
                name,
                node=node.name,
                labels={"app": app},
                cpu_millicores=draw(st.sampled_from([100, 250, 500])),
                memory_bytes=256 * MiB,
                **fields,
            )
            pods.append(pod)
            cpu = draw(st.floats(0.0, 1.5))
            total_cpu += cpu
            pod_usage[pod.key] = sample(cpu, draw(st.floats(0, 2)) * GiB)
        mem = sum(pod_usage[p.key].memory_bytes for p in pods if p.node_name == node.name) + GiB
        cap = node.allocatable_cpu_millicores / 1000
        node_usage[node.name] = sample(min(total_cpu, 1.9 * cap), min(mem, 30 * GiB))
    limits = {
        key: draw(st.one_of(st.none(), st.integers(0, 3)))
        for key in (
            "maxNoOfPodsToEvictPerNode",
            "maxNoOfPodsToEvictPerNamespace",
            "maxNoOfPodsToEvictPerWorkload",
            "maxNoOfPodsToEvictTotal",
        )
    }
    pdbs = [make_pdb("web", {"app": "web"}, disruptions_allowed=draw(st.integers(0, 2)))]
    policy = parse_policy({"limits": {k: v for k, v in limits.items() if v is not None}})
    cluster = make_cluster(nodes, pods, pdbs=pdbs)
    return cluster, make_usage(node_usage, pod_usage), policy


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_every_planned_eviction_is_sound(scenario) -> None:
    cluster, usage, policy = scenario
    plan = build_plan(cluster, usage, policy, NOW)
    assert plan.status in ("planned", "noop")
    assert check_plan(plan, cluster, usage, policy, NOW) == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_same_input_same_plan(scenario) -> None:
    cluster, usage, policy = scenario
    assert plan_to_json(build_plan(cluster, usage, policy, NOW)) == plan_to_json(
        build_plan(cluster, usage, policy, NOW)
    )
