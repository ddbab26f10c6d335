"""The regions a block reads and writes, for blocks whose TVMScript leaves them out.

TVM prints ``T.reads``/``T.writes`` on every block, but hand-written TVMScript may omit them
and TVM's parser then works them out from the block's body. :func:`infer_regions` does the
same here, so that a parsed block carries regions whether or not its source spelled them:

- every load and store in the body and the init, in order of first appearance, one region
  per buffer (reads in the order their loads are met, writes in the order of their stores);
- loops inside the block are relaxed over their ranges (``a[vi, j]`` under ``for j in
  range(8)`` reads ``a[vi, 0:8]``), narrowed by ``if``/``T.if_then_else`` conditions that
  compare a loop variable with a bound free of inner loops (``j > 2``);
- a nested block contributes its own regions, its iteration variables replaced by their
  bindings; buffers allocated inside the block are not part of its regions;
- a buffer the block both writes and reads stays among its reads, except in a reduction
  (a block with ``T.init()``), whose update reads the accumulator it writes;
- several accesses to one buffer are joined dimension by dimension: indices that differ
  only by constants give the interval between them; others, and indices that depend on
  data (a load inside an index) or on non-linear arithmetic of inner loops, give the whole
  dimension.

The result may be larger than TVM's where TVM's arithmetic simplifier proves more; it never
leaves out an element the block accesses.
"""
from __future__ import annotations

from . import dtype as dt
from .buffer import BufferRegion, Range
from .expr import (
    Add, And, Broadcast, BufferLoad, Call, Cast, FloorDiv, FloorMod, GE, GT, LE, LT, Let, Max,
    Min, Mul, PrimExpr, Ramp, Sub, Var, as_int, convert,
)
from .functor import pre_order_visit, substitute
from .stmt import AllocateBuffer, Block, BlockRealize, For, IfThenElse, LetStmt, SeqStmt, BufferStore


