"""The pages of the cluster cache's pod list read typed, as the file loader reads pods
(_plain_pod).

The cache lists every pod when it starts and after a watch breaks. Parsed as
generic JSON and converted with the checks, a 150,000-pod list was most of a
round's planning CPU: the parse built every field of every pod as dicts, most of
them never read. Parsed typed, a pod keeps only what is read, and the containers
its workload's other pods carry alike are read once.

A pod PlainPodReader leaves to the checked way (another shape, init containers,
extended resources, host ports...), or whose text is not all ASCII (msgspec checks
the UTF-8 only of the parts it parses), is parsed as the generic path parses it and
left raw for _cache_objects' converter, as before. A page the typed parse refuses
(not JSON, not a list object, a key or a value a list does not have), or with an
item the generic parse refuses, is read the generic way whole
(_live.read_raw_page), which reports it as before, message for message.

Left as it is: a number beyond a double (1e400) in a part of an ASCII pod the typed
parse skips is not refused, since msgspec does not read what it skips. The API
server writes none (no field of a pod is a float, and Go's encoder writes no
infinity), and looking for one in the text costs half of what the typed read does.
"""

from __future__ import annotations

from typing import Any

import msgspec

from loadaware.cluster import _cache_objects, _convert, _live, _plain_pod


class _Page(msgspec.Struct, rename="camel", forbid_unknown_fields=True, gc=False):
    # The items are parsed one at a time; unknown keys are refused, so that every
    # part of the page the generic path would parse is parsed here too.
    kind: str = ""
    api_version: str = "v1"
    metadata: Any = None  # as the generic path reads it (see _live.note_version)
    items: list[msgspec.Raw] | None = None


_PAGE = msgspec.json.Decoder(_Page)
_POD = msgspec.json.Decoder(_plain_pod.PlainPod)
_JSON = msgspec.json.Decoder()


class PodPages:
    """Reads the pages of one pod list (a _live.PageReader), each item into a PodEntry,
    or raw where the generic path must convert it; not shared between threads. What
    the list's pods carry alike is kept once, for the list (see PlainPodReader)."""

    def __init__(self, converter: _convert.Converter) -> None:
        # The converter's reading: what the pods share is kept in the tables the
        # cache's watch events read through too.
        self._pods = _plain_pod.PlainPodReader(converter.reading)

    def read(self, path: str, data: bytes, meta: dict[str, Any] | None) -> list[Any]:
        try:
            page = _PAGE.decode(data)
        except msgspec.DecodeError:  # a ValidationError too
            return _live.read_raw_page(path, data, meta)
        _live.note_version(meta, page.metadata)
        item_kind = _live.item_kind_of(page.kind)
        api_version = page.api_version
        all_ascii = data.isascii()
        read: list[Any] = []
        for text in page.items or ():
            entry = None
            if all_ascii or bytes(text).isascii():
                entry = self._entry(text, item_kind, api_version)
            if entry is None:
                try:
                    item = _JSON.decode(text)
                except msgspec.DecodeError:
                    # Said as the generic path says it, of the whole page.
                    return _live.read_raw_page(path, data, meta)
                read.append(_live.stamped(item, item_kind, api_version))
            else:
                read.append(entry)
        return read

    def _entry(
        self, text: msgspec.Raw, item_kind: str, api_version: str
    ) -> _cache_objects.PodEntry | None:
        """The pod as _cache_objects' converter keeps it; None for one it must convert."""
        try:
            item = _POD.decode(text)
        except msgspec.DecodeError:
            return None
        item.kind = item_kind
        item.api_version = api_version
        read = self._pods.read(item)
        if read is None:
            return None
        pod, class_priority = read
        assert item.status is not None  # PlainPodReader reads no pod without one
        unschedulable = any(
            _cache_objects.found_no_node(c.type, c.status, c.reason) for c in item.status.conditions
        )
        return _cache_objects.PodEntry(pod, class_priority, unschedulable)
