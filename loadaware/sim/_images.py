"""Container images as the simulated kubelets report them in a node's status.images.

An image's digest and size are derived from its name, so that the same image
has the same entry on every node and in every run, and generating them takes
nothing from a scenario's random numbers. Entries are listed the largest first
and cut at the kubelet's nodeStatusMaxImages (50), as the kubelet lists them.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

MiB = 1024**2

# The sandbox image the container runtime pulls on every node, and its size.
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
_PAUSE_SIZE_BYTES = 320_368
# The kubelet's nodeStatusMaxImages: it reports this many images, the largest first.
NODE_STATUS_MAX_IMAGES = 50


@functools.cache
def digest(image: str) -> str:
    """A stable stand-in for an image digest, the same for every pod running the image."""
    return hashlib.sha256(image.encode()).hexdigest()


def size_bytes(image: str) -> int:
    """A stable stand-in for an image's size: 25-625 MiB, where most application
    images are."""
    if image == PAUSE_IMAGE:
        return _PAUSE_SIZE_BYTES
    return 25 * MiB + int(digest(image)[:12], 16) % (600 * MiB)


def entry(image: str) -> dict[str, Any]:
    """The image's status.images entry: its repository digest, then its tag."""
    if "@" in image:
        names = [image]  # pulled by digest: no tag to report
    else:
        slash, colon = image.rfind("/"), image.rfind(":")
        if colon > slash:
            repository, tagged = image[:colon], image
        else:
            repository, tagged = image, image + ":latest"  # the tag the runtime pulls
        names = [f"{repository}@sha256:{digest(image)}", tagged]
    return {"names": names, "sizeBytes": size_bytes(image)}


def listed(entries: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """status.images of a node holding the images of these entries: the largest first,
    at most NODE_STATUS_MAX_IMAGES."""
    return sorted(entries, key=_largest_first)[:NODE_STATUS_MAX_IMAGES]


def status_images(images: Iterable[str]) -> list[Mapping[str, Any]]:
    """status.images of a node that has pulled these images (see `listed`)."""
    return listed(entry(image) for image in dict.fromkeys(images))


def _largest_first(entry: Mapping[str, Any]) -> tuple[int, str]:
    names = entry.get("names") or ("",)
    return -int(entry.get("sizeBytes") or 0), str(names[-1])
