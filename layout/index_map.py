"""IndexMap: a function from an index tuple to an index tuple, built from a lambda.

``IndexMap.from_func(lambda n, c, h, w: [n, c // 4, h, w, c % 4])`` maps an NCHW index to
an NCHW4c index. It applies to indices (tir expressions or ints) and to shapes, has an
inverse (given explicitly for maps derived from layouts, otherwise found by
:mod:`layout.inverse`), a bijectivity check, the padding a non-divisible split implies,
and composition.
"""
from __future__ import annotations

import inspect
import itertools
import math
from typing import Callable, Sequence

import attrs

from tir import dtype as dt
from tir.expr import PrimExpr, Var, as_int, convert, logical_or
from tir.functor import substitute

from .simplify import simplify_index


def _as_expr(value) -> PrimExpr:
    return convert(value, dt.int64) if not isinstance(value, PrimExpr) else value


@attrs.frozen(eq=False)
class IndexMap:
    """``initial`` index variables -> ``final`` index expressions over them."""

    initial: tuple = attrs.field(converter=tuple)
    """The index variables (int64 Vars), one per input dimension."""
    final: tuple = attrs.field(converter=lambda xs: tuple(_as_expr(x) for x in xs))
    """One expression per output dimension."""
    inverse_map: "IndexMap | None" = None
    """An explicit inverse, when known (maps built from layouts carry one)."""

    @staticmethod
    def from_func(fn: Callable, ndim: "int | None" = None, inverse: "Callable | None" = None) -> "IndexMap":
        """Build from ``fn(*index_vars) -> list of index expressions``.

        ``inverse``, when given, is a lambda for the inverse map and is trusted as such.
        """
        n = ndim if ndim is not None else len(inspect.signature(fn).parameters)
        names = list(inspect.signature(fn).parameters) if ndim is None else [f"i{k}" for k in range(n)]
        vs = tuple(Var(name, dt.int64) for name in names)
        inv = IndexMap.from_func(inverse) if inverse is not None else None
        return IndexMap(vs, tuple(fn(*vs)), inv)

    @property
    def ndim_in(self) -> int:
        return len(self.initial)

    @property
    def ndim_out(self) -> int:
        return len(self.final)

    def apply(self, indices: Sequence, bounds: "dict | None" = None) -> tuple:
        """The mapped indices; all-int input gives ints, otherwise simplified expressions."""
        if len(indices) != self.ndim_in:
            raise ValueError(f"index map takes {self.ndim_in} indices, got {len(indices)}")
        if all(isinstance(i, int) for i in indices):
            return tuple(self._eval(e, indices) for e in self.final)
        sub = {v: _as_expr(i) for v, i in zip(self.initial, indices)}
        return tuple(simplify_index(substitute(e, sub), bounds) for e in self.final)

    def _eval(self, e: PrimExpr, ints: Sequence[int]) -> int:
        from .evaluate import eval_int

        return eval_int(e, {id(v): i for v, i in zip(self.initial, ints)})

    def bounds(self, shape: Sequence) -> dict:
        """Inclusive ranges of the initial variables for an input of ``shape`` (ints only)."""
        return {v: (0, int(s) - 1) for v, s in zip(self.initial, shape) if as_int(s) is not None}

    def map_shape(self, shape: Sequence) -> tuple:
        """Extents of the output dimensions when the input has ``shape``.

        Each output extent is the largest value its expression takes plus one (outputs are
        assumed to start at 0, as layout maps do).
        """
        from .evaluate import int_range

        shape = tuple(as_int(s) if as_int(s) is not None else s for s in shape)
        if not all(isinstance(s, int) for s in shape):
            raise ValueError(f"map_shape needs constant extents, got {shape}")
        b = {id(v): (0, s - 1) for v, s in zip(self.initial, shape)}
        return tuple(int_range(e, b)[1] + 1 for e in self.final)

    def inverse(self, shape: "Sequence | None" = None) -> "IndexMap":
        """The inverse map (final index -> initial index); raises ValueError if none is found."""
        if self.inverse_map is not None:
            return self.inverse_map
        from .inverse import invert

        return invert(self, shape)

    def is_bijective(self, shape: Sequence) -> bool:
        """Whether the map is one-to-one from ``shape`` onto the whole of :meth:`map_shape`."""
        out_shape = self.map_shape(shape)
        if math.prod(out_shape) != math.prod(shape):
            return False
        return self.is_injective(shape)

    def is_injective(self, shape: Sequence, limit: int = 1 << 16) -> bool:
        """Whether distinct indices of ``shape`` map to distinct indices (checked exhaustively
        for small shapes, through the inverse otherwise)."""
        if math.prod(shape) <= limit:
            seen = set()
            for idx in itertools.product(*(range(int(s)) for s in shape)):
                out = self.apply(idx)
                if out in seen:
                    return False
                seen.add(out)
            return True
        try:
            inv = self.inverse(shape)
        except ValueError:
            return False
        return inv.compose_check(self, shape)

    def compose_check(self, first: "IndexMap", shape: Sequence, samples: int = 64) -> bool:
        """Whether ``self`` undoes ``first`` on sample indices of ``shape`` (corners and a grid)."""
        axes = [sorted({0, int(s) - 1, int(s) // 2, 1 % int(s)}) for s in shape]
        for k, idx in enumerate(itertools.product(*axes)):
            if k >= samples:
                break
            if self.apply(first.apply(idx)) != tuple(idx):
                return False
        return True

    def padding(self, shape: Sequence) -> int:
        """How many elements the output shape has beyond the input (non-divisible splits)."""
        return math.prod(self.map_shape(shape)) - math.prod(int(s) for s in shape)

    def pad_predicate(self, shape: Sequence, at: "Sequence | None" = None) -> "PrimExpr | None":
        """True where an output element has no input (padding), None when there is none.

        The predicate is over the output indices ``at`` (default: the inverse's variables).
        """
        from .evaluate import int_range

        if self.padding(shape) == 0:
            return None
        inv = self.inverse(shape)
        out_bounds = {id(v): (0, s - 1) for v, s in zip(inv.initial, self.map_shape(shape))}
        src = inv.final if at is None else inv.apply(tuple(at))
        conds = [e >= convert(int(s), e.dtype) for e, f, s in zip(src, inv.final, shape)
                 if int_range(f, out_bounds)[1] >= int(s)]
        return logical_or(*conds)

    def then(self, other: "IndexMap") -> "IndexMap":
        """``other`` after ``self``: index -> other(self(index))."""
        if other.ndim_in != self.ndim_out:
            raise ValueError(f"cannot compose: {self.ndim_out} outputs into {other.ndim_in} inputs")
        final = other.apply(self.final)
        inv = None
        if self.inverse_map is not None and other.inverse_map is not None:
            inv = other.inverse_map.then(self.inverse_map)
        return IndexMap(self.initial, final, inv)

    def compose(self, other: "IndexMap") -> "IndexMap":
        """``self`` after ``other``: index -> self(other(index))."""
        return other.then(self)

    def __repr__(self) -> str:
        from .evaluate import show

        args = ", ".join(v.name for v in self.initial)
        return f"IndexMap(lambda {args}: [{', '.join(show(e) for e in self.final)}])"
