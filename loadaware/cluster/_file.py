"""`--cluster FILE`: a dump of real Kubernetes objects, read into a ClusterState.

Accepted: what `kubectl get ... -o yaml|json` prints (a `kind: List`), multi-document
YAML, a single object, or a bare array of objects; Lists may nest. Empty
documents are skipped; a file with no document at all is refused, since it is
far more likely a failed dump than an empty cluster.

JSON is read with the json module: a dump of a large cluster (150,000 pods) is
hundreds of megabytes, and YAML parsing would take minutes. A JSON List, what
`kubectl get -o json` prints, is read one item at a time (see _read_json_list).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Generator, Iterator
from typing import Any

import yaml

from loadaware import collector
from loadaware.cluster import _convert, _types
from loadaware.errors import InputError

_FIRST_CHARACTER = re.compile(r"\S")

# The C loader is an order of magnitude faster; the pure-Python one gives the same result.
_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_cluster_file(path: str | os.PathLike[str]) -> _types.ClusterState:
    """Read a cluster dump; InputError naming the file (and line, or object and field)."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as stream:
            data = stream.read()
    except OSError as exc:
        raise InputError(
            f"cannot read cluster file {name}: {exc.strerror or exc}",
            hint="dump one with: kubectl get nodes,pods,pdb,rs,deploy,sts,ds -A -o yaml > FILE",
        ) from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 text (byte {exc.start})") from exc
    del data  # a large dump is hundreds of megabytes: hold one copy at a time

    with collector.paused():
        state = _read_json_list(text)
        if state is None:
            documents = _parse_documents(name, text)
            del text
            if not documents:
                raise InputError(f"{name}: no Kubernetes objects in the file")
            try:
                state = _convert.cluster_state_from_objects(documents)
            except InputError as exc:
                raise InputError(f"{name}: {exc.message}", hint=exc.hint) from exc
            # Freed while the collector is still paused: once it runs again, its
            # first pass would otherwise walk every raw object (seconds, for nothing).
            del documents
        collector.age_built_objects()
    return state


def _read_json_list(text: str) -> _types.ClusterState | None:
    """The cluster in a text that is one JSON `*List` object, parsed and converted
    one item at a time: each raw item is freed before the next is parsed. Parsed
    whole, a dump of 150,000 pods is gigabytes of objects alive at once; scattered
    over that much memory they are slower to build, read and free.

    None for any other text, and for a List with anything wrong in it: the caller
    then reads the text whole, which reports the first problem in the order it
    checks them (the file's JSON or YAML error, else the first bad object kind by
    kind). Where nothing is wrong, both ways give the same ClusterState.
    """
    try:
        return _convert.cluster_state_from_stream(_json_list_items(text))
    except Exception:  # whatever it is, reading the text whole says it as before
        return None


class _NotAJsonListError(Exception):
    """The text is not one JSON object of a `*List` kind with an `items` array."""


# What json.loads skips between tokens (json.decoder.WHITESPACE).
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_JSON = json.JSONDecoder()  # as json.loads decodes: the C scanner, strict strings


def _json_list_items(text: str) -> Iterator[Any]:
    """The items of the `*List` object that is the whole text, each parsed as it is
    asked for. JSONDecodeError or _NotAJsonListError, on the way or once the items
    are through, where json.loads would not give such an object: broken JSON,
    trailing data, another top-level value or kind, `items` given twice (json.loads
    keeps the last) or not an array."""
    i = _skip_space(text, 0)
    if not text.startswith("{", i):
        raise _NotAJsonListError
    kind: Any = None
    items_seen = False
    i = _skip_space(text, i + 1)
    while not text.startswith("}", i):
        key, i = _JSON.raw_decode(text, i)
        i = _skip_space(text, i)
        if type(key) is not str or not text.startswith(":", i):
            raise _NotAJsonListError
        i = _skip_space(text, i + 1)
        if key == "items":
            if items_seen or not text.startswith("[", i):
                raise _NotAJsonListError
            items_seen = True
            i = yield from _json_array_items(text, i)
        else:
            value, i = _JSON.raw_decode(text, i)
            if key == "kind":
                kind = value
        i = _skip_space(text, i)
        if text.startswith(",", i):
            i = _skip_space(text, i + 1)
            if text.startswith("}", i):
                raise _NotAJsonListError  # a trailing comma
        elif not text.startswith("}", i):
            raise _NotAJsonListError
    if _skip_space(text, i + 1) != len(text):
        raise _NotAJsonListError  # trailing data
    if not (items_seen and isinstance(kind, str) and kind.endswith("List")):
        raise _NotAJsonListError  # _convert.iter_objects would not flatten it


def _json_array_items(text: str, i: int) -> Generator[Any, None, int]:
    """The values of the JSON array at text[i] (a `[`), one at a time; returns the
    index after its `]`."""
    i = _skip_space(text, i + 1)
    if text.startswith("]", i):
        return i + 1
    while True:
        item, i = _JSON.raw_decode(text, i)
        yield item
        del item  # freed while the next one is parsed
        i = _skip_space(text, i)
        if text.startswith("]", i):
            return i + 1
        if not text.startswith(",", i):
            raise _NotAJsonListError
        i = _skip_space(text, i + 1)


def _skip_space(text: str, i: int) -> int:
    match = _JSON_SPACE.match(text, i)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _parse_documents(name: str, text: str) -> list[Any]:
    """The file's non-empty documents; a top-level array counts as its elements."""
    first = _FIRST_CHARACTER.search(text)
    if first is not None and first.group() in ("{", "["):
        try:
            return _documents_of([json.loads(text)])
        except json.JSONDecodeError as json_error:
            # YAML flow style (`{kind: List, items: []}`) also starts this way.
            try:
                return _documents_of(_load_yaml(text))
            except yaml.YAMLError:
                raise InputError(
                    f"{name}: invalid JSON at line {json_error.lineno}, "
                    f"column {json_error.colno}: {json_error.msg}"
                ) from json_error
    try:
        return _documents_of(_load_yaml(text))
    except yaml.YAMLError as exc:
        raise InputError(
            f"{name}: invalid YAML{_yaml_position(exc)}: {_yaml_problem(exc)}"
        ) from exc


def _load_yaml(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=_YAML_LOADER))


def _documents_of(documents: list[Any]) -> list[Any]:
    result: list[Any] = []
    for document in documents:
        if document is None:
            continue
        if isinstance(document, list):
            result.extend(document)
        else:
            result.append(document)
    return result


def _yaml_position(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return ""
    return f" at line {mark.line + 1}, column {mark.column + 1}"


def _yaml_problem(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [exc.context, exc.problem]
        return ", ".join(part for part in parts if part)
    return str(exc)
