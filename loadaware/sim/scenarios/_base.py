"""A generated cluster (`Scenario`) and the generator's state and steps: nodes, their
classes by family, workloads, placement, usage, ages, then the objects and the
metrics document. Each step lives in its own module; `_generator.Generator` joins
them.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

import numpy as np

from loadaware import gc_freeze
from loadaware.sim.scenarios import _catalogue, _fields


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    name: str
    description: str
    objects: list[dict[str, Any]]  # raw Kubernetes objects
    metrics: dict[str, Any]  # the --metrics document (collectedAt, nodes, pods)

    def cluster_document(self) -> dict[str, Any]:
        """The objects as a `kind: List`, as kubectl prints them. The items are not copied."""
        return {
            "apiVersion": "v1",
            "kind": "List",
            "items": list(self.objects),
            "metadata": {"resourceVersion": ""},
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class _Generated:
    objects: list[dict[str, Any]]
    metrics: dict[str, Any]


class GeneratorBase:
    """The generator's parameters, random numbers and counters, and the order of its
    steps; the steps are the other modules' mixins."""

    def __init__(
        self,
        *,
        nodes: int,
        pods_per_node: int,
        zones: int,
        seed: int,
        capacity: _catalogue.Capacity,
        hot_fraction: float,
        family: _catalogue.Family = "proportional",
        now: datetime.datetime,
    ) -> None:
        self.n = nodes
        self.family = family
        self.pods_per_node = pods_per_node
        self.zones = zones
        self.capacity = capacity
        self.hot_fraction = hot_fraction
        self.now = now.astimezone(datetime.UTC).replace(microsecond=0)
        self.rng = np.random.default_rng(seed)
        self.resource_version = 4_000_000 + int(self.rng.integers(0, 1_000_000))
        self.uid_buffer: list[str] = []
        self.hash_buffer: list[str] = []

    def uid(self) -> str:
        # Drawn in blocks: one draw per object would cost more than the object.
        if not self.uid_buffer:
            self.uid_buffer = _fields.uids(self.rng, 1024)[::-1]
        return self.uid_buffer.pop()

    def name_hash(self) -> str:
        """A pod-template-hash-like string."""
        if not self.hash_buffer:
            self.hash_buffer = _fields.safe_strings(self.rng, 1024, 10)[::-1]
        return self.hash_buffer.pop()

    def next_rv(self) -> str:
        self.resource_version += 1
        return str(self.resource_version)

    def run(self) -> _Generated:
        # Millions of small acyclic dicts: the cycle collector would only rescan them.
        with gc_freeze.paused():
            return self._run()

    @property
    def independent(self) -> bool:
        return self.family == "usage-independent"

    def _run(self) -> _Generated:
        self.make_nodes()
        if self.independent:
            self.classify_nodes_independently()
        else:
            self.classify_nodes()
        self.make_workloads()
        if self.independent:
            self.draw_independent_ratios()
        self.size_workloads()
        self.place_pods()
        self.compute_usage()
        self.compute_ages()
        objects = self.node_objects()
        objects += self.workload_and_pod_objects()
        return _Generated(objects=objects, metrics=self.metrics_document())
