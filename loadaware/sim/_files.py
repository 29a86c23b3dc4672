"""Reading the files `sim serve --cluster FILE --metrics FILE` is given: a cluster
dump (`kubectl get -o json|yaml` output) and a `--metrics` document."""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any

import yaml

from loadaware import errors

_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_objects_file(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Raw objects from a cluster file (`kubectl get -o json|yaml` output), Lists flattened."""
    name = os.fspath(path)
    try:
        text = pathlib.Path(name).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise errors.InputError(f"cannot read cluster file {name}: {exc.strerror or exc}") from exc
    try:
        stripped = text.lstrip()
        if stripped.startswith(("{", "[")):
            documents = [json.loads(text)]
        else:
            documents = list(yaml.load_all(text, Loader=_YAML_LOADER))
    except (ValueError, yaml.YAMLError) as exc:
        raise errors.InputError(f"{name}: not JSON or YAML: {exc}") from exc
    objects: list[dict[str, Any]] = []

    def flatten(item: Any) -> None:
        if isinstance(item, list):
            for element in item:
                flatten(element)
        elif isinstance(item, dict):
            if str(item.get("kind", "")).endswith("List") and "items" in item:
                flatten(item.get("items") or [])
            elif item.get("metadata", {}).get("name"):
                objects.append(item)

    flatten(documents)
    if not objects:
        raise errors.InputError(f"{name}: no Kubernetes objects in the file")
    return objects


def load_metrics_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    name = os.fspath(path)
    try:
        document = json.loads(pathlib.Path(name).read_text(encoding="utf-8"))
    except OSError as exc:
        raise errors.InputError(f"cannot read metrics file {name}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise errors.InputError(f"{name}: invalid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise errors.InputError(f"{name}: expected a JSON object")
    return document
