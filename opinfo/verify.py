"""Confirm a recovered op by building it again.

:func:`verify_op` lowers the op afresh with the project's lowering library
(``tir.topi.lower``) from the answer alone: its name, its attributes and the shapes and
types of the buffers its operands name. Both functions then run in the interpreter on the
same random inputs (symbolic extents bound to a small value) and their outputs are
compared. It reads what the PrimFunc computes, so it also judges a scheduled function
whose loops compute something else than the op they came from.

The check costs two runs of the function: :func:`opinfo.analyze` makes it on small
functions (``CHEAP_ELEMENTS``: the answer is withdrawn when the op computes something
else), ``opinfo analyze --verify`` and :func:`verify_op` on any function up to
``MAX_ELEMENTS`` elements in its buffers. An op the library cannot build from the answer (an operand that is a scalar
constant, a multi-op kernel) is left unchecked (None).
"""
from __future__ import annotations

import math

import numpy as np

from tir.function import PrimFunc

from .info import OpInfo

MAX_ELEMENTS = 4_000_000
"""Largest total number of buffer elements a function may have to be run for the check."""
CHEAP_ELEMENTS = 20_000
"""Total buffer elements up to which :func:`opinfo.analyze` checks every answer naming one
op itself (a few milliseconds); ``--verify`` checks larger functions too."""
SYMBOLIC = 5
"""Value given to symbolic extents for the run."""
DRAWS = 2
"""Independent random inputs an answer must fail on to be refuted: a norm over three
elements whose variance happens to be tiny amplifies a difference of summation order past
any tolerance on one draw, a wrong answer differs on every draw."""
JUNK = 7.0
"""What storage the function allocates itself holds before the function writes it."""


def random_inputs(func: PrimFunc, rng, low: int = 0) -> list:
    """Random arrays for every buffer of ``func``, in parameter order (floats around 0,
    integers from ``low`` to 2, booleans); symbolic extents are ``SYMBOLIC``. Raises
    ValueError for an extent that is an expression of variables."""
    from tir.interp_data import np_dtype

    from .recognize.running import concrete_shapes

    shapes = concrete_shapes(func.buffers, SYMBOLIC)
    if shapes is None:
        raise ValueError("extents other than constants and variables")
    arrays = []
    for buf, shape in zip(func.buffers, shapes):
        dtype = np_dtype(buf.dtype)
        if np.issubdtype(dtype, np.floating):
            arrays.append(np.asarray(rng.standard_normal(shape) * 3).astype(dtype))
        elif dtype == np.bool_:
            arrays.append(np.asarray(rng.integers(0, 2, shape)).astype(dtype))
        else:
            arrays.append(np.asarray(rng.integers(low, 3, shape)).astype(dtype))
    return arrays


def differ(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two outputs differ beyond rounding (half precision at 2e-2: one rounding of
    a differently ordered sum is already 1e-3 relative)."""
    if a.shape != b.shape:
        return True
    if np.array_equal(a, b, equal_nan=True):
        return False
    if not np.issubdtype(a.dtype, np.floating):
        return True
    rtol, atol = (2e-2, 2e-2) if a.dtype.itemsize <= 2 else (1e-4, 1e-5)
    return not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def _listed(value):
    """An attribute value as ``tir.topi.lower`` takes it (lists, not tuples)."""
    return [_listed(v) for v in value] if isinstance(value, (tuple, list)) else value


def run_copies(func, arrays, scratch_fill=None) -> list:
    """Every array after running ``func`` on copies of ``arrays`` (outputs included), the
    function's own storage starting as ``scratch_fill`` (zeros when None)."""
    from tir.interp import interpret

    args = [a.copy() for a in arrays]
    with np.errstate(all="ignore"):
        interpret(func, *args, scratch_fill=scratch_fill)
    return args


def cheap_to_verify(func: PrimFunc) -> bool:
    """Whether ``func``'s buffers hold at most ``CHEAP_ELEMENTS`` elements (symbolic
    extents at ``SYMBOLIC``)."""
    from .recognize.running import concrete_shapes

    shapes = concrete_shapes(func.buffers, SYMBOLIC)
    return shapes is not None and sum(math.prod(s) for s in shapes) <= CHEAP_ELEMENTS


def verify_op(func: PrimFunc, op: OpInfo, rng=None, packed: "bool | None" = None) -> "bool | None":
    """True when ``op``, lowered afresh, computes what ``func`` computes on random inputs;
    False when it computes something else on ``DRAWS`` independent draws; None when it
    cannot be checked (see the module docstring). ``packed``: whether some buffer of ``func`` holds a packed layout
    (``NCHW4c``; found out when None). The op is then the logical one, built afresh only
    when its attributes name the packed layouts (a convolution's ``data_layout``); a
    softmax or an add over packed buffers is not checked."""
    import tir.topi

    rng = np.random.default_rng(0) if rng is None else rng
    params = list(func.params)
    if op.output is None or op.output.param is None or any(o.param is None for o in op.operands):
        return None
    if packed is None:
        from .unpack import unpack_all

        packed = unpack_all(func) is not None
    if packed and not any(isinstance(v, str) and any(ch.isdigit() for ch in v) for v in dict(op.attrs).values()):
        return None
    try:
        fresh = None
        for _ in range(DRAWS):
            arrays = random_inputs(func, rng)
            if sum(math.prod(a.shape) for a in arrays) > MAX_ELEMENTS:
                return None
            if fresh is None:
                inputs = [(tuple(arrays[o.param].shape), str(func.buffer_map[params[o.param]].dtype))
                          for o in op.operands]
                fresh = tir.topi.lower(op.name, inputs, **{k: _listed(v) for k, v in dict(op.attrs).items()})
            # the function's own storage starts as junk (7): an element it reads before
            # writing shows instead of passing for a zero. Not NaN: TVM's schedules multiply
            # unwritten storage by a zero of a dilated kernel, finite junk times 0 being the 0
            # intended
            mine = run_copies(func, arrays, scratch_fill=JUNK)[op.output.param]
            theirs = run_copies(fresh, [arrays[o.param] for o in op.operands] + [np.zeros_like(mine)])[-1]
            if not differ(mine, theirs):
                return True
    except Exception:  # not buildable from the answer, or not runnable on these inputs
        return None
    return False


def verify(func: PrimFunc, info, rng=None) -> "list":
    """``verify_op`` for each op of ``info`` (a :class:`.info.FuncInfo` of ``func``): only
    a function named as one op is checked, the ops of a fused kernel are left None."""
    if len(info.ops) != 1:
        return [None] * len(info.ops)
    return [verify_op(func, info.ops[0], rng)]
