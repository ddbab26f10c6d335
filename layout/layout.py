"""Data layouts as TVM writes them: ``NCHW``, ``NHWC``, ``NCHW4c``, ``OIHW4i4o``.

A layout is a sequence of axes. A *primal* axis is an uppercase letter and stands for a
whole logical dimension; a *sub-axis* ``<factor><lowercase>`` is the inner part of the
primal axis of the same letter split by ``factor`` (so in ``NCHW4c`` the ``C`` axis holds
``C // 4`` and ``c`` holds ``C % 4``).
"""
from __future__ import annotations

import re

import attrs

_TOKEN = re.compile(r"([A-Z])|(\d+)([a-z])")


class LayoutError(ValueError):
    """A layout string or a use of a layout that does not make sense."""


@attrs.frozen
class Axis:
    """One axis of a layout."""

    letter: str
    """Uppercase letter of the logical dimension this axis belongs to."""
    factor: "int | None" = None
    """Split factor of a sub-axis; None for a primal axis."""

    @property
    def is_primal(self) -> bool:
        return self.factor is None

    def __str__(self) -> str:
        return self.letter if self.factor is None else f"{self.factor}{self.letter.lower()}"


def _parse_axes(text: str) -> tuple:
    axes, pos = [], 0
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            break
        pos = m.end()
        if m.group(1):
            axes.append(Axis(m.group(1)))
        else:
            axes.append(Axis(m.group(3).upper(), int(m.group(2))))
    if pos != len(text):
        raise LayoutError(f"layout {text!r}: unexpected {text[pos:]!r} at position {pos} "
                          "(expected an uppercase axis or <factor><lowercase>)")
    return tuple(axes)


def _check_axes(text: str, axes: tuple) -> None:
    primal = [a.letter for a in axes if a.is_primal]
    subs = [a.letter for a in axes if not a.is_primal]
    for letters, what in ((primal, "axis"), (subs, "sub-axis")):
        dup = {x for x in letters if letters.count(x) > 1}
        if dup:
            raise LayoutError(f"layout {text!r}: {what} {sorted(dup)[0]} appears twice")
    for a in axes:
        if not a.is_primal and a.letter not in primal:
            raise LayoutError(f"layout {text!r}: sub-axis {a} has no primal axis {a.letter}")
        if not a.is_primal and a.factor < 1:
            raise LayoutError(f"layout {text!r}: sub-axis {a} needs a positive factor")


