"""Blocks that store at a mixed-radix index of their variables, iterated over the buffer's
own dimension instead.

``reindex`` after ``reverse_compute_inline`` of a reshape leaves the last block storing
``T_reshape[v0, v1 * 2 + v2, v3] = T_reshape_reindex[v0, v1, v2, v3]``: two block variables
spell one position of the output. The recognizers read a store at bare variables (one per
dimension), so such a block is given one variable ``w`` over that dimension, bound to the
same loops (``w = 2 * (v1's binding) + (v2's binding)``), and its body reads ``v1`` as
``w // 2`` and ``v2`` as ``w % 2``. The loops run the same points; each point stores the same
value at the same place.

Only a block whose body is one store, whose variables of such an index are spatial, from 0,
constant in extent, used by no other index of the store, with coefficients that are the
mixed radix of their extents (the smallest 1, each the next one's times that variable's
extent) and covering the dimension exactly (the largest coefficient times its extent is the
dimension's extent).

A block storing at a reflection of a variable (``T_reverse_sequence[n - v0 - 1] = x[v0]``:
``reindex`` of a flip moves the reversal to the store) is given one variable ``w`` the same
way, bound to ``n - 1 - (v0's binding)``, its body reading ``v0`` as ``n - 1 - w``: only when
``v0`` is spatial, from 0, used by no other index of the store, and runs exactly the
dimension's extent (``n - 1 - v0`` maps it onto the dimension one to one).
"""
from __future__ import annotations

import attrs

from tir.buffer import BufferRegion, Range
from tir.expr import Add, FloorDiv, FloorMod, IntImm, Mul, Sub, Var
from tir.function import PrimFunc
from tir.functor import post_order_stmts, substitute, transform
from tir.stmt import BlockRealize, BufferStore, IterKind, IterVar

from .affine import ONE, add_forms, affine, const_of
from .probe import collect_vars


def _digits(index, ivs: dict, others: list) -> "list | None":
    """``[(iter var, coefficient, extent), ...]`` from the largest coefficient down when
    ``index`` is a mixed-radix number of spatial block variables no other index mentions
    (``others``: the variables of each other index), else None."""
    form = affine(index)
    if form is None or ONE in form or len(form) < 2:
        return None
    found = []
    for atom, coeff in form.items():
        iv = ivs.get(id(atom)) if isinstance(atom, Var) else None
        if iv is None or iv.kind != IterKind.SPATIAL or const_of(iv.dom.min) != 0 or coeff <= 0:
            return None
        ext = const_of(iv.dom.extent)
        if ext is None or ext < 2 or any(atom in o for o in others):
            return None
        found.append((iv, coeff, ext))
    found.sort(key=lambda t: -t[1])
    if found[-1][1] != 1:
        return None
    for (_, c, _), (_, c_next, e_next) in zip(found, found[1:]):
        if c != c_next * e_next:
            return None
    return found


def _reflected(index, ivs: dict, others: list, size) -> "IterVar | None":
    """The iter var ``v`` when ``index`` is ``size - 1 - v`` for a spatial block variable
    ``v`` from 0 of extent ``size`` no other index mentions, else None."""
    form = affine(index)
    if form is None:
        return None
    found = [(atom, c) for atom, c in form.items() if isinstance(atom, Var) and id(atom) in ivs]
    if len(found) != 1 or found[0][1] != -1:
        return None
    atom = found[0][0]
    iv = ivs[id(atom)]
    if iv.kind != IterKind.SPATIAL or const_of(iv.dom.min) != 0 or any(atom in o for o in others):
        return None
    ext, dim = affine(iv.dom.extent), affine(size)
    if ext is None or dim is None or ext != dim:
        return None
    rest = add_forms(form, {atom: 1}, 1)
    want = add_forms(dim, {ONE: 1}, -1)
    return iv if {k: c for k, c in rest.items() if c} == {k: c for k, c in want.items() if c} else None


def _rewrite_reflected(realize: BlockRealize) -> "BlockRealize | None":
    block = realize.block
    store = block.body
    if not isinstance(store, BufferStore) or block.init is not None or len(store.indices) != len(store.buffer.shape):
        return None
    ivs = {id(iv.var): iv for iv in block.iter_vars}
    mapping, new_vars, dims = {}, {}, {}
    for d, (index, others) in enumerate(_with_others(store)):
        iv = _reflected(index, ivs, others, store.buffer.shape[d])
        if iv is None or iv.var in mapping:
            continue
        dtype = iv.var.dtype
        w = Var(f"{iv.var.name}_r", dtype)
        last = Sub(iv.dom.extent, IntImm(dtype, 1))
        mapping[iv.var] = Sub(last, w)
        new_vars[id(iv)] = (w, last)
        dims[d] = w
    if not mapping:
        return None
    new_ivs, new_values = [], []
    for iv, v in zip(block.iter_vars, realize.iter_values):
        if id(iv) in new_vars:
            w, last = new_vars[id(iv)]
            new_ivs.append(IterVar(w, iv.dom, IterKind.SPATIAL))
            new_values.append(Sub(last, v))
        else:
            new_ivs.append(iv)
            new_values.append(v)
    return _rebuilt(realize, new_ivs, new_values, mapping, dims)


