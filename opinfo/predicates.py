"""Block predicates (``T.where``) that drop no element: those of TVM's splits.

A predicate conjunct ``e < c`` drops nothing when it holds on every loop iteration, or when
it is exactly "some block iterator stays in its domain" (a lower bound ``c <= e`` likewise,
for an iterator bound to ``e - c``): a binding ``k * e + r`` with
``0 <= r < k`` and extent ``k * c`` (a non-divisible split), also with ``e // m`` for ``e``
and ``c / m`` for ``c`` (loops fused, then split). Loops are taken to start at 0; a loop
that does not is left out of the domain, so nothing about it is proven.
"""
from __future__ import annotations

import attrs
import numpy as np

from tir.expr import GE, LE, LT, Add, And, BufferLoad, Cast, FloorDiv, FloorMod, IntImm, Mul, SizeVar, Sub, Var
from tir import dtype as dt
from tir.function import PrimFunc
from tir.functor import post_order_stmts, post_order_visit, pre_order_visit, transform_stmts
from tir.stmt import Block, BlockRealize, For, IterKind, SeqStmt

from .affine import ONE, add_forms, affine, const_of, equal_extents
from .recognize.guard import conjuncts, nonneg, value_range
from .rewrite import stores_in


def _scale(binding: dict, e: dict) -> "int | None":
    """``k`` with ``binding = k * e + rest`` where ``rest`` shares no atom with ``e``."""
    atoms = [a for a in e if a is not ONE]
    if not atoms or e[atoms[0]] == 0 or binding.get(atoms[0], 0) % e[atoms[0]]:
        return None
    k = binding.get(atoms[0], 0) // e[atoms[0]]
    return k if k > 0 and all(binding.get(a, 0) == k * e[a] for a in atoms) else None


def _times(form: dict, k: int) -> dict:
    return {a: k * v for a, v in form.items() if k * v}