class _Lin:
    """``sum(coeff * atom) + const`` over index expressions free of relaxed variables."""

    __slots__ = ("terms", "const")

    def __init__(self, terms=None, const: int = 0):
        self.terms: dict = {k: c for k, c in (terms or {}).items() if c}
        self.const = const

    @staticmethod
    def of(e: PrimExpr) -> "_Lin":
        """``e`` as a linear form (non-linear parts are atoms)."""
        v = as_int(e)
        if v is not None:
            return _Lin(const=v)
        if isinstance(e, Add):
            return _Lin.of(e.a).plus(_Lin.of(e.b))
        if isinstance(e, Sub):
            return _Lin.of(e.a).plus(_Lin.of(e.b), -1)
        if isinstance(e, Mul):
            ca, cb = as_int(e.a), as_int(e.b)
            if cb is not None:
                return _Lin.of(e.a).scaled(cb)
            if ca is not None:
                return _Lin.of(e.b).scaled(ca)
        return _Lin({e: 1})

    def plus(self, other: "_Lin", sign: int = 1) -> "_Lin":
        terms = dict(self.terms)
        for k, c in other.terms.items():
            terms[k] = terms.get(k, 0) + sign * c
        return _Lin(terms, self.const + sign * other.const)

    def scaled(self, c: int) -> "_Lin":
        return _Lin({k: v * c for k, v in self.terms.items()}, self.const * c)

    def floordiv(self, c: int) -> "_Lin":
        if all(v % c == 0 for v in self.terms.values()):
            return _Lin({k: v // c for k, v in self.terms.items()}, self.const // c)
        d = _dtype(self)
        return _Lin({FloorDiv(self.expr(d), convert(c, d)): 1})

    def same_terms(self, other: "_Lin") -> bool:
        return self.terms == other.terms

    def expr(self, dtype) -> PrimExpr:
        out = None
        for atom, c in self.terms.items():
            atom = atom if atom.dtype == dtype else Cast(dtype, atom)
            term = atom if c == 1 else Mul(atom, convert(c, dtype))
            out = term if out is None else Add(out, term)
        if out is None:
            return convert(self.const, dtype)
        if self.const > 0:
            return Add(out, convert(self.const, dtype))
        if self.const < 0:
            return Sub(out, convert(-self.const, dtype))
        return out


_Bounds = tuple  # (lo: _Lin, hi: _Lin), both inclusive


def _uses(e: PrimExpr, env: dict) -> bool:
    found = []

    def visit(n):
        if found:
            return False
        if isinstance(n, Var) and n in env:
            found.append(n)
        return True

    pre_order_visit(e, visit)
    return bool(found)


def _bounds(e: PrimExpr, env: dict) -> "_Bounds | None":
    """Inclusive bounds of ``e`` as the variables of ``env`` range over theirs; None when
    they cannot be told (a variable of ``env`` whose range is unknown maps to None)."""
    if isinstance(e, Ramp):
        stride = as_int(e.stride)
        base = _bounds(e.base, env)
        if stride is None or base is None:
            return None
        span = stride * (e.lanes - 1)
        return (base[0].plus(_Lin(const=min(span, 0))), base[1].plus(_Lin(const=max(span, 0))))
    if isinstance(e, Broadcast):
        return _bounds(e.value, env)
    if not _uses(e, env):
        lin = _Lin.of(e)
        return lin, lin
    if isinstance(e, Var):
        return env[e]
    if isinstance(e, Add) or isinstance(e, Sub):
        a, b = _bounds(e.a, env), _bounds(e.b, env)
        if a is None or b is None:
            return None
        if isinstance(e, Add):
            return a[0].plus(b[0]), a[1].plus(b[1])
        return a[0].plus(b[1], -1), a[1].plus(b[0], -1)
    if isinstance(e, Mul):
        for x, y in ((e.a, e.b), (e.b, e.a)):
            c = as_int(y)
            if c is not None:
                r = _bounds(x, env)
                if r is None:
                    return None
                lo, hi = r[0].scaled(c), r[1].scaled(c)
                return (lo, hi) if c >= 0 else (hi, lo)
        return None
    if isinstance(e, (FloorDiv, FloorMod)):
        c = as_int(e.b)
        if c is None or c <= 0:
            return None
        if isinstance(e, FloorMod):
            return _Lin(const=0), _Lin(const=c - 1)
        r = _bounds(e.a, env)
        return None if r is None else (r[0].floordiv(c), r[1].floordiv(c))
    if isinstance(e, (Min, Max)):
        a, b = _bounds(e.a, env), _bounds(e.b, env)
        if a is None or b is None:
            return None
        pick = min if isinstance(e, Min) else max
        out = []
        for x, y in ((a[0], b[0]), (a[1], b[1])):
            if not x.same_terms(y):
                return None
            out.append(x if pick(x.const, y.const) == x.const else y)
        return tuple(out)
    if isinstance(e, Let):
        return _bounds(substitute(e.body, {e.var: e.value}), env)
    if isinstance(e, Cast) and e.dtype.is_integer and e.value.dtype.is_integer:
        return _bounds(e.value, env)  # index casts between integer widths
    return None


def _opaque(e: PrimExpr) -> bool:
    """True when ``e`` depends on data or on arithmetic the bounds do not follow: a load, an
    intrinsic call, a cast from or to a non-integer type."""
    found = []

    def visit(n):
        if found:
            return False
        if isinstance(n, (BufferLoad, Call)) or (
                isinstance(n, Cast) and not (n.dtype.is_integer and n.value.dtype.is_integer)):
            found.append(n)
        return True

    pre_order_visit(e, visit)
    return bool(found)


def _index(e: PrimExpr, env: dict):
    """One index of an access: the index itself when it is one point whatever the inner loops
    do, its bounds when they can be told, else None (the whole dimension)."""
    if _opaque(e):
        return None
    if not _uses(e, env):
        return e
    return _bounds(e, env)


def _narrowed(cond: PrimExpr, env: dict) -> dict:
    """``env`` with the ranges of its variables cut by ``cond`` where it compares one with a
    bound free of them (``j > 2``, ``j < n``) and the cut is a constant step."""
    parts, stack = [], [cond]
    while stack:
        c = stack.pop()
        if isinstance(c, And):
            stack += [c.a, c.b]
        else:
            parts.append(c)
    out = dict(env)
    for c in parts:
        if not isinstance(c, (LT, LE, GT, GE)):
            continue
        a, b, kind = c.a, c.b, type(c)
        if isinstance(b, Var) and b in out and not _uses(a, out):
            a, b, kind = b, a, {LT: GT, LE: GE, GT: LT, GE: LE}[kind]
        if not (isinstance(a, Var) and a in out) or _uses(b, out):
            continue
        if out[a] is None:
            continue
        bound = _Lin.of(b)
        lo, hi = out[a]
        if kind in (LT, LE):
            new = bound.plus(_Lin(const=-1 if kind is LT else 0))
            if new.same_terms(hi) and new.const < hi.const:
                hi = new
        else:
            new = bound.plus(_Lin(const=1 if kind is GT else 0))
            if new.same_terms(lo) and new.const > lo.const:
                lo = new
        out[a] = (lo, hi)
    return out


class _Collector:
    def __init__(self):
        self.reads: dict = {}  # buffer -> list of per-dimension bounds (or None)
        self.writes: dict = {}

    def access(self, table: dict, buffer, indices, env: dict) -> None:
        table.setdefault(buffer, []).append(tuple(_index(i, env) for i in indices))

    def region(self, table: dict, region: BufferRegion, env: dict) -> None:
        table.setdefault(region.buffer, []).append(tuple(_span(r.min, r.extent, env) for r in region.region))

    def expr(self, e: PrimExpr, env: dict) -> None:
        if isinstance(e, BufferLoad):
            self.access(self.reads, e.buffer, e.indices, env)
            for i in e.indices:
                self.expr(i, env)
            return
        if isinstance(e, Call) and e.op == "if_then_else" and len(e.args) == 3:
            self.expr(e.args[0], env)
            self.expr(e.args[1], _narrowed(e.args[0], env))
            self.expr(e.args[2], env)
            return
        if isinstance(e, Let):
            self.expr(e.value, env)
            self.expr(substitute(e.body, {e.var: e.value}), env)
            return
        for child in _expr_children(e):
            self.expr(child, env)

    def stmt(self, s, env: dict) -> None:
        if s is None:
            return
        if isinstance(s, SeqStmt):
            for x in s.seq:
                self.stmt(x, env)
        elif isinstance(s, BufferStore):
            for i in s.indices:
                self.expr(i, env)
            self.expr(s.value, env)
            self.access(self.writes, s.buffer, s.indices, env)
        elif isinstance(s, For):
            self.expr(s.min, env)
            self.expr(s.extent, env)
            self.stmt(s.body, {**env, s.loop_var: _span(s.min, s.extent, env)})
        elif isinstance(s, IfThenElse):
            self.expr(s.condition, env)
            self.stmt(s.then_case, _narrowed(s.condition, env))
            self.stmt(s.else_case, env)
        elif isinstance(s, LetStmt):
            self.expr(s.value, env)
            self.stmt(substitute(s.body, {s.var: s.value}), env)
        elif isinstance(s, BlockRealize):
            blk = s.block
            binding = dict(zip((iv.var for iv in blk.iter_vars), s.iter_values))
            for v in s.iter_values:
                self.expr(v, env)
            for r in blk.reads:
                self.region(self.reads, substitute(r, binding), env)
            for w in blk.writes:
                self.region(self.writes, substitute(w, binding), env)
        else:  # AllocateBuffer (its buffer is block-local: left out by infer_regions), AttrStmt, ...
            for name in ("value", "condition"):
                if isinstance(getattr(s, name, None), PrimExpr):
                    self.expr(getattr(s, name), env)
            body = getattr(s, "body", None)
            if body is not None:
                self.stmt(body, env)


def _span(start: PrimExpr, extent: PrimExpr, env: dict) -> "_Bounds | None":
    """Inclusive bounds of ``[start, start + extent)`` over ``env``, or None."""
    lo = _bounds(start, env)
    hi = _bounds(Sub(Add(start, extent), convert(1, extent.dtype)), env)
    return None if lo is None or hi is None else (lo[0], hi[1])


def _expr_children(e) -> list:
    from .functor import children

    return [c for c in children(e) if isinstance(c, PrimExpr)]


def _join(buffer, accesses: list) -> BufferRegion:
    ranges = []
    for dim, extent in enumerate(buffer.shape):
        dtype = extent.dtype
        per = [a[dim] for a in accesses]
        if any(p is None for p in per):
            ranges.append(Range(convert(0, dtype), extent))
            continue
        if all(isinstance(p, PrimExpr) for p in per) and all(p == per[0] for p in per):
            ranges.append(Range(per[0], convert(1, per[0].dtype)))
            continue
        per = [(_Lin.of(p), _Lin.of(p)) if isinstance(p, PrimExpr) else p for p in per]
        los, his = [p[0] for p in per], [p[1] for p in per]
        first = los[0]
        if all(x.same_terms(first) for x in los + his):
            lo = min(x.const for x in los)
            hi = max(x.const for x in his)
            start = _Lin(first.terms, lo)
            ranges.append(Range(start.expr(_dtype(first, dtype)), convert(hi - lo + 1, _dtype(first, dtype))))
        elif len(per) == 1:
            lo, hi = per[0]
            d = _dtype(lo, dtype)
            ranges.append(Range(lo.expr(d), hi.plus(lo, -1).plus(_Lin(const=1)).expr(d)))
        else:
            ranges.append(Range(convert(0, dtype), extent))
    return BufferRegion(buffer, tuple(ranges))


def _dtype(lin: _Lin, default=dt.int64):
    """The type of ``lin``'s index expressions (``default`` for a constant)."""
    for atom in lin.terms:
        return atom.dtype
    return default


def infer_regions(block: Block) -> tuple:
    """``(reads, writes)``: the regions ``block`` accesses, as TVM's parser infers them for a
    block without ``T.reads``/``T.writes`` (see the module docstring)."""
    col = _Collector()
    local = {id(b) for b in block.alloc_buffers}

    def note_allocs(n):
        if isinstance(n, Block):
            local.update(id(b) for b in n.alloc_buffers)
        elif isinstance(n, AllocateBuffer):
            local.add(id(n.buffer))
        return True

    pre_order_visit(block.body, note_allocs)
    matched = {id(m.buffer): m.source for m in block.match_buffers}
    col.stmt(block.init, {})
    col.stmt(block.body, {})

    def regions(table: dict, skip=()) -> tuple:
        out = []
        for buf, accesses in table.items():
            if id(buf) in local or id(buf) in skip:
                continue
            src = matched.get(id(buf))
            out.append(src if src is not None else _join(buf, accesses))
        return tuple(out)

    writes = regions(col.writes)
    skip = {id(w.buffer) for w in writes} if block.init is not None else ()
    return regions(col.reads, skip), writes