@attrs.frozen
class Layout:
    """A parsed layout; ``Layout.parse("NCHW4c")``, ``str(layout)`` gives the text back."""

    axes: tuple = attrs.field(converter=tuple)
    """The axes in memory order (outermost first)."""

    @staticmethod
    def parse(text: "str | Layout") -> "Layout":
        """Parse a TVM layout string; raises LayoutError naming the problem."""
        if isinstance(text, Layout):
            return text
        if not isinstance(text, str) or not text:
            raise LayoutError(f"layout must be a non-empty string, got {text!r}")
        axes = _parse_axes(text)
        _check_axes(text, axes)
        return Layout(axes)

    def __str__(self) -> str:
        return "".join(str(a) for a in self.axes)

    @property
    def ndim(self) -> int:
        return len(self.axes)

    @property
    def primal(self) -> str:
        """The primal letters in memory order: ``NCHW4c`` -> ``"NCHW"``."""
        return "".join(a.letter for a in self.axes if a.is_primal)

    @property
    def is_packed(self) -> bool:
        return any(not a.is_primal for a in self.axes)

    def factor_of(self, letter: str) -> "int | None":
        """The split factor of ``letter``'s sub-axis, None when it is not split."""
        for a in self.axes:
            if a.letter == letter.upper() and not a.is_primal:
                return a.factor
        return None

    def index_of(self, axis: str) -> int:
        """Position of an axis: uppercase names the primal axis, lowercase the sub-axis."""
        want_primal = axis.isupper()
        for i, a in enumerate(self.axes):
            if a.letter == axis.upper() and a.is_primal == want_primal:
                return i
        raise LayoutError(f"layout {self} has no axis {axis!r}")

    def has(self, letter: str) -> bool:
        return letter.upper() in self.primal

    def compatible(self, other: "Layout") -> bool:
        """Same logical dimensions (possibly in another order or packing)."""
        return sorted(self.primal) == sorted(Layout.parse(other).primal)

    def logical_shape(self, shape) -> dict:
        """Extent of every logical dimension from a shape in this layout: {"C": 8, ...}."""
        if len(shape) != self.ndim:
            raise LayoutError(f"layout {self} has {self.ndim} axes, shape {tuple(shape)} has {len(shape)}")
        from tir.expr import as_int

        shape = tuple(as_int(s) if as_int(s) is not None else s for s in shape)
        out = {}
        for a, s in zip(self.axes, shape):
            if a.is_primal:
                out[a.letter] = out.get(a.letter, 1) * s
        for a, s in zip(self.axes, shape):
            if not a.is_primal:
                out[a.letter] = out[a.letter] * a.factor
        return out

    def shape_of(self, shape, source: "str | Layout | None" = None) -> tuple:
        """This layout's shape of a tensor whose shape is given in ``source``.

        ``source`` defaults to the primal letters of this layout in their order
        (``Layout("NCHW4c").shape_of((1, 8, 5, 5)) == (1, 2, 5, 5, 4)``). Raises LayoutError
        when a split factor does not divide its dimension.
        """
        src = Layout.parse(source) if source is not None else Layout.parse(self.primal)
        if not self.compatible(src):
            raise LayoutError(f"layouts {src} and {self} do not have the same axes")
        logical = src.logical_shape(tuple(shape))
        out = []
        for a in self.axes:
            out.append(self._extent(a, logical[a.letter]))
        return tuple(out)

    def _extent(self, axis: Axis, logical: int) -> int:
        factor = self.factor_of(axis.letter)
        if factor is None:
            return logical
        if not isinstance(logical, int):
            raise LayoutError(f"layout {self}: cannot split symbolic extent {logical} of {axis.letter}")
        if logical % factor:
            raise LayoutError(f"layout {self}: dimension {axis.letter} of extent {logical} "
                              f"is not divisible by {factor}")
        return logical // factor if axis.is_primal else factor

    def drop(self, letter: str) -> "Layout":
        """This layout without the logical dimension ``letter`` (and its sub-axis)."""
        return Layout(tuple(a for a in self.axes if a.letter != letter.upper()))

    def drop_all(self, letters: str) -> "Layout":
        """This layout without every logical dimension in ``letters``."""
        gone = set(letters.upper())
        return Layout(tuple(a for a in self.axes if a.letter not in gone))

    def restrict(self, letters: str) -> "Layout":
        """This layout keeping only the logical dimensions in ``letters``, in this order."""
        keep = set(letters.upper())
        return Layout(tuple(a for a in self.axes if a.letter in keep))

    def insert(self, position: int, letter: str) -> "Layout":
        """This layout with a new primal axis ``letter`` at ``position``."""
        axes = list(self.axes)
        axes.insert(position, Axis(letter.upper()))
        return Layout(tuple(axes))

    def rename(self, mapping: dict) -> "Layout":
        """This layout with letters renamed (``{"C": "O"}``)."""
        return Layout(tuple(Axis(mapping.get(a.letter, a.letter), a.factor) for a in self.axes))

    def index_map_to(self, dst: "str | Layout"):
        """The IndexMap from an index in this layout to the index of the same element in ``dst``."""
        from .layout_map import layout_index_map

        return layout_index_map(self, Layout.parse(dst))


def layout(text: "str | Layout") -> Layout:
    """Shorthand for :meth:`Layout.parse`."""
    return Layout.parse(text)


def fresh_letter(used: str) -> str:
    """An uppercase letter not in ``used`` (for naming an extra logical dimension)."""
    for ch in "ABDEFGIJKLMNOPQRSTUVXYZ":
        if ch not in used:
            return ch
    raise LayoutError("no free axis letter left")
