"""The run-time half of `rules/records.py`: objects of user classes. A record's cotangent is like a
tuple's, keyed by attribute name: `Zero` or {name: cotangent}."""

from __future__ import annotations

from .cotangents import Zero


def with_field(obj: object, name: str, value: object) -> object:
    """`obj.name = value` as an expression (only on objects the function itself made)."""
    setattr(obj, name, value)
    return obj


def without_field(d: object, name: str) -> object:
    """The cotangent of a record before `obj.name = ...`: the new one's, less that attribute's."""
    if d is Zero or name not in d:
        return d
    return {k: v for k, v in d.items() if k != name}
