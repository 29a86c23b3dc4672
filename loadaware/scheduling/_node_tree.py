"""kube-scheduler's nodeTree: the order in which it walks the nodes.

kube-scheduler files each node under its zone key (region and zone labels,
utilnode.GetZoneKey), zones in the order their first node was added and each
zone's nodes in the order they were added; its node list takes the first node
of every zone, then the second of every zone, and so on
(pkg/scheduler/backend/cache/node_tree.go). Removing a node removes it from its
zone, and a zone left empty goes, so a zone that comes back is last. The
scheduler's snapshot lists nodes in this order, and its filtering walks them
in it (see _node_sampling).

Nodes are named with their labels, as the tree reads nothing else; the caller
keeps the tree current as nodes are added, relabelled and deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
BETA_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"


def zone_key(labels: Mapping[str, str]) -> str:
    """utilnode.GetZoneKey: "region:\\x00:zone", or "" for a node with neither.

    The deprecated failure-domain.beta labels win where a node has them, even
    empty, as in the Go code: nodes kept from older clusters carry both."""
    zone = labels[BETA_ZONE_LABEL] if BETA_ZONE_LABEL in labels else labels.get(ZONE_LABEL, "")
    if BETA_REGION_LABEL in labels:
        region = labels[BETA_REGION_LABEL]
    else:
        region = labels.get(REGION_LABEL, "")
    if not region and not zone:
        return ""
    # A NUL between the two, as in Go, so that a colon in either cannot collide.
    return f"{region}:\x00:{zone}"


class NodeTree:
    """Node names grouped by zone key, listed zones round-robin."""

    def __init__(self, nodes: Iterable[tuple[str, Mapping[str, str]]] = ()) -> None:
        """`nodes`: (name, labels) in the order they are added."""
        # Zone key -> its nodes; dicts keep insertion order, which is the zones' order.
        self._zones: dict[str, list[str]] = {}
        self._count = 0
        self._listed: tuple[str, ...] | None = None
        for name, labels in nodes:
            self.add(name, labels)

    def __len__(self) -> int:
        return self._count

    def zones(self) -> dict[str, tuple[str, ...]]:
        """Each zone key and its nodes, in the tree's order."""
        return {zone: tuple(names) for zone, names in self._zones.items()}

    def add(self, name: str, labels: Mapping[str, str]) -> None:
        """File the node under its zone; a node already there is left where it is."""
        zone = zone_key(labels)
        names = self._zones.get(zone)
        if names is None:
            self._zones[zone] = [name]
        elif name in names:
            return
        else:
            names.append(name)
        self._count += 1
        self._listed = None

    def remove(self, name: str, labels: Mapping[str, str]) -> bool:
        """Take the node out of the zone its labels name; False when it is not there."""
        zone = zone_key(labels)
        names = self._zones.get(zone)
        if names is None or name not in names:
            return False
        names.remove(name)
        if not names:
            del self._zones[zone]
        self._count -= 1
        self._listed = None
        return True

    def update(
        self, name: str, old_labels: Mapping[str, str], new_labels: Mapping[str, str]
    ) -> None:
        """A relabelled node moves to the end of its new zone; if its zone key is
        unchanged it keeps its place."""
        if zone_key(old_labels) == zone_key(new_labels):
            return
        self.remove(name, old_labels)
        self.add(name, new_labels)

    def list(self) -> tuple[str, ...]:
        """Every node: the first of each zone in zone order, then the second, ..."""
        if self._listed is None:
            groups = list(self._zones.values())
            depth = max((len(g) for g in groups), default=0)
            self._listed = tuple(g[i] for i in range(depth) for g in groups if i < len(g))
        return self._listed