def _rewrite(realize: BlockRealize) -> "BlockRealize | None":
    got = _rewrite_reflected(realize)
    realize = got or realize
    return _rewrite_radix(realize) or got


def _rewrite_radix(realize: BlockRealize) -> "BlockRealize | None":
    block = realize.block
    store = block.body
    if not isinstance(store, BufferStore) or block.init is not None:
        return None
    ivs = {id(iv.var): iv for iv in block.iter_vars}
    bindings = {id(iv.var): v for iv, v in zip(block.iter_vars, realize.iter_values)}
    for d, (index, others) in enumerate(_with_others(store)):
        digits = _digits(index, ivs, others)
        size = const_of(store.buffer.shape[d]) if d < len(store.buffer.shape) else None
        if digits is None or size is None or digits[0][1] * digits[0][2] != size:
            continue
        first = digits[0][0]
        dtype = first.var.dtype
        w = Var(f"{first.var.name}_w", dtype)
        binding = None
        for iv, c, _ in digits:
            term = bindings[id(iv.var)] if c == 1 else Mul(bindings[id(iv.var)], IntImm(dtype, c))
            binding = term if binding is None else Add(binding, term)
        mapping = {}
        for k, (iv, c, e) in enumerate(digits):
            value = w if c == 1 else FloorDiv(w, IntImm(dtype, c))
            mapping[iv.var] = value if k == 0 else FloorMod(value, IntImm(dtype, e))
        gone = {id(iv.var) for iv, _, _ in digits}
        new_ivs, new_values = [], []
        for iv, v in zip(block.iter_vars, realize.iter_values):
            if iv is first:
                new_ivs.append(IterVar(w, Range(IntImm(dtype, 0), IntImm(dtype, size)), IterKind.SPATIAL))
                new_values.append(binding)
            elif id(iv.var) not in gone:
                new_ivs.append(iv)
                new_values.append(v)
        return _rebuilt(realize, new_ivs, new_values, mapping, {d: w})
    return None


def _with_others(store: BufferStore) -> list:
    """``(index, [the variables of each other index])`` for every index of ``store``."""
    atoms = []
    for i in store.indices:
        atoms.append(set())
        collect_vars(i, atoms[-1])
    return [(index, atoms[:d] + atoms[d + 1:]) for d, index in enumerate(store.indices)]


def _rebuilt(realize: BlockRealize, iter_vars: list, iter_values: list, mapping: dict, dims: dict) -> BlockRealize:
    """``realize`` with these block variables and bindings, its one store at the new variable
    of each dimension in ``dims`` (``{dimension: variable}``), everything else read through
    ``mapping`` (old variable -> expression of the new ones)."""
    block = realize.block
    store = block.body
    indices = tuple(dims.get(j, substitute(i, mapping)) for j, i in enumerate(store.indices))
    body = BufferStore(store.buffer, substitute(store.value, mapping), indices)
    reads = tuple(_region(r, mapping) for r in block.reads)
    writes = tuple(_region(r, mapping) for r in block.writes)
    block = attrs.evolve(block, iter_vars=tuple(iter_vars), body=body, reads=reads, writes=writes)
    return attrs.evolve(realize, iter_values=tuple(iter_values), block=block)


def _region(region: BufferRegion, mapping: dict) -> BufferRegion:
    return BufferRegion(region.buffer, tuple(Range(substitute(r.min, mapping), substitute(r.extent, mapping))
                                             for r in region.region))


def radix_stores(func: PrimFunc) -> PrimFunc:
    """``func`` with each block storing at a mixed-radix index or a reflected variable
    iterated over that dimension (see the module docstring); ``func`` itself when there is
    none."""
    new: dict = {}

    def visit(n):
        if isinstance(n, BlockRealize):
            got = _rewrite(n)
            if got is not None:
                new[id(n)] = got
    post_order_stmts(func.body, visit)
    if not new:
        return func  # spare the rewrite's walk of every expression
    # a rewritten block's body is one store: its realize comes out of the rebuild unchanged
    return transform(func, lambda n: new.get(id(n)))
