"""`generate_cluster`: a cluster of any size, in one of two families (see the package
docstring), from the generator's steps joined in `Generator`.
"""

from __future__ import annotations

import datetime

from loadaware.sim.scenarios import (
    _base,
    _catalogue,
    _families,
    _placement,
    _render_nodes,
    _render_pods,
    _render_workloads,
    _usage,
    _workloads,
)


class Generator(
    _families.Families,
    _workloads.Workloads,
    _placement.Placement,
    _usage.Usage,
    _render_nodes.NodeRendering,
    _render_pods.PodRendering,
    _render_workloads.WorkloadRendering,
):
    """The generator's steps joined: `run()` makes the objects and the metrics document."""


def generate_cluster(
    *,
    nodes: int,
    pods_per_node: int = 30,
    zones: int = 3,
    seed: int = 0,
    capacity: _catalogue.Capacity = "loose",
    hot_fraction: float = 0.1,
    family: _catalogue.Family = "proportional",
    now: datetime.datetime,
) -> _base.Scenario:
    """A cluster of `nodes` nodes and about `nodes * pods_per_node` pods, DaemonSets included.

    `family` chooses how usage relates to requests (see the package docstring);
    the default's output does not depend on the other family's existence."""
    if nodes < 1:
        raise ValueError("nodes must be at least 1")
    if pods_per_node < _catalogue.DS_COUNT + 2:
        raise ValueError(f"pods_per_node must be at least {_catalogue.DS_COUNT + 2}")
    if not 1 <= zones <= 26:
        raise ValueError("zones must be between 1 and 26")
    if capacity not in _catalogue.MEAN_USAGE:
        raise ValueError("capacity must be 'loose' or 'tight'")
    if not 0.0 <= hot_fraction <= 0.5:
        raise ValueError("hot_fraction must be between 0 and 0.5")
    if family not in _catalogue.FAMILIES:
        raise ValueError("family must be " + " or ".join(repr(f) for f in _catalogue.FAMILIES))
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    generated = Generator(
        nodes=nodes,
        pods_per_node=pods_per_node,
        zones=zones,
        seed=seed,
        capacity=capacity,
        hot_fraction=hot_fraction,
        family=family,
        now=now,
    ).run()
    description = (
        f"{nodes} nodes, about {pods_per_node} pods each, {zones} zones, "
        f"{capacity} capacity, seed {seed}"
    )
    if family != "proportional":
        description += f", {family} usage"
    return _base.Scenario(
        name=f"generated-{nodes}",
        description=description,
        objects=generated.objects,
        metrics=generated.metrics,
    )
