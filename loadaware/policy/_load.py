"""Reading a policy file into a LoadAwarePolicy, and writing one back out.

Every problem pydantic finds becomes one line of a single PolicyError, so a user
fixes a file in one pass. Each line names the field as the file spells it
(`nodePools[0].thresholds.cpu`) and says what is allowed there. Values of
secret-looking fields are never echoed.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import hashlib
import json
import os
import pathlib
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import pydantic
import yaml
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from loadaware import errors
from loadaware.policy import _duration, _model

# A field whose name contains one of these may hold credentials: its value is not
# repeated in error messages. `headers` carries Authorization values.
_SENSITIVE_WORDS = ("token", "password", "secret", "headers", "authorization")

_MAX_SHOWN_CHARS = 60


def load_policy(path: str | os.PathLike[str]) -> _model.LoadAwarePolicy:
    """Read and validate a policy file (YAML, or JSON when named *.json).

    Raises InputError when the file cannot be read or parsed (naming path and line),
    PolicyError when it is empty or invalid (listing every problem).
    """
    file = pathlib.Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise errors.InputError(f"policy file {file} does not exist") from None
    except UnicodeDecodeError as exc:
        raise errors.InputError(f"policy file {file} is not UTF-8 text: {exc.reason}") from None
    except OSError as exc:
        raise errors.InputError(f"cannot read policy file {file}: {exc.strerror}") from exc

    data = (
        _parse_json(text, file) if file.suffix.lower() == ".json" else parse_yaml_text(text, file)
    )
    if data is None:
        raise errors.PolicyError(f"policy file {file} is empty")
    return parse_policy(data, source=f"policy file {file}")


def parse_policy(data: Mapping[str, Any], *, source: str = "policy") -> _model.LoadAwarePolicy:
    """Validate already-parsed policy data (camelCase keys, as in a file)."""
    if not isinstance(data, Mapping):
        raise errors.PolicyError(
            f"{source} must be a mapping of fields at the top level, got {_kind_of(data)}"
        )
    try:
        # by_name=False: files use the camelCase aliases only, so `node_pools` is
        # reported as an unknown field rather than quietly accepted.
        return _model.LoadAwarePolicy.model_validate(data, by_alias=True, by_name=False)
    except pydantic.ValidationError as exc:
        problems = _describe_errors(exc.errors())
        count = f"{len(problems)} problem" + ("" if len(problems) == 1 else "s")
        raise errors.PolicyError(f"{source} is invalid ({count})", problems=problems) from None


def dump_policy(policy: _model.LoadAwarePolicy) -> dict[str, Any]:
    """The policy with every default filled in, camelCase, ready for json.dumps."""
    return policy.model_dump(mode="json", by_alias=True)


def policy_hash(policy: _model.LoadAwarePolicy) -> str:
    """A short fingerprint of the effective policy: equal settings give equal hashes,
    however the file was written (order, comments, defaults spelt out or not)."""
    canonical = json.dumps(
        dump_policy(policy), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]


# --- file parsing -------------------------------------------------------------


class _StrictYamlLoader(yaml.SafeLoader):
    """SafeLoader that refuses repeated keys: YAML keeps the last silently, which
    would let `dryRun: true` further down a file override an earlier `dryRun: false`."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[tuple[str, str]] = set()
        for key_node, _ in node.value:
            # Keys brought in by a merge (`<<: *base`) may be overridden on purpose.
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                continue
            key = (key_node.tag, key_node.value)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"found a repeated key {key_node.value!r}",
                    key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def parse_yaml_text(text: str, file: pathlib.Path) -> Any:
    """YAML (or JSON) text read as a policy file is: repeated keys refused, errors
    naming the file and line (InputError)."""
    try:
        return yaml.load(text, Loader=_StrictYamlLoader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{file}:{mark.line + 1}:{mark.column + 1}" if mark else str(file)
        problem = exc.problem or exc.context or "cannot parse"
        raise errors.InputError(f"{where}: invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise errors.InputError(f"{file}: invalid YAML: {exc}") from None


def _parse_json(text: str, file: pathlib.Path) -> Any:
    if not text.strip():
        return None

    def refuse_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise errors.InputError(f"{file}: invalid JSON: repeated key {key!r}")
            result[key] = value
        return result

    try:
        return json.loads(text, object_pairs_hook=refuse_repeats)
    except json.JSONDecodeError as exc:
        raise errors.InputError(
            f"{file}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}"
        ) from None


# --- error messages -----------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class _Place:
    """What the model expects at one point of the file: the bare type, and the
    constraints (Ge, Le, ...) that Annotated and Optional wrapped around it."""

    type_: Any
    constraints: tuple[Any, ...] = ()


def _place_of(annotation: Any, extra_constraints: Sequence[Any] = ()) -> _Place:
    constraints = list(extra_constraints)
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation, *metadata = typing.get_args(annotation)
            for item in metadata:
                constraints.extend(item.metadata if isinstance(item, FieldInfo) else [item])
            continue
        if origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) == 1:
                annotation = members[0]
                continue
        return _Place(annotation, tuple(constraints))


def _model_fields(model: type[pydantic.BaseModel]) -> dict[str, FieldInfo]:
    """The model's fields keyed by the name a file uses."""
    return {(info.alias or name): info for name, info in model.model_fields.items()}


def _is_model(type_: Any) -> bool:
    return isinstance(type_, type) and issubclass(type_, pydantic.BaseModel)


def _step(place: _Place | None, key: int | str) -> _Place | None:
    if place is None:
        return None
    type_, origin = place.type_, typing.get_origin(place.type_)
    if _is_model(type_) and isinstance(key, str):
        info = _model_fields(type_).get(key)
        return None if info is None else _place_of(info.annotation, info.metadata)
    args = typing.get_args(type_)
    if origin in (list, tuple, set, frozenset) and isinstance(key, int) and args:
        return _place_of(args[0])
    if origin is dict and isinstance(key, str) and len(args) == 2:
        return _place_of(args[1])
    return None


def _render_path(loc: Sequence[int | str]) -> tuple[str, list[_Place | None]]:
    """The file's spelling of a location, and the model's place at each step
    (places[0] is the root; places[i + 1] belongs to loc[i])."""
    text = ""
    places: list[_Place | None] = [_Place(_model.LoadAwarePolicy)]
    for key in loc:
        parent = places[-1]
        if isinstance(key, int):
            text += f"[{key}]"
        elif (parent is not None and _is_model(parent.type_)) or (parent is None and _plain(key)):
            text += f".{key}" if text else key
        else:
            text += f"[{json.dumps(key, ensure_ascii=False)}]"
        places.append(_step(parent, key))
    return text, places


def _plain(key: str) -> bool:
    return key.replace("_", "a").isalnum()


def _describe_errors(details: Sequence[ErrorDetails]) -> list[str]:
    lines: list[str] = []
    for detail in details:
        line = _describe(detail)
        if line not in lines:
            lines.append(line)
    return lines


def _describe(detail: ErrorDetails) -> str:
    loc = [part for part in detail["loc"] if not (isinstance(part, str) and part == "[key]")]
    path, places = _render_path(loc)
    place, parent = places[-1], places[-2] if len(places) > 1 else None
    hidden = _is_sensitive(loc, place)
    value = detail.get("input")
    got = _kind_of(value) if hidden else _shown(value)
    kind = detail["type"]
    ctx = detail.get("ctx") or {}

    if kind == "extra_forbidden":
        text = _unknown_field(str(loc[-1]) if loc else "", parent)
    elif kind == "missing":
        text = "required field is missing"
    elif kind == "literal_error":
        allowed = _literal_values(place)
        shown = "this value" if hidden else _shown(value)
        text = f"{shown} is not allowed; allowed values: " + (
            ", ".join(allowed) if allowed else str(ctx.get("expected", ""))
        )
    elif kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        text = f"{_range_text(place, ctx)}, got {got}"
    elif kind == "string_too_short" and ctx.get("min_length") == 1:
        text = "must not be empty"
    elif kind in ("too_short", "string_too_short"):
        text = f"must have at least {ctx.get('min_length')} {_item_word(kind)}, got {got}"
    elif kind in ("too_long", "string_too_long"):
        text = f"must have at most {ctx.get('max_length')} {_item_word(kind)}"
    elif kind == "string_type":
        text = f"expected a string, got {got}"
        if isinstance(value, bool | int | float) or value is None:
            text += " (quote it in YAML)"
    elif kind in ("bool_type", "bool_parsing"):
        text = f"expected true or false, got {got}"
    elif kind in ("int_type", "int_parsing", "int_from_float", "int_parsing_size"):
        text = f"expected a whole number, got {got}"
    elif kind in ("float_type", "float_parsing", "finite_number"):
        text = f"expected a number, got {got}"
    elif kind in ("dict_type", "model_type", "model_attributes_type"):
        text = f"expected a mapping of fields, got {got}"
    elif kind in ("list_type", "tuple_type", "set_type"):
        text = f"expected a list, got {got}"
    elif kind.startswith("url_"):
        reason = ctx.get("error")
        text = f"expected an http or https URL, got {got}" + (f" ({reason})" if reason else "")
    elif kind in ("value_error", "assertion_error"):
        text = _validator_message(detail, place, hidden)
    else:
        text = detail["msg"] if hidden else f"{detail['msg']}, got {got}"
    return f"{path}: {text}" if path else text


def _unknown_field(name: str, parent: _Place | None) -> str:
    if parent is None or not _is_model(parent.type_):
        return "unknown field"
    allowed = list(_model_fields(parent.type_))
    text = "unknown field; allowed fields: " + (", ".join(allowed) if allowed else "none")
    camel = to_camel(name)
    if camel != name and camel in allowed:
        return f"{text}; did you mean {camel}? (field names are camelCase)"
    close = difflib.get_close_matches(name, allowed, n=1)
    return f"{text}; did you mean {close[0]}?" if close else text


def _literal_values(place: _Place | None) -> list[str]:
    if place is None or typing.get_origin(place.type_) is not typing.Literal:
        return []
    return [str(v) for v in typing.get_args(place.type_)]


def _range_text(place: _Place | None, ctx: Mapping[str, Any]) -> str:
    bounds: dict[str, Any] = dict(ctx)
    for constraint in place.constraints if place else ():
        for name in ("ge", "le", "gt", "lt"):
            limit = getattr(constraint, name, None)
            if limit is not None:
                bounds.setdefault(name, limit)
    low, high = bounds.get("ge"), bounds.get("le")
    if low is not None and high is not None:
        return f"must be between {_number(low)} and {_number(high)}"
    parts = []
    if low is not None:
        parts.append(f"at least {_number(low)}")
    if "gt" in bounds:
        parts.append(f"greater than {_number(bounds['gt'])}")
    if high is not None:
        parts.append(f"at most {_number(high)}")
    if "lt" in bounds:
        parts.append(f"less than {_number(bounds['lt'])}")
    return "must be " + " and ".join(parts)


def _validator_message(detail: ErrorDetails, place: _Place | None, hidden: bool) -> str:
    error = (detail.get("ctx") or {}).get("error")
    text = str(error) if error is not None else detail["msg"].removeprefix("Value error, ")
    if hidden and isinstance(detail.get("input"), str | int | float):
        # Validators may quote the input; a secret must not reach a log.
        text = text.replace(repr(detail.get("input")), "(value hidden)")
    if place is not None and place.type_ is datetime.timedelta and "duration" not in text:
        text += f"; use {_duration.DURATION_FORM}"
    return text


def _is_sensitive(loc: Sequence[int | str], place: _Place | None) -> bool:
    if place is not None and place.type_ is pydantic.SecretStr:
        return True
    return any(
        isinstance(part, str) and any(word in part.lower() for word in _SENSITIVE_WORDS)
        for part in loc
    )


def _item_word(kind: str) -> str:
    return "characters" if kind.startswith("string") else "items"


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def _shown(value: Any) -> str:
    """A short YAML-like rendering of an input value for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= _MAX_SHOWN_CHARS else text[: _MAX_SHOWN_CHARS - 4] + "...'"
    return _kind_of(value)
