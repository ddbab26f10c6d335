"""Integer evaluation, interval bounds and short printing of index expressions."""
from __future__ import annotations

from tir.expr import (
    Add, Cast, FloorDiv, FloorMod, IntImm, Max, Min, Mul, PrimExpr, Sub, Var,
)

_ARITH = {
    Add: lambda a, b: a + b,
    Sub: lambda a, b: a - b,
    Mul: lambda a, b: a * b,
    FloorDiv: lambda a, b: a // b,
    FloorMod: lambda a, b: a % b,
    Min: min,
    Max: max,
}

_SYMBOL = {Add: "+", Sub: "-", Mul: "*", FloorDiv: "//", FloorMod: "%"}


def eval_int(e: PrimExpr, env: dict) -> int:
    """Value of an integer index expression; ``env`` maps id(Var) -> int."""
    if isinstance(e, IntImm):
        return e.value
    if isinstance(e, Var):
        return env[id(e)]
    if isinstance(e, Cast):
        return eval_int(e.value, env)
    fn = _ARITH.get(type(e))
    if fn is None:
        raise ValueError(f"cannot evaluate {type(e).__name__} as an index")
    return fn(eval_int(e.a, env), eval_int(e.b, env))


def _corners(fn, ra, rb):
    vals = [fn(a, b) for a in ra for b in rb]
    return min(vals), max(vals)


def int_range(e: PrimExpr, bounds: dict) -> "tuple[int, int]":
    """Inclusive [lo, hi] of an index expression; ``bounds`` maps id(Var) -> (lo, hi)."""
    if isinstance(e, IntImm):
        return e.value, e.value
    if isinstance(e, Var):
        if id(e) not in bounds:
            raise ValueError(f"no range known for variable {e.name}")
        return bounds[id(e)]
    if isinstance(e, Cast):
        return int_range(e.value, bounds)
    if type(e) not in _ARITH:
        raise ValueError(f"cannot bound {type(e).__name__} as an index")
    ra, rb = int_range(e.a, bounds), int_range(e.b, bounds)
    if isinstance(e, FloorMod) and rb[0] == rb[1] and rb[0] > 0:
        if ra[0] // rb[0] == ra[1] // rb[0]:
            return ra[0] % rb[0], ra[1] % rb[0]
        return 0, rb[0] - 1
    if isinstance(e, (FloorDiv, FloorMod)) and rb[0] <= 0 <= rb[1]:
        raise ValueError("division by a range that contains 0")
    return _corners(_ARITH[type(e)], ra, rb)


def show(e) -> str:
    """A short Python-like rendering of an index expression."""
    if isinstance(e, int):
        return str(e)
    if isinstance(e, IntImm):
        return str(e.value)
    if isinstance(e, Var):
        return e.name
    sym = _SYMBOL.get(type(e))
    if sym is not None:
        return f"({show(e.a)} {sym} {show(e.b)})"
    return repr(e)
