"""The policy reference page (docs/reference/policy.md), generated from the models.

It walks LoadAwarePolicy's pydantic models, the source the JSON schema comes from
too, and writes one table per object: every field with its dotted path as a file
spells it (camelCase, `[]` for list items, `.*` for map values), its type with
the allowed values of an enum, its default, and its description. A field without
a description is an error, so the page cannot silently fall behind the model.
"""

from __future__ import annotations

import dataclasses
import datetime
import inspect
import re
import types
import typing
import unicodedata
from collections.abc import Iterator, Sequence
from typing import Any

import annotated_types
import pydantic
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from loadaware.policy import _model

TITLE = "Policy reference"
HEADER = (
    "<!-- Generated from loadaware/policy/_model.py by `make docs-reference`; "
    "edit the models' descriptions instead. -->\n"
)
INTRO = """\
Every field of a LoadAwarePolicy file (`apiVersion: loadaware.io/v1alpha1`,
`kind: LoadAwarePolicy`), generated from the same models as the JSON schema
(`policy/schema.json`). Paths are spelled as in the file: `[]` is an item of a
list, `.*` a value of a map. Durations are Kubernetes-style (`90s`, `10m`,
`1h30m`); percentages are 0-100 of node allocatable. Unknown fields are errors.
`loadaware validate --policy FILE` checks a file and prints it normalised.
"""


class UndocumentedFieldError(ValueError):
    """Policy fields without a description: the reference would have holes."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = tuple(paths)
        super().__init__(
            "policy fields without a description (add Field(description=...) in "
            "their section's module under loadaware/policy/): " + ", ".join(self.paths)
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FieldDoc:
    path: str
    type: str
    default: str
    description: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SectionDoc:
    path: str
    model: str
    description: str
    fields: tuple[FieldDoc, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class _Type:
    text: str
    # A model to document below, and how its path continues: "" (the field itself),
    # "[]" (list items), ".*" (map values).
    nested: type[pydantic.BaseModel] | None = None
    suffix: str = ""


def section_heading(path: str) -> str:
    return f"`{path}`" if path else "Top level"


def anchor(path: str) -> str:
    """The id Python-Markdown's toc extension gives a section's heading."""
    text = path or "Top level"
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def sections(
    model: type[pydantic.BaseModel] = _model.LoadAwarePolicy, path: str = ""
) -> list[SectionDoc]:
    """Depth-first: an object's table, then those of the objects its fields hold."""
    fields: list[FieldDoc] = []
    below: list[SectionDoc] = []
    for name, info in model.model_fields.items():
        field_path = _join(path, info.alias or to_camel(name))
        kind = _describe(info.annotation, list(info.metadata))
        fields.append(
            FieldDoc(
                path=field_path,
                type=kind.text
                if kind.nested is None
                else kind.text.replace(
                    kind.nested.__name__,
                    f"[{kind.nested.__name__}](#{anchor(field_path + kind.suffix)})",
                    1,
                ),
                default=_default(info),
                description=_one_line(info.description or ""),
            )
        )
        if kind.nested is not None:
            below.extend(sections(kind.nested, field_path + kind.suffix))
    if model.model_config.get("extra") == "allow":
        fields.append(
            FieldDoc(
                path=_join(path, "*"),
                type="any",
                default="",
                description="Further keys are allowed: see the description of this object.",
            )
        )
    doc = _own_docstring(model)
    own = SectionDoc(path=path, model=model.__name__, description=doc, fields=tuple(fields))
    return [own, *below]


def undocumented_fields(
    model: type[pydantic.BaseModel] = _model.LoadAwarePolicy,
) -> list[str]:
    """Dotted paths of every field of the model (and those it holds) without a description."""
    return [
        field.path
        for section in sections(model)
        for field in section.fields
        if not field.description
    ]


def render_policy_reference(model: type[pydantic.BaseModel] = _model.LoadAwarePolicy) -> str:
    """The page as committed in docs/reference/policy.md; UndocumentedFieldError names
    every field without a description."""
    all_sections = sections(model)
    missing = [f.path for s in all_sections for f in s.fields if not f.description]
    if missing:
        raise UndocumentedFieldError(missing)
    out = [HEADER, f"# {TITLE}\n", INTRO]
    for section in all_sections:
        out.append(f"## {section_heading(section.path)}\n")
        intro = f"A `{section.model}`."
        if section.description:
            intro = f"{intro} {section.description}"
        out.append(intro + "\n")
        out.append("| field | type | default | description |")
        out.append("| --- | --- | --- | --- |")
        for field in section.fields:
            cells = (f"`{field.path}`", field.type, field.default, field.description)
            out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        out.append("")
    return "\n".join(out)


