"""Node watch events read typed (_cache_node_events) are read as the generic path
reads them, or left to it."""

from __future__ import annotations

import datetime
import json
from typing import Any

import msgspec
from hypothesis import example, given, settings
from hypothesis import strategies as st

from loadaware.cluster import _cache_node_events, _cache_store
from tests.cluster.test_plain_pod import DATA, NODE, checked_node

EVENTS = _cache_node_events.NodeEvents()


def event_line(type_: str, raw: Any) -> bytes:
    return msgspec.json.encode({"type": type_, "object": raw})


@settings(max_examples=1000, deadline=None)
@given(
    NODE, st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]), st.sampled_from(["", "41"])
)
@example(  # a value JSON writes as a string: both paths read the same text
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "worker-a"},
        "spec": {
            "taints": [
                {
                    "key": datetime.datetime(2026, 11, 28, tzinfo=datetime.UTC),
                    "effect": "NoSchedule",
                }
            ]
        },
        "status": {"allocatable": {"cpu": "100m", "memory": "100m"}},
    },
    "ADDED",
    "",
)
def test_a_node_event_is_read_as_the_generic_path_reads_it(
    raw: dict[str, Any], type_: str, version: str
) -> None:
    if version and isinstance(raw.get("metadata"), dict):
        raw["metadata"]["resourceVersion"] = version
    line = event_line(type_, raw)
    raw = msgspec.json.decode(line)["object"]  # as the generic path reads it
    read = EVENTS.read(line)
    if read is None:
        return
    assert type_ in ("ADDED", "MODIFIED")
    assert read.type == type_
    assert read.node == checked_node(raw)
    assert read.resource_version == version
    assert read.taints == _cache_store.NodeTaints.of(raw)


def test_a_taint_change_on_a_real_node_is_read_the_typed_way() -> None:
    raw = json.loads((DATA / "cluster.json").read_text())["items"][0]
    raw["metadata"]["resourceVersion"] = "7"
    taint = {"key": "loadaware.io/hotspot", "effect": "PreferNoSchedule", "timeAdded": None}
    raw.setdefault("spec", {})["taints"] = [taint]
    read = EVENTS.read(event_line("MODIFIED", raw))
    assert read is not None
    assert read.node == checked_node(raw)
    assert read.taints == _cache_store.NodeTaints("7", (taint,))


def test_events_the_typed_reader_does_not_read_are_left_to_the_generic_path() -> None:
    raw = json.loads((DATA / "cluster.json").read_text())["items"][0]
    raw["metadata"]["resourceVersion"] = "7"
    assert EVENTS.read(event_line("MODIFIED", raw)) is not None
    refused = json.loads(json.dumps(raw))
    refused.setdefault("spec", {})["taints"] = [{"key": "k", "effect": "Sometimes"}]
    labelled = json.loads(json.dumps(raw))
    labelled["metadata"]["labels"] = {"zone": "zürich"}
    for line in (
        event_line("MODIFIED", refused),  # read_node refuses it: the generic path says why
        event_line("DELETED", raw),
        event_line("MODIFIED", labelled).replace(b"\\u00fc", "ü".encode()),  # not ASCII
        b'{"type":"ERROR","object":{"code":410}}',
        b"not json",
    ):
        assert EVENTS.read(line) is None