def _divided(form: dict, m: int) -> "dict | None":
    """``form / m`` when ``m`` divides every coefficient, else None."""
    return None if any(v % m for v in form.values()) else {a: v // m for a, v in form.items()}


def _ceil_of(ext: dict, k: int) -> "dict | None":
    """``ceil(ext / k)`` of a constant extent, as a form: ``e < ceil(ext / k)`` follows from
    ``k * e + r < ext`` (the split of an already split loop repeats its outer bound)."""
    if not set(ext) <= {ONE}:
        return None
    q = -(-ext.get(ONE, 0) // k)
    return {ONE: q} if q else {}


def _is_ceil_div(c: dict, ext: dict, k: int) -> bool:
    """``c`` is ``(ext + k - 1) // k``, ceil(ext / k) as TVM writes it for a symbolic
    ``ext`` (``(n + 1) // 2``: the outer loop of ``n`` split by 2, split again)."""
    if len(c) != 1 or k <= 1:
        return False
    (atom, coef), = c.items()
    if coef != 1 or not isinstance(atom, FloorDiv) or const_of(atom.b) != k:
        return False
    return affine(atom.a) == add_forms(ext, {ONE: k - 1})


def _bounds(value, iv, e: dict, c: dict, dom: dict) -> bool:
    """``e < c`` is exactly ``value < extent`` (see :func:`_scaled_bound`), ``e >= 0``."""
    lo, ext = const_of(iv.dom.min), affine(iv.dom.extent)
    e_range = value_range(e, dom)
    form = affine(value)
    if lo != 0 or ext is None or form is None:
        return False
    if not (e_range is not None and e_range[0] >= 0 or e_range is None and nonneg(e, dom)):
        return False
    return _scaled_bound(form, ext, e, c, dom)


def _scaled_bound(form: dict, ext: dict, e: dict, c: dict, dom: dict) -> bool:
    """``form = k * e + r`` with ``0 <= r < k`` and ``ext = k * c`` (or ``c = ceil(ext / k)``,
    also written ``(ext + k - 1) // k``: then ``e < c`` is implied by ``form < ext``), or with ``r`` in ``[r0, r0 + k)`` and
    ``ext - r0 = k * c``; or the same with
    ``e // m`` for ``e`` and ``c / m`` for ``c`` (``m`` dividing ``c``). ``ext`` and ``c``
    are affine forms: a symbolic loop fused and split compares with ``n * 3``."""
    k = _scale(form, e)
    rest = value_range(add_forms(form, e, -k), dom) if k is not None else None
    if rest is not None and (ext == _times(c, k) or _ceil_of(ext, k) == c or _is_ceil_div(c, ext, k)) \
            and 0 <= rest[0] and rest[1] < k:
        return True
    if rest is not None and rest[1] - rest[0] < k and add_forms(ext, {ONE: -rest[0]}) == _times(c, k):
        return True  # an offset binding (decompose_padding's interior, k * e + r - 2 < 6 as e < 4)
    for atom in form:
        m = const_of(atom.b) if isinstance(atom, FloorDiv) else None
        part = _divided(c, m) if m and m > 0 else None
        if part is not None and affine(atom.a) == e and _scaled_bound(form, ext, {atom: 1}, part, dom):
            return True
    return False


def _lower_bound(term, realize: BlockRealize, dom: dict) -> bool:
    """``c <= e`` (or ``e >= c``, ``c`` a constant) holds on every loop iteration, or is
    exactly "an iterator bound to ``e - c`` is at least its domain's start 0"
    (decompose_padding's interior block: ``1 <= ax0 * 2 + ax1`` for ``v = ax0 * 2 + ax1 - 1``)."""
    lo, e = (term.a, term.b) if isinstance(term, LE) else (term.b, term.a)
    c, f = affine(lo), affine(e)
    if c is None or f is None or not set(c) <= {ONE}:
        return False
    form = add_forms(f, c, -1)
    whole = value_range(form, dom)
    if whole is not None and whole[0] >= 0:
        return True
    return any(const_of(iv.dom.min) == 0 and affine(v) == form
               for iv, v in zip(realize.block.iter_vars, realize.iter_values))


def implied(term, realize: BlockRealize, dom: dict) -> bool:
    """``e < c`` holds on every loop iteration, or is implied by some iterator's domain
    (see :func:`_bounds`); so does a lower bound ``c <= e`` (:func:`_lower_bound`)."""
    if isinstance(term, (LE, GE)):
        return _lower_bound(term, realize, dom)
    if not isinstance(term, LT):
        return False
    if any(_is_binding_bound(term, iv, v) or _is_divided_binding_bound(term, iv, v, dom)
           for iv, v in zip(realize.block.iter_vars, realize.iter_values)):
        return True
    e, c = affine(term.a), affine(term.b)
    if e is None or c is None:
        return False
    whole = value_range(e, dom)
    if whole is not None and set(c) <= {ONE} and whole[1] < c.get(ONE, 0):
        return True  # true on every loop iteration
    if _repeats_only(e, c, realize, dom):
        return True
    return any(_bounds(v, iv, e, c, dom) for iv, v in zip(realize.block.iter_vars, realize.iter_values))


def _is_binding_bound(term, iv, value) -> bool:
    """``term`` is literally ``value < extent`` of an iterator bound to ``value`` with domain
    ``[0, extent)``: the block's domain already says it (this also covers bindings that are
    not affine, such as ``o * 2 + f // n`` of a symbolic loop fused and split)."""
    return const_of(iv.dom.min) == 0 and term.a == value and term.b == iv.dom.extent


def _is_divided_binding_bound(term, iv, value, dom: dict) -> bool:
    """``term`` is ``e < k * m`` for an iterator bound to ``e // m`` with domain ``[0, k)``,
    ``e >= 0`` and ``m`` a positive form (also symbolic: ``f < n * 21`` with binding
    ``f // (n * 7)`` of extent 3, loops of a symbolic extent fused and bound to threads)."""
    if not isinstance(value, FloorDiv) or const_of(iv.dom.min) != 0 or term.a != value.a:
        return False
    k, m, c, e = const_of(iv.dom.extent), affine(value.b), affine(term.b), affine(term.a)
    if k is None or k <= 0 or m is None or c is None or e is None or not m:
        return False
    if any(v <= 0 for v in m.values()) or any(a is not ONE and not isinstance(a, Var) and not _size_atom(a)
                                              for a in m):
        return False
    if any(isinstance(a, Var) and a in dom for a in m):
        return False  # a loop variable in the divisor: not a size
    return c == _times(m, k) and nonneg(e, dom)


def _repeats_only(e: dict, c: dict, realize: BlockRealize, dom: dict) -> bool:
    """``e < c`` over loops no binding reads, true with those loops at 0: it only keeps the
    block from running again on the same points (TVM's split of a fused extent-1 loop, bound
    to threads, gives ``b * 8 + t < 1`` over a block whose variables are all constants)."""
    atoms = [a for a in e if a is not ONE]
    least = _least(c)
    if not atoms or least is None or not all(isinstance(a, Var) and a in dom for a in atoms):
        return False
    read = set()
    for value in realize.iter_values:
        post_order_visit(value, lambda n: read.add(id(n)) if isinstance(n, Var) else None)
    return not any(id(a) in read for a in atoms) and e.get(ONE, 0) < least


def _least(form: dict) -> "int | None":
    """The least value of a form of sizes with non-negative coefficients over every size
    ``n >= 1`` (each size atom is at least 1 there, :func:`_size_atom`): a constant, or ``n``
    and ``(n + 2) // 3`` when a symbolic batch's split loops are bounded by it (a block
    ``compute_at`` placed under them that reads none of them); None for other forms."""
    if not all(k is ONE or (_size_atom(k) and v >= 0) for k, v in form.items()):
        return None
    return sum(form.values())


def conjunction(terms: list, dtype=dt.bool_):
    """``terms`` joined by ``and`` in their order: a constant true term is left out, a
    constant false one makes the whole false; true (of ``dtype``) when none is left."""
    out = None
    for term in terms:
        if isinstance(term, IntImm):
            if term.value:
                continue
            return IntImm(dtype, 0)
        out = term if out is None else And(out, term)
    return IntImm(dtype, 1) if out is None else out


def is_true(pred) -> bool:
    return isinstance(pred, IntImm) and pred.value == 1


def loop_domain(func: PrimFunc) -> dict:
    """Loop variable -> extent, for the loops starting at 0."""
    dom = {}
    post_order_stmts(func.body, lambda n: dom.__setitem__(n.loop_var, n.extent)
                     if isinstance(n, For) and const_of(n.min) == 0 else None)
    return dom


def restates_domain(realize: BlockRealize, dom: dict) -> bool:
    """The block's predicate drops no element of its iteration domain: it is true, or every
    conjunct is implied (:func:`_all_implied`); ``dom``: :func:`loop_domain`."""
    return is_true(realize.predicate) or _all_implied(conjuncts(realize.predicate), realize, dom)


def drop_predicates(func: PrimFunc) -> "PrimFunc | None":
    """``func`` without split predicates, or None when one may drop elements. What the
    rules here do not show is checked by enumerating the loops a predicate constrains
    (:func:`.predicate_enum.covers_exactly`, blocks with a name of their own)."""
    from .coverage import block_realizes
    from .predicate_enum import covers_exactly

    bad = []
    dom = loop_domain(func)
    found = list(block_realizes(func.body))
    names = [r.block.name for r, _ in found]
    loops_of = {r.block.name: loops for r, loops in found if names.count(r.block.name) == 1}
    writers: dict = {}
    for r, _ in found:
        for store in stores_in(r.block.body):
            writers.setdefault(id(store.buffer), set()).add(id(r.block))
    nests = _root_nests(func)

    def post(n):
        if not isinstance(n, BlockRealize) or is_true(n.predicate):
            return None
        repeats = n.block.name in loops_of and _recomputable(n.block, writers, nests)
        if not restates_domain(n, dom) and not (n.block.name in loops_of and covers_exactly(
                n, loops_of[n.block.name], lambda r, d: restates_domain(r, {**dom, **d}), repeats=repeats)):
            box = prefix_box(n, loops_of[n.block.name], repeats) if n.block.name in loops_of else None
            if box is None:
                bad.append(n)
                return None
            n = attrs.evolve(n, block=attrs.evolve(n.block, iter_vars=box))
        return attrs.evolve(n, predicate=IntImm(n.predicate.dtype, 1))

    out = transform_stmts(func, post)
    return None if bad else out


PREFIX_POINTS = 1 << 16
"""Loop iterations :func:`prefix_box` enumerates at most."""


def prefix_box(realize: BlockRealize, loops: tuple, repeats: bool = False) -> "list | None":
    """The block's iteration variables with their domains cut to what its loops and
    predicate run, when that is a box of leading parts of the spatial domains (each point
    once; more than once with ``repeats``), reduction domains run whole; else None.
    ``reverse_compute_inline`` of a slice into its producer leaves such a block: the
    producer's domain of 13 under ``T.where(v < 12)``, writing a buffer of 12 -- a block of
    12 points. What it no longer computes is missing for whatever reads it, which the
    uninitialised-read and coverage checks judge on the function as scheduled. Constant
    loops and domains only, every variable the predicate and bindings read a loop of
    ``loops`` -- except free axes (:func:`_free_axes`: a variable bound to a loop of its own
    over its whole domain, which nothing else reads), kept whole whatever their extent (a
    symbolic batch)."""
    from .probe import block_points, collect_vars

    block = realize.block
    free = _free_axes(realize, loops)
    rest = [k for k in range(len(block.iter_vars)) if k not in free]
    doms = [(const_of(block.iter_vars[k].dom.min), const_of(block.iter_vars[k].dom.extent)) for k in rest]
    if not doms or any(lo is None or ext is None for lo, ext in doms):
        return None
    free_loops = {realize.iter_values[k] for k in free}
    inner = tuple(lp for lp in loops if lp.loop_var not in free_loops)
    loop_vars = {lp.loop_var for lp in inner}
    used: set = set()
    for e in (realize.predicate, *(realize.iter_values[k] for k in rest)):
        collect_vars(e, used)
    if not used <= loop_vars or any(const_of(lp.min) is None or const_of(lp.extent) is None for lp in inner):
        return None
    reduced = attrs.evolve(realize, iter_values=tuple(realize.iter_values[k] for k in rest),
                           block=attrs.evolve(block, iter_vars=tuple(block.iter_vars[k] for k in rest)))
    got = block_points(reduced, inner, {}, PREFIX_POINTS)
    if got is None:
        return None
    values = [np.asarray(got.block_env[block.iter_vars[k].var]) for k in rest]
    box = leading_widths(values, doms)
    if box is None or box == [ext for _, ext in doms] or \
            any(w < ext and block.iter_vars[k].kind is not IterKind.SPATIAL for k, w, (_, ext) in zip(rest, box, doms)):
        return None
    flat = np.zeros(got.count, dtype=np.int64)
    for v, (lo, _), width in zip(values, doms, box):
        flat = flat * width + (v.astype(np.int64) - lo)
    total = int(np.prod(box))
    if np.unique(flat).size != total or (flat.size != total and not repeats):
        return None
    widths = dict(zip(rest, box))
    return [attrs.evolve(iv, dom=attrs.evolve(iv.dom, extent=IntImm(iv.dom.extent.dtype, widths[k])))
            if k in widths else iv for k, iv in enumerate(block.iter_vars)]


def _free_axes(realize: BlockRealize, loops: tuple) -> set:
    """Indices of the block variables bound to a loop variable alone, that loop starting at 0
    and running the variable's whole domain (the same extent), the loop variable read by no
    other binding and not by the predicate: each such axis runs whole and independently of
    the others, so the predicate cuts nothing from it."""
    from .probe import collect_vars

    by_var = {lp.loop_var: lp for lp in loops}
    out = set()
    for k, (iv, value) in enumerate(zip(realize.block.iter_vars, realize.iter_values)):
        lp = by_var.get(value) if isinstance(value, Var) else None
        if lp is None or const_of(lp.min) != 0 or const_of(iv.dom.min) != 0 or not equal_extents(lp.extent, iv.dom.extent):
            continue
        others: set = set()
        for j, e in enumerate((realize.predicate, *realize.iter_values)):
            if j != k + 1:
                collect_vars(e, others)
        if value not in others:
            out.add(k)
    return out


def leading_widths(values: list, doms: list) -> "list | None":
    """Per variable, how long a leading part of its domain ``(min, extent)`` its values
    (one array each, whole numbers inside the domain) reach from its minimum on; None when
    some are empty, start past the minimum, leave the domain or are not whole."""
    widths = []
    for v, (lo, ext) in zip(values, doms):
        if v.size == 0 or np.any(v != np.floor(v)) or v.min() != lo or v.max() >= lo + ext:
            return None
        widths.append(int(v.max()) - lo + 1)
    return widths


def _root_nests(func: PrimFunc) -> dict:
    """Block id -> index of the statement of the root block's sequence holding it (a nest
    runs whole before the next one starts); empty unless the root holds a sequence."""
    root = func.root_block
    if root is None or not isinstance(root.body, SeqStmt):
        return {}
    out: dict = {}
    for k, stmt in enumerate(root.body.seq):
        post_order_stmts(stmt, lambda n, k=k: out.__setitem__(id(n), k) if isinstance(n, Block) else None)
    return out


def _recomputable(block, writers: dict, nests: "dict | None" = None) -> bool:
    """Whether running ``block`` again at a point it already ran changes nothing: it has only
    spatial variables and no init, and its stores write buffers no other block of its nest
    of the root (``nests``, :func:`_root_nests`) writes and it does not read (a producer
    ``compute_at`` placed under a consumer's loops, computing again the elements two
    consumer tiles share; ``decompose_padding``'s fill, in a nest before the one writing the
    interior, as well). Whether each element is written before it is read is
    :func:`.intermediate_check.uninitialised_reads`'s question, asked of the function as
    scheduled."""
    if block.init is not None or any(iv.kind is not IterKind.SPATIAL for iv in block.iter_vars):
        return False
    stores = stores_in(block.body)
    if not stores:
        return False
    written = {id(s.buffer) for s in stores}
    nests = nests or {}
    own = nests.get(id(block))

    def apart(other) -> bool:
        return other == id(block) or own is not None and nests.get(other) not in (None, own)

    if any(not all(apart(other) for other in writers.get(key, ())) for key in written):
        return False
    read: list = []  # every load of the block's own statements (values, indices, guards)
    pre_order_visit(block.body, lambda n: read.append(n) or True if isinstance(n, BufferLoad) else not isinstance(n, Block))
    return not any(id(load.buffer) in written for load in read)


# ------------------------------------------------------------------ digits of fused loops
#
# TVM's fuse/split leave predicates built from floor divisions and remainders of one fused
# index ``f`` (``f // 2 * 2 + f % 2 < 7``, ``f % 56 // 2 % 4 * 2 + f % 2 < 7``,
# ``f // (n * 8) * 2 + f % (n * 8) // (n * 4) < 5``). With ``f >= 0`` and positive divisors,
# every such term is a *digit* ``f // d % m`` (``m`` None: no remainder), and digits of the
# same ``f`` with matching weights merge (``f // d % m1 + m1 * (f // (d * m1) % m2)`` is
# ``f // d % (m1 * m2)``; ``f // 1`` with no remainder is ``f``). Comparing these normal
# forms with the bindings' decides whether a conjunct only restates an iterator's domain.
# Facts (loop extents, conjuncts already proven) let a remainder that cannot wrap disappear
# (``f % 4`` is ``f`` once ``f < 4`` is known).

def _size_atom(atom) -> bool:
    """A symbolic size: a shape variable ``n``, or ``(n + c) // k`` (``c >= 0``, ``k > 0``:
    the outer extent of ``n`` split by ``k``), positive for every ``n >= 1``."""
    if isinstance(atom, SizeVar):
        return True
    if not isinstance(atom, FloorDiv) or not (const_of(atom.b) or 0) > 0:
        return False
    num = affine(atom.a)
    if num is None or not any(isinstance(k, SizeVar) for k in num):
        return False
    if not all((isinstance(k, SizeVar) or k is ONE) and v >= 0 for k, v in num.items()):
        return False
    return sum(num.values()) >= const_of(atom.b)  # at least 1 with every size variable at 1


def _size(e) -> "tuple | None":
    """A positive divisor as ``(coefficient, size atom or None)`` (:func:`_size_atom`), or None."""
    form = affine(e)
    if form is None or len(form) != 1:
        return None
    (atom, c), = form.items()
    if c <= 0 or not (atom is ONE or _size_atom(atom)):
        return None
    return c, (None if atom is ONE else atom)


def _size_mul(a, b):
    if a is None or b is None or (a[1] is not None and b[1] is not None):
        return None
    return a[0] * b[0], a[1] if a[1] is not None else b[1]


def _size_div(a, b):
    """``a / b`` when it is a size (exact), else None."""
    if b[1] is not None and b[1] != a[1] or a[0] % b[0]:
        return None
    return a[0] // b[0], (a[1] if b[1] is None else None)


def _size_form(s) -> dict:
    return {ONE if s[1] is None else s[1]: s[0]}


_ONE_SIZE = (1, None)


@attrs.frozen
class _Digit:
    """``base // d % m`` of a non-negative ``base`` (a frozen normal form); ``m`` None: no
    remainder."""

    base: frozenset
    d: tuple
    m: "tuple | None"


class _Digits:
    """Normal forms (dict key -> coefficient, keys Var / _Digit / ONE) under facts."""

    def __init__(self, dom: dict):
        self.dom = dom
        self.facts = []  # (normal form, exclusive upper bound as an affine form of sizes)

    # -------------------------------------------------------------- building
    def norm(self, e) -> "dict | None":
        if isinstance(e, IntImm):
            return {ONE: e.value} if e.value else {}
        if isinstance(e, Var):
            return {e: 1}
        if isinstance(e, Cast):
            return None if e.dtype.is_float else self.norm(e.value)
        if isinstance(e, (Add, Sub)):
            a, b = self.norm(e.a), self.norm(e.b)
            return None if a is None or b is None else self._merge(add_forms(a, b, 1 if isinstance(e, Add) else -1))
        if isinstance(e, Mul):
            a, b = self.norm(e.a), self.norm(e.b)
            if a is None or b is None:
                return None
            if set(b) <= {ONE}:
                a, b = b, a
            if not set(a) <= {ONE}:
                return None
            return self._merge(_times(b, a.get(ONE, 0)))
        if isinstance(e, (FloorDiv, FloorMod)):
            k = _size(e.b)
            a = self.norm(e.a)
            if k is None or a is None:
                return None
            dig = self._as_digit(a)
            if dig is None:
                return None
            if isinstance(e, FloorDiv):
                if dig.m is None:
                    dig = _Digit(dig.base, _size_mul(dig.d, k), None)
                else:
                    m = _size_div(dig.m, k)
                    if m is None:
                        return None
                    dig = _Digit(dig.base, _size_mul(dig.d, k), m)
                if dig.d is None:
                    return None
            else:
                if dig.m is None or _size_div(dig.m, k) is not None:
                    dig = _Digit(dig.base, dig.d, k)
                elif _size_div(k, dig.m) is None:
                    return None
            return self._merge(self._simplify(dig))
        return None

    def _as_digit(self, form: dict) -> "_Digit | None":
        if len(form) == 1:
            (key, c), = form.items()
            if isinstance(key, _Digit) and c == 1:
                return key
        return _Digit(frozenset(form.items()), _ONE_SIZE, None) if self._nonneg(form) else None

    def _nonneg(self, form: dict) -> bool:
        return all(c >= 0 and (key is ONE or isinstance(key, _Digit) or _size_atom(key) or key in self.dom)
                   for key, c in form.items())

    def _simplify(self, dig: _Digit) -> dict:
        """The digit as a normal form: a remainder that cannot wrap is dropped, ``base // 1``
        is ``base``, a digit of a base below ``d`` is 0."""
        base = dict(dig.base)
        ub = self.upper(base)
        if ub is not None and _le(ub, _size_form(dig.d)):
            return {}
        if dig.m is not None and ub is not None and _le(ub, _size_form(_size_mul(dig.d, dig.m))):
            dig = _Digit(dig.base, dig.d, None)
        if dig.m == _ONE_SIZE:
            return {}
        if dig.m is None and dig.d == _ONE_SIZE:
            return base
        return {dig: 1}

    def _merge(self, form: dict) -> dict:
        """Adjacent digits of one base merge (see the section comment)."""
        changed = True
        while changed:
            changed = False
            digits = [k for k in form if isinstance(k, _Digit)]
            for lo in digits:
                if lo.m is None or lo.m[1] is not None:
                    continue
                for hi in digits:
                    if (hi is lo or hi.base != lo.base or hi.d != _size_mul(lo.d, lo.m)
                            or form[hi] != form[lo] * lo.m[0]):
                        continue
                    m = None if hi.m is None else _size_mul(lo.m, hi.m)
                    c = form[lo]
                    rest = {k: v for k, v in form.items() if k is not lo and k is not hi}
                    form = add_forms(rest, _times(self._simplify(_Digit(lo.base, lo.d, m)), c))
                    changed = True
                    break
                if changed:
                    break
        return form

    # -------------------------------------------------------------- bounds
    def upper(self, form: dict) -> "dict | None":
        """An exclusive upper bound (affine form in sizes) of a non-negative form, or None."""
        for fact, bound in self.facts:
            if fact == form:
                return bound
        if len(form) == 1:
            (key, c), = form.items()
            if c == 1 and isinstance(key, Var) and key in self.dom:
                ext = affine(self.dom[key])
                return ext if ext is not None and _is_size_form(ext) else None
            if c == 1 and isinstance(key, _Digit):
                return self._digit_upper(key)
        for fact, bound in self.facts:  # base < d * K from base // d < K
            if len(fact) == 1:
                (key, c), = fact.items()
                if c == 1 and isinstance(key, _Digit) and key.m is None and dict(key.base) == form:
                    if key.d[1] is None:
                        return _times(bound, key.d[0])
                    if set(bound) <= {ONE}:
                        return _times(_size_form(key.d), bound.get(ONE, 0))
        if not self._nonneg(form) or not form:
            return {ONE: 1} if not form else None
        hi = {ONE: form.get(ONE, 0) + 1}
        for key, c in form.items():
            if key is ONE:
                continue
            ub = self.upper({key: 1})
            if ub is None:
                return None
            hi = add_forms(hi, add_forms(ub, {ONE: -1}), c)
        return hi

    def _digit_upper(self, dig: _Digit) -> "dict | None":
        if dig.m is not None:
            return _size_form(dig.m)
        ub = self.upper(dict(dig.base))
        if ub is None or dig.d[1] is not None:
            return None
        d = dig.d[0]
        if all(v % d == 0 for v in ub.values()):
            return {k: v // d for k, v in ub.items()}
        return {ONE: -(-ub[ONE] // d)} if set(ub) <= {ONE} else None

    def proves(self, term, realize: BlockRealize) -> bool:
        """``term`` (``a < b``) is exactly an iterator's ``value < extent`` (both sides in
        normal form under the facts), or follows from the facts (loop extents, conjuncts
        already shown). A bound merely weaker than an iterator's domain is not enough on its
        own: it would let the block run outside that domain."""
        if not isinstance(term, LT):
            return False
        a, b = self.norm(term.a), affine(term.b)
        if a is None or b is None or not _is_size_form(b):
            return False
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if const_of(iv.dom.min) == 0 and affine(iv.dom.extent) == b and self.norm(value) == a:
                return True
        ub = self.upper(a)
        return ub is not None and _le(ub, b)


def _is_size_form(form: dict) -> bool:
    return all(k is ONE or _size_atom(k) for k in form)


def _le(a: dict, b: dict) -> bool:
    """``a <= b`` for every non-negative value of the size variables."""
    return all(v >= 0 for v in add_forms(b, a, -1).values())


def _all_implied(terms: list, realize: BlockRealize, dom: dict) -> bool:
    """Every conjunct is implied (see :func:`implied` and :meth:`_Digits.proves`); conjuncts
    already shown are facts for the others (each proven from those before it, so none
    assumes itself)."""
    digits = _Digits(dom)
    left = list(terms)
    while left:
        for t in left:
            if implied(t, realize, dom) or digits.proves(t, realize):
                break
        else:
            return False
        left.remove(t)
        if isinstance(t, LT):
            a, b = digits.norm(t.a), affine(t.b)
            if a is not None and b is not None and _is_size_form(b):
                digits.facts.append((a, b))
    return True
