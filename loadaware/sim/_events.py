"""Events: recorded by the simulated controllers, and the events.k8s.io/v1 view of them.

Both API groups serve the same stored events, as in a real cluster: they are
kept in core/v1 form and converted on the way in and out of events.k8s.io/v1.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from loadaware.sim import _clock, _resources, _store


def record(
    store: _store.Store,
    involved: Mapping[str, Any],
    *,
    type_: str,
    reason: str,
    message: str,
    component: str,
    host: str = "",
) -> None:
    """Record an event about `involved`, or count one more on the same event; lock held."""
    meta = involved["metadata"]
    namespace = meta.get("namespace") or "default"
    now = _clock.rfc3339(store.clock.time())
    for existing in store.objects(_resources.EVENTS, namespace):
        regarding = existing.get("involvedObject") or {}
        if (
            regarding.get("uid") == meta.get("uid")
            and existing.get("reason") == reason
            and existing.get("message") == message
        ):
            updated = {
                **existing,
                "count": int(existing.get("count") or 1) + 1,
                "lastTimestamp": now,
                "metadata": dict(existing["metadata"]),
            }
            store.replace(_resources.EVENTS, existing, updated)
            return
    source: dict[str, str] = {"component": component}
    if host:
        source["host"] = host
    event = {
        "metadata": {
            "name": f"{meta['name']}.{secrets.token_hex(8)}",
            "namespace": namespace,
        },
        "involvedObject": {
            "kind": involved.get("kind"),
            "namespace": meta.get("namespace", ""),
            "name": meta["name"],
            "uid": meta.get("uid", ""),
            "apiVersion": involved.get("apiVersion"),
            "resourceVersion": meta.get("resourceVersion", ""),
        },
        "reason": reason,
        "message": message,
        "source": source,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": type_,
        "eventTime": None,
        "reportingComponent": component,
        "reportingInstance": host,
    }
    if not event["involvedObject"]["namespace"]:
        del event["involvedObject"]["namespace"]
    store.create(_resources.EVENTS, namespace, event)


def to_events_v1(event: Mapping[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event as events.k8s.io/v1 shows it."""
    source = event.get("source") or {}
    result: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": "events.k8s.io/v1",
        "metadata": event.get("metadata") or {},
        "eventTime": event.get("eventTime"),
    }
    if event.get("series"):
        result["series"] = event["series"]
    result["reportingController"] = event.get("reportingComponent") or source.get("component", "")
    result["reportingInstance"] = event.get("reportingInstance") or source.get("host", "")
    if event.get("action"):
        result["action"] = event["action"]
    result["reason"] = event.get("reason", "")
    result["regarding"] = event.get("involvedObject") or {}
    if event.get("related"):
        result["related"] = event["related"]
    result["note"] = event.get("message", "")
    result["type"] = event.get("type", "")
    if event.get("firstTimestamp"):
        result["deprecatedFirstTimestamp"] = event["firstTimestamp"]
    if event.get("lastTimestamp"):
        result["deprecatedLastTimestamp"] = event["lastTimestamp"]
    if event.get("count"):
        result["deprecatedCount"] = event["count"]
    if source:
        result["deprecatedSource"] = source
    return result


def from_events_v1(event: Mapping[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event in the stored core/v1 form."""
    result: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": event.get("metadata") or {},
        "involvedObject": event.get("regarding") or {},
        "reason": event.get("reason", ""),
        "message": event.get("note", ""),
        "source": event.get("deprecatedSource") or {},
        "count": event.get("deprecatedCount") or 1,
        "type": event.get("type", ""),
        "eventTime": event.get("eventTime"),
        "reportingComponent": event.get("reportingController", ""),
        "reportingInstance": event.get("reportingInstance", ""),
    }
    for ours, theirs in (
        ("firstTimestamp", "deprecatedFirstTimestamp"),
        ("lastTimestamp", "deprecatedLastTimestamp"),
        ("series", "series"),
        ("action", "action"),
        ("related", "related"),
    ):
        if event.get(theirs):
            result[ours] = event[theirs]
    return result


def is_events_v1(resource: _resources.Resource) -> bool:
    return resource is _resources.EVENTS_V1


_EVENTS_V1_FIELDS = {
    "regarding.": "involvedObject.",
    "reportingController": "reportingComponent",
}


def events_v1_fields(text: str) -> str:
    """events.k8s.io field selectors in the stored (core/v1) field names."""
    for theirs, ours in _EVENTS_V1_FIELDS.items():
        text = text.replace(theirs, ours)
    return text
