"""Whether a copy is a reshape: the data read in row-major order into the output box,
proved on the index forms, else checked at every output point; a symbolic extent of the
data is fixed by the element counts or handled by :func:`.symbolic.symbolic_reshape` and
:func:`.unravel.unravel_reshape`."""
from __future__ import annotations

import numpy as np

from ..affine import add_forms, const_of
from ..bounded import bounded_form, recombine
from ..probe import NotEvaluable, evaluate, shape_envs
from .extent import sym
from .movement_index import const_extents, const_grid, grid_over, load_extents
from . import symbolic
from .unravel import unravel_reshape

def reshape_ok(load, space) -> bool:
    """Whether ``load`` copies its data into the output box in row-major order."""
    ine, oute = load_extents(load), const_extents(space)
    if None in ine and None not in oute:
        return _reshape_into_constant(load, space)
    if None in ine:
        return symbolic.symbolic_reshape(load, space) or unravel_reshape(load, space) or \
            _row_major_at_sizes(load, space)
    if None in ine or None in oute or int(np.prod(ine)) != int(np.prod(oute)):
        return False
    return _row_major_copy(load.indices, space, ine, oute)


def _row_major_copy(indices, space, ine, oute) -> bool:
    """Whether reading ``indices`` of a box of ``ine`` over the output box ``oute`` visits
    the data in row-major order: proved on the index forms, else checked on every point."""
    if _same_linear_index(indices, space, ine, oute):
        return True
    env = const_grid(space)
    return env is not None and _reads_in_order(indices, env, ine, int(np.prod(oute)) if space.rank else 1)


def _reads_in_order(indices, env: dict, ine, size: int, inside: bool = False) -> bool:
    """Whether ``indices`` (of a box of ``ine``), evaluated at the ``size`` output points of
    ``env`` in row-major order, read the data's elements in that same order (with
    ``inside``, each index also within its dimension at every point)."""
    try:
        got = [np.broadcast_to(np.asarray(evaluate(i, env), dtype=float), (size,)) for i in indices]
    except NotEvaluable:
        return False
    lin = np.zeros(size)
    for g, n in zip(got, ine):
        if inside and g.size and (g.min() < 0 or g.max() >= n):
            return False
        lin = lin * n + g
    return bool(np.array_equal(lin, np.arange(size, dtype=float)))


SIZES = (1, 2, 3, 5, 7, 12) + tuple(v for v in range(4, 65) if v not in (5, 7, 12))
"""Values given to the shape variables in turn by :func:`_row_major_at_sizes`: a few small
and larger ones first (a wrap such as ``% 7`` shows only past 7), then the rest up to 64."""
MIN_SIZES, MAX_SIZES = 3, 6
"""Values at which the element counts agree that must be checked, and that are checked at
the most (the first ones)."""
MAX_CHECKED = 1 << 20
"""Output elements above which a size is not checked."""


def _row_major_at_sizes(load, space) -> bool:
    """A reshape between symbolic shapes that the index forms do not prove (the symbol moved
    to another dimension: ``(n, 6, 5, 4)`` into ``(6, n * 20)``): the copy checked in
    row-major order at every point, the shape variables at each of a few values. Values at
    which the element counts differ are left out (``(n, 3)`` into ``(6, n // 2)`` is a
    reshape only for an even ``n``, as Relax's shape check demands; ``(n, 3, 6, 2)`` into
    ``(5, n * 36 // 5)`` for a multiple of 5): the first :data:`MAX_SIZES` values left are
    checked, :data:`MIN_SIZES` at least."""
    names = symbolic.symbol_vars(list(load.buffer.shape) + list(space.extents))
    if not names:
        return False
    checked = 0
    for env in shape_envs(names.values(), SIZES):
        try:
            ine = [_int(evaluate(e, env)) for e in load.buffer.shape]
            oute = [_int(evaluate(e, env)) for e in space.extents]
        except NotEvaluable:
            return False
        if None in ine or None in oute:
            return False
        if int(np.prod(ine)) != int(np.prod(oute)):
            continue
        if int(np.prod(oute)) > MAX_CHECKED:
            break
        grid = grid_over(space.indices, oute)
        if grid is None:
            return False
        grid.update(env)
        if not _reads_in_order(load.indices, grid, ine, int(np.prod(oute)), inside=True):
            return False
        checked += 1
        if checked == MAX_SIZES:
            break
    return checked >= MIN_SIZES


def _int(v) -> "int | None":
    v = np.asarray(v, dtype=float)
    return int(v) if v.shape == () and float(v).is_integer() and v >= 0 else None


def _reshape_into_constant(load, space) -> bool:
    """A reshape of data with a symbolic extent into a constant shape: the element counts
    must agree, which fixes the symbol (``n * 3 == 27``); the copy is then proved in
    row-major order with that value."""
    numel_in = 1
    for e in load.buffer.shape:
        numel_in = numel_in * sym(e)
    numel_out = int(np.prod(const_extents(space)))
    fixed = symbolic.solve_single(numel_in, numel_out)
    if fixed is None:
        return False
    names = symbolic.symbol_vars(load.buffer.shape)
    values = {names[s]: v for s, v in fixed.items() if s in names}
    ine = [const_of(e) for e in symbolic.instantiate(load.buffer.shape, values)]
    indices = symbolic.instantiate(load.indices, values)
    return None not in ine and _row_major_copy(indices, space, ine, const_extents(space))


def _same_linear_index(indices, space, ine, oute) -> bool:
    """Whether the row-major position read equals the one written, proved on the index
    forms simplified with the loop ranges (no evaluation: any grid size)."""
    ranges = {v: (0, n - 1) for v, n in zip(space.indices, oute)}
    read = [bounded_form(i, ranges) for i in indices]
    if None in read:
        return False
    written = [bounded_form(v, ranges) for v in space.indices]  # a unit loop's var is 0
    return recombine(_row_major(read, ine), ranges) == _row_major(written, oute)


def _row_major(forms, extents) -> dict:
    """The row-major position of the index ``forms`` in a box of ``extents``."""
    lin: dict = {}
    for f, n in zip(forms, extents):
        lin = add_forms({k: c * n for k, c in lin.items()}, f)
    return lin
