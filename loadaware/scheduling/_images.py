"""kube-scheduler's ImageLocality: nodes that already hold a pod's images score higher.

`NodeImages` is what the scheduler's cache knows of the images on the nodes
(their `status.images`): per image name, its size and the nodes that report
it. `image_locality` is the plugin's Score, with the Go code's arithmetic:
per image of the pod (init containers and containers, by name with ":latest"
added where the name has no tag), its size times the share of all nodes that
report it, summed per node, clamped between 23 MiB and 1000 MiB per image,
and scaled to 0-100.

The names are compared as written, as kube-scheduler does: a pod asking for
`nginx` does not match a node reporting `docker.io/library/nginx:latest`.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from loadaware.cluster._types import Node

IntArray: TypeAlias = npt.NDArray[np.int64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]

MAX_NODE_SCORE = 100
_MIB = 1024 * 1024
# The bounds of the summed image sizes the score scales between: a sum below the
# lower one scores 0, at or above the upper one (per image of the pod) 100.
MIN_THRESHOLD_BYTES = 23 * _MIB
MAX_CONTAINER_THRESHOLD_BYTES = 1000 * _MIB


@dataclass(frozen=True, slots=True)
class ImageState:
    """One image name as the scheduler's cache holds it (ImageStateSummary)."""

    size_bytes: int
    num_nodes: int  # nodes that report the name
    on_node: BoolArray  # per node, in the order NodeImages was given them (read-only)


class NodeImages:
    """The image names the nodes report, indexed on first use.

    A name's size is the one the first node reporting it gave: kube-scheduler's
    cache keeps an image's state from the first node that adds it, and a
    scheduler starting up adds nodes in the API server's list order, by name.
    """

    __slots__ = ("_holders", "_nodes", "_states")

    def __init__(self, nodes: Sequence[Node]) -> None:
        self._nodes = nodes
        self._holders: dict[str, tuple[int, list[list[int]]]] | None = None
        self._states: dict[str, ImageState | None] = {}

    @property
    def node_count(self) -> int:
        return len(self._nodes)

    def state(self, name: str) -> ImageState | None:
        """The name's size and holders; None when no node reports it."""
        if name in self._states:
            return self._states[name]
        found = self._index().get(name)
        state = None
        if found is not None:
            size, holders = found
            on_node = np.zeros(len(self._nodes), dtype=np.bool_)
            for some in holders:
                on_node[some] = True
            on_node.flags.writeable = False
            state = ImageState(
                size_bytes=size, num_nodes=int(np.count_nonzero(on_node)), on_node=on_node
            )
        self._states[name] = state
        return state

    def _index(self) -> dict[str, tuple[int, list[list[int]]]]:
        """Per name, the size the first node (by name) gives it, and the nodes reporting
        it, in one list per distinct entry naming it."""
        index = self._holders
        if index is not None:
            return index
        nodes = self._nodes
        # The converter shares one object per distinct entry, so entries are grouped
        # by identity, cheaper than by value: a dump's nodes repeat a few hundred
        # entries thousands of times. Equal entries that are distinct objects only
        # make more groups.
        groups: dict[int, tuple[Sequence[str], int, list[int]]] = {}
        for i in sorted(range(len(nodes)), key=lambda i: nodes[i].name):
            for image in nodes[i].images:
                group = groups.get(id(image))
                if group is None:
                    groups[id(image)] = (image.names, image.size_bytes, [i])
                else:
                    group[2].append(i)
        index = {}
        # In order of each group's first node, so a name's first group gives its size.
        for names, size, holders in groups.values():
            for name in names:
                found = index.get(name)
                if found is None:
                    index[name] = (size, [holders])
                elif found[1][-1] is not holders:  # a name listed twice in one entry
                    found[1].append(holders)
        self._holders = index
        return index


def normalized_image_name(name: str) -> str:
    """normalizedImageName: ":latest" added where the name has no tag. A digest
    (`repo@sha256:...`) counts as a tag, and a registry port (`host:5000/repo`) does not."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


@lru_cache(maxsize=4096)
def _normalized(images: tuple[str, ...]) -> tuple[str, ...]:
    # Keyed by the pod's tuple, which the replicas of a workload share.
    return tuple(normalized_image_name(image) for image in images)


def image_locality(
    images: tuple[str, ...], node_images: NodeImages, indexes: IntArray
) -> IntArray | None:
    """ImageLocality's score (0-100) of the indexed nodes for a pod with these container
    images (init containers' included); None when none of those nodes reports any of
    them, where every score is 0."""
    names = _normalized(images)
    if not names:
        return None
    total_nodes = node_images.node_count
    summed: IntArray | None = None
    # Every container counts, the same image twice included, as in sumImageScores.
    for name in names:
        state = node_images.state(name)
        if state is None:
            continue
        held = state.on_node[indexes]
        if not held.any():
            continue
        # scaledImageScore: the size times the share of nodes holding the image, in
        # float64 and truncated, so that an image few nodes hold counts little.
        scaled = int(float(state.size_bytes) * (state.num_nodes / total_nodes))
        summed = held * scaled if summed is None else summed + held * scaled
    if summed is None:
        return None
    # calculatePriority: clamped, then scaled with integer division (never negative).
    max_threshold = MAX_CONTAINER_THRESHOLD_BYTES * len(names)
    clamped = np.clip(summed, MIN_THRESHOLD_BYTES, max_threshold)
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD_BYTES) // (max_threshold - MIN_THRESHOLD_BYTES)
