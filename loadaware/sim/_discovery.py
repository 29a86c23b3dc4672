"""Discovery: what kubectl and the clients read to learn the API's groups, versions and
resources (/version, /api, /apis, /apis/{group}[/{version}], /api/v1), as
kube-apiserver answers. The OpenAPI documents are `_openapi`'s."""

from __future__ import annotations

from typing import Any

from loadaware.sim import _resources


def version_info() -> dict[str, Any]:
    version = _resources.KUBE_VERSION
    major, minor, _ = version.lstrip("v").split(".")
    return {
        "major": major,
        "minor": minor,
        "gitVersion": version,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2024-10-22T20:28:14Z",
        "goVersion": "go1.22.8",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def api_versions(address: tuple[str, int]) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": f"{address[0]}:{address[1]}"}
        ],
    }


def api_group(group: str) -> dict[str, Any]:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in _resources.groups()[group]]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": versions,
        "preferredVersion": versions[0],
    }


def api_groups() -> dict[str, Any]:
    groups = []
    for group in _resources.groups():
        one = api_group(group)
        del one["kind"], one["apiVersion"]
        groups.append(one)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_resources(group: str, version: str) -> dict[str, Any]:
    group_version = f"{group}/{version}" if group else version
    entries: list[dict[str, Any]] = []
    if group == _resources.METRICS_GROUP:
        for plural, kind, namespaced in (
            ("nodes", "NodeMetrics", False),
            ("pods", "PodMetrics", True),
        ):
            entries.append(
                {
                    "name": plural,
                    "singularName": "",
                    "namespaced": namespaced,
                    "kind": kind,
                    "verbs": ["get", "list"],
                }
            )
    for r in _resources.SERVED:
        if r.group != group or r.version != version:
            continue
        entry: dict[str, Any] = {
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(r.verbs),
        }
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        entries.append(entry)
        for sub in r.subresources:
            if sub == "status":
                entries.append(
                    {
                        "name": f"{r.plural}/status",
                        "singularName": "",
                        "namespaced": r.namespaced,
                        "kind": r.kind,
                        "verbs": ["get", "patch", "update"],
                    }
                )
            elif sub == "eviction":
                entries.append(
                    {
                        "name": f"{r.plural}/eviction",
                        "singularName": "",
                        "namespaced": True,
                        "group": "policy",
                        "version": "v1",
                        "kind": "Eviction",
                        "verbs": ["create"],
                    }
                )
            elif sub == "binding":
                entries.append(
                    {
                        "name": f"{r.plural}/binding",
                        "singularName": "",
                        "namespaced": True,
                        "kind": "Binding",
                        "verbs": ["create"],
                    }
                )
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": entries,
    }
