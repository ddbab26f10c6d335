"""A pattern language over recovered ops (what TVM's dataflow patterns are to Relax calls).

    conv = is_op("nn.conv2d")(wildcard(), is_param()).has_attr({"data_layout": "NCHW"})
    bn = is_op("nn.batch_norm")(conv, is_param(), is_param(), is_param(), is_param())
    pat = bn.optional(lambda x: is_op("nn.relu")(x))           # relu if present
    add = is_op("add")(wildcard().named("x"), wildcard().named("x"))   # x + x (same value)

Patterns are small frozen values; :func:`byoc.match.match` does the matching. An op
pattern without arguments matches the op whatever its operands; with arguments, each
operand (in Relax argument order) must match. ``a | b`` tries ``a`` first, then ``b``;
``p.optional(f)`` is ``f(p) | p`` (the longer match first). ``.named(n)`` captures what
matched; the same name used twice must match the same value, which makes small DAGs.
"""
from __future__ import annotations

from typing import Callable

import attrs

from tir.node import Map, freeze


class Pattern:
    """Base of patterns: alternatives, optional steps and captures."""

    __slots__ = ()

    def __or__(self, other: "Pattern") -> "Pattern":
        return Alt(self, other)

    def named(self, name: str) -> "Pattern":
        """Capture what this pattern matches under ``name``."""
        return Named(name, self)

    def optional(self, step: Callable[["Pattern"], "Pattern"]) -> "Pattern":
        """``step(self)`` if it matches, else ``self`` alone."""
        return Alt(step(self), self)


@attrs.frozen
class AttrEquals:
    """Predicate: the op's attributes include these values (lists compare as tuples)."""

    values: Map

    def __call__(self, info) -> bool:
        return all(k in info.attrs and freeze(info.attrs[k]) == v for k, v in self.values.items())


@attrs.frozen
class AttrPredicate:
    """Predicate on the op's attribute mapping."""

    fn: Callable

    def __call__(self, info) -> bool:
        return bool(self.fn(info.attrs))


@attrs.frozen
class OpPattern(Pattern):
    """An op by Relax name (None: any op), optionally with operand patterns and predicates."""

    name: "str | None"
    args: "tuple | None" = None
    """Operand patterns in Relax argument order; None leaves the operands unconstrained."""
    preds: tuple = ()
    """Callables ``OpInfo -> bool`` that must all hold (see ``has_attr`` and ``where``)."""

    def __call__(self, *args: Pattern) -> "OpPattern":
        for a in args:
            if not isinstance(a, Pattern):
                raise TypeError(f"operand patterns must be patterns, got {type(a).__name__}")
        return attrs.evolve(self, args=tuple(args))

    def has_attr(self, check: "dict | Callable") -> "OpPattern":
        """Require attribute values (a dict) or a predicate on the attributes (a callable)."""
        if callable(check):
            return self.where(AttrPredicate(check))
        return self.where(AttrEquals(Map({k: freeze(v) for k, v in check.items()})))

    def where(self, pred: Callable) -> "OpPattern":
        """Require ``pred(OpInfo)`` to hold."""
        return attrs.evolve(self, preds=self.preds + (pred,))

    def accepts(self, info) -> bool:
        """Whether the op itself (name and predicates, not its operands) fits."""
        if self.name is not None and info.name != self.name:
            return False
        return all(p(info) for p in self.preds)


@attrs.frozen
class Wildcard(Pattern):
    """Any value: an input, a weight, a constant, or the result of an op (not absorbed)."""


@attrs.frozen
class LeafPattern(Pattern):
    """A value from outside the ops: of one of ``kinds`` ("input", "param", "const")."""

    kinds: frozenset


@attrs.frozen
class Alt(Pattern):
    """``left`` if it matches, else ``right``."""

    left: Pattern
    right: Pattern

    def __call__(self, *args: Pattern) -> "Alt":
        """``(is_op("a") | is_op("b"))(x)`` is ``is_op("a")(x) | is_op("b")(x)``."""
        return Alt(self.left(*args), self.right(*args))


@attrs.frozen
class Named(Pattern):
    """``pattern``, with what it matched captured under ``name``."""

    name: str
    pattern: Pattern


def is_op(name: "str | None" = None) -> OpPattern:
    """An op named ``name`` (Relax name without ``relax.``); None matches any op."""
    return OpPattern(name)


def wildcard() -> Wildcard:
    """Anything."""
    return Wildcard()


def is_input() -> LeafPattern:
    """A runtime input of main."""
    return LeafPattern(frozenset({"input"}))


def is_param() -> LeafPattern:
    """A weight: a parameter of main after its ``num_input`` inputs, or a constant."""
    return LeafPattern(frozenset({"param", "const"}))


def is_const() -> LeafPattern:
    """A constant (``R.const``)."""
    return LeafPattern(frozenset({"const"}))
