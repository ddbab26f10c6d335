"""Confirm a recovered op by building it again.

:func:`verify_op` lowers the op afresh with the project's lowering library
(``tir.topi.lower``) from the answer alone: its name, its attributes and the shapes and
types of the buffers its operands name. Both functions then run in the interpreter on the
same random inputs (symbolic extents bound to a small value) and their outputs are
compared. It reads what the PrimFunc computes, so it also judges a scheduled function
whose loops compute something else than the op they came from.

The check costs two runs of the function, so it is opt-in (``opinfo analyze --verify``,
``verify_op``); functions with more than ``MAX_ELEMENTS`` elements in their buffers are
not run. An op the library cannot build from the answer (an operand that is a scalar
constant, a multi-op kernel) is left unchecked (None).
"""
from __future__ import annotations

import math

import numpy as np

from tir.function import PrimFunc

from .info import OpInfo

MAX_ELEMENTS = 4_000_000
"""Largest total number of buffer elements a function may have to be run for the check."""
SYMBOLIC = 5
"""Value given to symbolic extents for the run."""


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


def _run(func, arrays) -> list:
    from tir.interp import interpret

    args = [a.copy() for a in arrays]
    with np.errstate(all="ignore"):
        interpret(func, *args)
    return args


def verify_op(func: PrimFunc, op: OpInfo, rng=None) -> "bool | None":
    """True when ``op``, lowered afresh, computes what ``func`` computes on random inputs;
    False when it computes something else; None when it cannot be checked (see the module
    docstring)."""
    import tir.topi

    rng = np.random.default_rng(0) if rng is None else rng
    params = list(func.params)
    if op.output is None or op.output.param is None or any(o.param is None for o in op.operands):
        return None
    try:
        arrays = random_inputs(func, rng)
    except ValueError:
        return None
    if sum(math.prod(a.shape) for a in arrays) > MAX_ELEMENTS:
        return None
    inputs = [(tuple(arrays[o.param].shape), str(func.buffer_map[params[o.param]].dtype)) for o in op.operands]
    try:
        fresh = tir.topi.lower(op.name, inputs, **{k: _listed(v) for k, v in dict(op.attrs).items()})
        mine = _run(func, arrays)[op.output.param]
        theirs = _run(fresh, [arrays[o.param] for o in op.operands] + [np.zeros_like(mine)])[-1]
    except Exception:  # not buildable from the answer, or not runnable on these inputs
        return None
    return not differ(mine, theirs)


def verify(func: PrimFunc, info, rng=None) -> "list":
    """``verify_op`` for each op of ``info`` (a :class:`.info.FuncInfo` of ``func``): only
    a function named as one op is checked, the ops of a fused kernel are left None."""
    if len(info.ops) != 1:
        return [None] * len(info.ops)
    return [verify_op(func, info.ops[0], rng)]
