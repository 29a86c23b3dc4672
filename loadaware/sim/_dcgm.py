"""NVIDIA's DCGM exporter as the simulated cluster shows it: one DCGM_FI_DEV_GPU_UTIL
series per device of every Ready GPU node, with dcgm-exporter's labels and its
Kubernetes pod mapping (`namespace`, `pod` and `container` of the holder, empty on a
free device)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from loadaware.sim import _exposition

_GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"  # set by GPU feature discovery
_GPU_MODEL = "NVIDIA A10G"  # for a GPU node without the product label
_DCGM_PORT = 9400
_DRIVER_VERSION = "550.90.07"


def gpu_lines(
    nodes: list[Mapping[str, Any]],
    ready: set[str],
    node_ip: Mapping[str, str],
    *,
    devices: Mapping[str, int],
    holders: Mapping[str, Mapping[int, tuple[str, str]]],
    percent: Mapping[str, float],
    default_percent: float,
    stopped: set[str],
) -> list[str]:
    """DCGM_FI_DEV_GPU_UTIL series (labels and value) of every device of the Ready nodes
    whose exporter runs: `devices` per node, `holders` (pod key, container) by node and
    device index, each holder's utilisation in `percent` (else `default_percent`)."""
    lines = []
    for node in nodes:
        name = node["metadata"]["name"]
        if name not in ready or name in stopped:
            continue
        held = holders.get(name, {})
        model = _model(node)
        for index in range(devices.get(name, 0)):
            labels = {
                "DCGM_FI_DRIVER_VERSION": _DRIVER_VERSION,
                "Hostname": name,
                "UUID": _uuid(node, index),
                "device": f"nvidia{index}",
                "gpu": str(index),
                "instance": f"{node_ip.get(name, name)}:{_DCGM_PORT}",
                "job": "nvidia-dcgm-exporter",
                "modelName": model,
                "pci_bus_id": f"00000000:{0x10 + index:02X}:00.0",
                "container": "",
                "namespace": "",
                "pod": "",
            }
            value = 0.0
            if index in held:
                key, container = held[index]
                namespace, _, pod = key.partition("/")
                labels |= {"container": container, "namespace": namespace, "pod": pod}
                value = percent.get(key, default_percent)
            lines.append(_exposition.line(labels, value))
    return lines


def _model(node: Mapping[str, Any]) -> str:
    product = ((node.get("metadata") or {}).get("labels") or {}).get(_GPU_PRODUCT_LABEL)
    # GPU feature discovery writes NVML's model name with dashes for spaces. Only
    # the first is turned back: right for the usual names ("NVIDIA-A10G" is
    # "NVIDIA A10G", "NVIDIA-A100-SXM4-80GB" is "NVIDIA A100-SXM4-80GB").
    return product.replace("-", " ", 1) if product else _GPU_MODEL


def _uuid(node: Mapping[str, Any], index: int) -> str:
    """A stable device UUID in NVML's form, from the node's uid (or name) and the index."""
    meta = node.get("metadata") or {}
    seed = f"{meta.get('uid') or meta.get('name')}/{index}"
    h = hashlib.sha256(seed.encode()).hexdigest()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
