"""Structural equality and hashing: equal up to renaming of binders.

Binders (variables, buffers, graph variables) are matched by where they first appear, so two
functions that differ only in names are equal. Everything else compares by value; block
names and function names are part of the structure.
"""
from __future__ import annotations

import math

from .buffer import Buffer
from .expr import Var
from .functor import node_fields
from .node import Map, Node
from .relax import RVar

_BINDERS = (Var, Buffer, RVar)
_NAME_FREE = {Var: ("name",), Buffer: ("name",), RVar: ("name",)}


def _compared_fields(cls):
    skip = ()
    for base, names in _NAME_FREE.items():
        if issubclass(cls, base):
            skip = names
    return tuple(f for f in node_fields(cls) if f not in skip)


class _Equal:
    def __init__(self):
        self.lhs_to_rhs: dict = {}
        self.rhs_to_lhs: dict = {}
        self.path: list = []
        self.mismatch: "str | None" = None

    def fail(self, why: str) -> bool:
        if self.mismatch is None:
            self.mismatch = f"{'.'.join(self.path) or '<root>'}: {why}"
        return False

    def binder(self, a, b) -> bool:
        ma, mb = self.lhs_to_rhs.get(id(a)), self.rhs_to_lhs.get(id(b))
        if ma is not None or mb is not None:
            return (ma is b and mb is a) or self.fail(f"binder {a.name!r} vs {b.name!r} bound differently")
        self.lhs_to_rhs[id(a)] = b
        self.rhs_to_lhs[id(b)] = a
        return self.fields(a, b)

    def fields(self, a, b) -> bool:
        for name in _compared_fields(type(a)):
            self.path.append(name)
            ok = self.eq(getattr(a, name), getattr(b, name))
            self.path.pop()
            if not ok:
                return False
        return True

    def eq(self, a, b) -> bool:
        if type(a) is not type(b):
            return self.fail(f"{type(a).__name__} vs {type(b).__name__}")
        if isinstance(a, _BINDERS):
            return self.binder(a, b)
        if isinstance(a, Node):
            return self.fields(a, b)
        if isinstance(a, tuple):
            if len(a) != len(b):
                return self.fail(f"length {len(a)} vs {len(b)}")
            for i, (x, y) in enumerate(zip(a, b)):
                self.path.append(str(i))
                ok = self.eq(x, y)
                self.path.pop()
                if not ok:
                    return False
            return True
        if isinstance(a, Map):
            if len(a) != len(b):
                return self.fail(f"{len(a)} entries vs {len(b)}")
            return self.eq(tuple(a.items()), tuple(b.items()))
        if isinstance(a, float) and math.isnan(a) and math.isnan(b):
            return True
        return a == b or self.fail(f"{a!r} vs {b!r}")


def structural_equal(a, b) -> bool:
    """True when ``a`` and ``b`` are the same IR up to consistent renaming of binders."""
    return _Equal().eq(a, b)


class _Same(_Equal):
    def binder(self, a, b) -> bool:
        return a is b or self.fail(f"{a.name!r} is not {b.name!r}")


def same_ir(a, b) -> bool:
    """True when ``a`` and ``b`` are the same IR over the very same variables and buffers:
    :func:`structural_equal` without renaming, for two expressions of one function
    (``x[i, j]`` and ``x[j, i]`` differ; :func:`structural_equal` pairs ``i`` with ``j``)."""
    return _Same().eq(a, b)


def assert_structural_equal(a, b) -> None:
    """Raise AssertionError naming the first place where ``a`` and ``b`` differ."""
    checker = _Equal()
    if not checker.eq(a, b):
        raise AssertionError(f"not structurally equal at {checker.mismatch}")


class _Hasher:
    def __init__(self):
        self.binders: dict = {}

    def h(self, a) -> int:
        if isinstance(a, _BINDERS):
            idx = self.binders.get(id(a))
            if idx is not None:
                return hash(("binder", idx))
            self.binders[id(a)] = len(self.binders)
            return hash(("binder-def", type(a).__name__, self.node(a)))
        if isinstance(a, Node):
            return self.node(a)
        if isinstance(a, tuple):
            return hash(tuple(self.h(x) for x in a))
        if isinstance(a, Map):
            return hash(("map", tuple((self.h(k), self.h(v)) for k, v in a.items())))
        if isinstance(a, float) and math.isnan(a):
            return hash("nan")
        return hash(a)

    def node(self, a) -> int:
        return hash((type(a).__name__, tuple(self.h(getattr(a, f)) for f in _compared_fields(type(a)))))


def structural_hash(a) -> int:
    """A hash consistent with :func:`structural_equal`."""
    return _Hasher().h(a)
