"""Typed access to a raw object's fields: the checks every reader relies on.

A FieldReader is made for one object and reads any of its fields as an object, a
list, a string, an integer, a boolean, a quantity or a timestamp, each checked;
a value of another type raises InputError naming the object and the field path,
never a KeyError or a TypeError from deep inside.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NoReturn, TypeAlias

from loadaware import quantity as _quantity
from loadaware.errors import InputError

RawObject: TypeAlias = Mapping[str, Any]

EMPTY: Mapping[str, Any] = MappingProxyType({})


class FieldReader:
    """Typed access to one raw object's fields; failures name the object and the path.

    A path may hold `{}` placeholders filled from the trailing arguments (list
    indexes), so that it is formatted only when something is wrong: formatting
    every path up front costs more than reading the fields.
    """

    __slots__ = ("_kind", "_name", "_namespace")

    def __init__(self, kind: str, name: str, namespace: str | None = None) -> None:
        self._kind = kind
        self._name = name
        self._namespace = namespace  # None for a cluster-scoped object

    @property
    def what(self) -> str:
        # Formatted only when something is wrong: every object of a load gets a reader.
        if self._namespace is None:
            return f"{self._kind} {self._name}"
        return f"{self._kind} {self._namespace}/{self._name}"

    def fail(self, path: str, problem: str, *where: object) -> NoReturn:
        raise InputError(f"{self.what}: {path.format(*where) if where else path}: {problem}")

    # Each accessor checks `type(...) is` first: isinstance() against the
    # collections ABCs dominates the time of a 150,000-pod load otherwise.

    def mapping(self, value: Any, path: str, *where: object) -> Mapping[str, Any]:
        if type(value) is dict:
            return value
        if value is None:
            return EMPTY
        if not isinstance(value, Mapping):
            self.fail(path, f"expected an object, got {type_name(value)}", *where)
        return value

    def sequence(self, value: Any, path: str, *where: object) -> list[Any]:
        if type(value) is list:
            return value
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(path, f"expected a list, got {type_name(value)}", *where)
        return value

    def string(self, value: Any, path: str, *where: object) -> str:
        if type(value) is str:
            return value
        if value is None:
            return ""
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {type_name(value)}", *where)
        return value

    def integer(self, value: Any, path: str, *where: object) -> int:
        if type(value) is int:
            return value
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(path, f"expected an integer, got {type_name(value)}", *where)
        return value

    def boolean(self, value: Any, path: str, *where: object) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            self.fail(path, f"expected true or false, got {type_name(value)}", *where)
        return value

    def strings(self, value: Any, path: str, *where: object) -> tuple[str, ...]:
        items = self.sequence(value, path, *where)
        for i, item in enumerate(items):
            if not isinstance(item, str):
                self.fail(
                    f"{path.format(*where)}[{i}]", f"expected a string, got {type_name(item)}"
                )
        return tuple(items)

    def string_map(self, value: Any, path: str, *where: object) -> dict[str, str]:
        if value is None:
            return {}
        result = dict(value if type(value) is dict else self.mapping(value, path, *where))
        for key, item in result.items():
            # YAML turns unquoted `true` or `1` into non-strings; the API would refuse them.
            if type(item) is not str or type(key) is not str:
                self.fail(
                    f"{path.format(*where)}.{key}",
                    f"expected a string, got {type_name(item)} (quote it)",
                )
        return result

    def nanos(self, value: Any, path: str, *where: object) -> int:
        """A non-negative quantity in nano-units (see _quantity.to_nanos)."""
        try:
            amount = _quantity.to_nanos(value)
        except ValueError as exc:
            self.fail(path, str(exc), *where)
        if amount < 0:
            self.fail(path, f"{value!r} is negative", *where)
        return amount

    def timestamp(self, value: Any, path: str, *where: object) -> datetime.datetime | None:
        if type(value) is str:
            try:
                parsed = datetime.datetime.fromisoformat(value)
            except ValueError:
                self.fail(path, f"invalid timestamp {value!r}: expected RFC 3339", *where)
            return in_utc(parsed)
        if value is None:
            return None
        if isinstance(value, datetime.datetime):
            return in_utc(value)  # YAML reads unquoted timestamps itself
        self.fail(path, f"expected an RFC 3339 timestamp, got {type_name(value)}", *where)


def in_utc(moment: datetime.datetime) -> datetime.datetime:
    if moment.tzinfo is None:
        return moment.replace(tzinfo=datetime.UTC)
    return moment.astimezone(datetime.UTC)


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__