# --- types -------------------------------------------------------------------------


def _describe(annotation: Any, metadata: list[Any]) -> _Type:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation, *extra = typing.get_args(annotation)
        metadata = [*metadata, *extra]
    origin = typing.get_origin(annotation)
    limits = _limits(metadata)

    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(options) == 1:
            inner = _describe(options[0], metadata)
            return dataclasses.replace(inner, text=f"{inner.text}, or null")
        texts = [_describe(a, []).text for a in options]
        return _Type(" or ".join(texts))
    if origin is typing.Literal:
        choices = typing.get_args(annotation)
        if len(choices) == 1:
            return _Type(f"always `{choices[0]}`")
        return _Type("one of " + ", ".join(f"`{v}`" for v in choices))
    if origin is list:
        (item,) = typing.get_args(annotation)
        inner = _describe(item, [])
        text = f"list of {_plural(inner.text)}" + (f" ({limits})" if limits else "")
        suffix = "[]" + inner.suffix if inner.nested is not None else ""
        return _Type(text, inner.nested, suffix)
    if origin is dict:
        key, value = typing.get_args(annotation)
        inner = _describe(value, [])
        text = f"map of {_describe(key, []).text} to {_plural(inner.text)}"
        suffix = ".*" + inner.suffix if inner.nested is not None else ""
        return _Type(text, inner.nested, suffix)
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return _Type(f"object ({annotation.__name__})", annotation, "")
    # A type without a word of its own is named as Python names it.
    base = _SCALARS.get(annotation) or getattr(annotation, "__name__", str(annotation))
    return _Type(f"{base} ({limits})" if limits else base)


_SCALARS: dict[Any, str] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    datetime.timedelta: "duration",
    pydantic.AnyHttpUrl: "URL",
    pydantic.SecretStr: "string (secret)",
}


def _plural(text: str) -> str:
    for singular, plural in (("string", "strings"), ("integer", "integers"), ("number", "numbers")):
        if text.startswith(singular):
            return plural + text[len(singular) :]
    if text.startswith("one of "):
        return "values, each " + text
    return text.replace("object (", "objects (", 1)


def _limits(metadata: list[Any]) -> str:
    bounds: dict[str, Any] = {}
    for item in _flatten(metadata):
        for attr in ("ge", "gt", "le", "lt", "min_length"):
            value = getattr(item, attr, None)
            if value is not None:
                bounds[attr] = value
    parts = []
    low = (">=", bounds.get("ge")) if "ge" in bounds else (">", bounds.get("gt"))
    high = ("<=", bounds.get("le")) if "le" in bounds else ("<", bounds.get("lt"))
    if low[1] is not None and high[1] is not None and (low[0], high[0]) == (">=", "<="):
        parts.append(f"{_number(low[1])}-{_number(high[1])}")
    else:
        parts += [f"{op} {_number(v)}" for op, v in (low, high) if v is not None]
    if bounds.get("min_length"):
        parts.append(
            "not empty" if bounds["min_length"] == 1 else f"at least {bounds['min_length']}"
        )
    return ", ".join(parts)


def _flatten(metadata: list[Any]) -> Iterator[Any]:
    for item in metadata:
        if isinstance(item, FieldInfo):
            yield from _flatten(list(item.metadata))
        elif isinstance(item, annotated_types.GroupedMetadata):
            yield from _flatten(list(item))
        else:
            yield item


# --- defaults ----------------------------------------------------------------------


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    value = info.get_default(call_default_factory=True)
    plain = pydantic.TypeAdapter(info.rebuild_annotation()).dump_python(
        value, mode="json", by_alias=True, exclude_defaults=True
    )
    return f"`{_flow(plain)}`"


def _flow(value: Any) -> str:
    """A JSON value as YAML flow text, leaving out unset (null) map entries."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return value if re.fullmatch(r"[A-Za-z0-9_./:-]+", value) else f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, dict):
        items = [f"{k}: {_flow(v)}" for k, v in value.items() if v is not None]
        return "{" + ", ".join(items) + "}"
    raise TypeError(f"no flow text for {value!r}")


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


# --- text --------------------------------------------------------------------------


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _own_docstring(model: type) -> str:
    doc = model.__dict__.get("__doc__")
    return _one_line(inspect.cleandoc(doc)) if doc else ""


def _one_line(text: str) -> str:
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text.strip())]
    return " ".join(p for p in paragraphs if p)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
