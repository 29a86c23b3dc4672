"""Field values of raw objects, vectorised where 150,000 pods need them: quantities,
UIDs, generated names, timestamps, owner references, node pinning and QoS class.
"""

from __future__ import annotations

import datetime
import math
from typing import Any

import numpy as np

from loadaware.sim.scenarios import _catalogue


def cpu_quantity(millicores: int) -> str:
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"


def memory_quantity(size: int) -> str:
    for unit, factor in (("Gi", _catalogue.GiB), ("Mi", _catalogue.MiB), ("Ki", _catalogue.KiB)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def uids(rng: np.random.Generator, count: int) -> list[str]:
    """Version-4-shaped UIDs from the seeded generator (uuid4 would break determinism)."""
    text = rng.bytes(16 * count).hex()
    variants = rng.integers(8, 12, size=count).tolist()
    out = []
    for i in range(count):
        h = text[32 * i : 32 * i + 32]
        out.append(
            f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_catalogue.HEX[variants[i]]}{h[17:20]}-{h[20:]}"
        )
    return out


def hex_ids(rng: np.random.Generator, count: int, length: int = 64) -> list[str]:
    text = rng.bytes(count * length // 2).hex()
    return [text[i * length : (i + 1) * length] for i in range(count)]


def safe_strings(rng: np.random.Generator, count: int, length: int) -> list[str]:
    chars = _catalogue.SAFE_ALPHABET[
        rng.integers(0, len(_catalogue.SAFE_ALPHABET), size=(count, length))
    ]
    return chars.view(f"<U{length}").ravel().tolist()


def timestamps(now: datetime.datetime, ages_seconds: np.ndarray) -> list[str]:
    """RFC 3339 strings for `now - age`, vectorised: formatting 300,000 datetimes one by one
    costs more than building the pods."""
    base = np.datetime64(now.astimezone(datetime.UTC).replace(tzinfo=None), "s")
    moments = base - np.rint(ages_seconds).astype("timedelta64[s]")
    return [s + "Z" for s in np.datetime_as_string(moments, unit="s").tolist()]


def scaled(value: int | str, expected: int) -> int:
    """An IntOrString of a PodDisruptionBudget against the expected pod count, rounded up
    as the disruption controller does."""
    if isinstance(value, str):
        return math.ceil(int(value.rstrip("%")) * expected / 100)
    return value


def unique_name(generate_name: str, suffix: str, position: int, used: set[str]) -> str:
    """generateName plus a random suffix, drawn again on a clash: a DaemonSet's thousands of
    pods would otherwise meet the birthday bound of five-character suffixes."""
    pod_name = f"{generate_name}{suffix}"
    attempt = 0
    while pod_name in used:
        attempt += 1
        # Seeded by position, so the draw stays deterministic and the main stream unchanged.
        redraw = safe_strings(np.random.default_rng([position, attempt]), 1, 5)[0]
        pod_name = f"{generate_name}{redraw}"
    used.add(pod_name)
    return pod_name


def owner_reference(kind: str, name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pinned_to(node_name: str) -> dict[str, Any]:
    """The node affinity the DaemonSet controller writes into each of its pods."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": [node_name]}
                        ]
                    }
                ]
            }
        }
    }


def qos_class(limits: str) -> str:
    return "Guaranteed" if limits == "guaranteed" else "Burstable"
