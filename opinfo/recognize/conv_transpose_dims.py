"""The roles of a transposed convolution's dimensions, read from its index forms.

Data: batch ``b``, channel ``g(c) + i`` (``g(c) = c // O * I`` with groups), spatial
``(y + r + off) // s`` (or ``y + r + off``). Weight: the same channel form, the output
channel ``c`` (``c % O`` with groups), spatial ``(K - 1 - r) // d`` (or ``K - 1 - r``).
Result: ``b``, ``c`` and the ``y``. Every reduction variable is used exactly once.
"""
from __future__ import annotations

import attrs

from tir.expr import FloorDiv, FloorMod, Var

from ..affine import ONE, affine, const_of

SPATIAL = "DHW"


@attrs.define
class SpatialDim:
    """One spatial dimension: data index ``(y + r + offset) // stride``, weight index
    ``(taps - 1 - r) // dilation``."""

    data_dim: int
    y: Var
    r: Var
    stride: int
    offset: int
    taps: int = 0
    size: int = 0
    out: int = 0
    weight_dim: "int | None" = None
    dilation: "int | None" = None


@attrs.define
class Roles:
    """What a transposed convolution's dimensions are."""

    spatial: list
    groups: int
    data_layout: str
    kernel_layout: str
    out_layout: str


def _single(f) -> "object | None":
    """The atom of a form ``{atom: 1}``."""
    if len(f) == 1:
        atom, c = next(iter(f.items()))
        return atom if c == 1 and atom is not ONE else None
    return None


def _spatial(d, f, out_vars, red) -> "SpatialDim | None":
    stride, inner, atom = 1, f, _single(f)
    if isinstance(atom, FloorDiv):
        stride, inner = const_of(atom.b), affine(atom.a)
    if not stride or stride < 1 or inner is None:
        return None
    ys = [k for k in inner if isinstance(k, Var) and k in out_vars and inner[k] == 1]
    rs = [k for k in inner if isinstance(k, Var) and k in red and inner[k] == 1]
    if len(ys) != 1 or len(rs) != 1 or set(inner) - {ys[0], rs[0], ONE}:
        return None
    return SpatialDim(d, ys[0], rs[0], stride, inner.get(ONE, 0))


def _output_alone(f, out_vars) -> bool:
    """``f`` is one output variable plus a constant."""
    vs = [k for k in f if k is not ONE]
    return len(vs) == 1 and isinstance(vs[0], Var) and vs[0] in out_vars and f[vs[0]] == 1


def _channel(f, red) -> "tuple | None":
    """(reduction var, group key) of a channel form ``i``, ``c // O * I + i`` or, with one
    output channel per group, ``c * I + i`` (the key is None, the FloorDiv atom or ``c``)."""
    rs = [k for k in f if isinstance(k, Var) and k in red]
    rest = [k for k in f if k not in rs]
    if len(rs) != 1 or f[rs[0]] != 1 or ONE in f or len(rest) > 1:
        return None
    if rest and not (isinstance(rest[0], Var) or (isinstance(rest[0], FloorDiv) and isinstance(rest[0].a, Var))):
        return None
    return rs[0], (rest[0] if rest else None)


def _flip_dilation(f, sp: SpatialDim, unit: bool = False) -> "int | None":
    """The dilation when ``f`` is ``taps - 1 - r`` or ``(taps - 1 - r) // d``; with ``unit``
    (``r`` has extent 1) also when ``f`` is 0, ``-r`` folded (a ``reindex`` of the kernel's
    flip simplifies the variable away), read like the plain ``-r``: dilation 1."""
    if unit and not f:
        return 1
    d, inner, atom = 1, f, _single(f)
    if isinstance(atom, FloorDiv):
        d, inner = const_of(atom.b), affine(atom.a)
    if not d or d < 1 or inner is None:
        return None
    want = {sp.r: -1, ONE: sp.taps - 1} if sp.taps != 1 else {sp.r: -1}
    return d if inner == want else None


class _Reader:
    """Classifies the dimensions; each step returns False when the form does not fit."""

    def __init__(self, e, space, x, w):
        self.out_vars, self.extents = list(space.indices), list(space.extents)
        self.red = {iv.var: const_of(iv.dom.extent) for iv in e.axes}
        self.x, self.w = x, w
        self.batch = self.chan = self.chan_form = self.chan_red = self.group = None
        self.spatial = []

    def data(self) -> bool:
        forms = [affine(i) for i in self.x.indices]
        if None in forms:
            return False
        wforms = [affine(i) for i in self.w.indices]
        pending = []
        for d, f in enumerate(forms):
            atom, ch = _single(f), _channel(f, self.red)
            if ch is not None and f in wforms and self.chan is None:
                self.chan, self.chan_form, self.chan_red, self.group = d, f, ch[0], ch[1]
            elif isinstance(atom, Var) and atom in self.out_vars and self.batch is None:
                self.batch = d
            else:
                sp = _spatial(d, f, self.out_vars, self.red)
                if sp is None:
                    if self.batch is None or not _output_alone(f, self.out_vars):
                        return False
                    pending.append((d, f))
                    continue
                self.spatial.append(sp)
        if pending and not self._unit_taps(pending, forms):
            return False
        return self.batch is not None and self.chan is not None and 1 <= len(self.spatial) <= 3

    def _unit_taps(self, pending: list, forms: list) -> bool:
        """A spatial dimension of one tap whose variable a schedule's simplifier took out of
        the data's index (``data_pad[.., y, ..] * kernel[.., r, ..]``, ``r`` in [0, 1)): given
        back when exactly one data dimension lacks it and exactly one reduction variable of
        extent 1 is read by no data index; it is 0, so ``y + r`` reads the same."""
        used = {k for f in forms for k in f if isinstance(k, Var)}
        free = [v for v, n in self.red.items() if n == 1 and v not in used]
        if len(pending) != 1 or len(free) != 1:
            return False
        (d, f), r = pending[0], free[0]
        y = next(k for k in f if isinstance(k, Var))
        self.spatial.append(SpatialDim(d, y, r, 1, f.get(ONE, 0)))
        self.spatial.sort(key=lambda sp: sp.data_dim)
        return True

    def vars_used_once(self) -> bool:
        reds = [self.chan_red] + [sp.r for sp in self.spatial]
        outs = [_single(affine(self.x.indices[self.batch]))] + [sp.y for sp in self.spatial]
        return len(set(reds)) == len(reds) == len(self.red) and len(set(outs)) == len(outs)

    def out_channel(self) -> "Var | None":
        used = {_single(affine(self.x.indices[self.batch]))} | {sp.y for sp in self.spatial}
        rest = [v for v in self.out_vars if v not in used]
        return rest[0] if len(rest) == 1 and len(self.out_vars) == len(self.spatial) + 2 else None

    def weight(self, c) -> "dict | None":
        """Weight dim -> letter ("I", "O" or the index of a spatial dim)."""
        names = {}
        for d, idx in enumerate(self.w.indices):
            f = affine(idx)
            if f is None:
                return None
            names[d] = self._weight_role(d, f, c)
            if names[d] is None:
                return None
        return names if len(set(names.values())) == len(names) == len(self.spatial) + 2 else None

    def _weight_role(self, d, f, c):
        if f == self.chan_form:
            return "I"
        atom = _single(f)
        if atom is c or (isinstance(atom, FloorMod) and atom.a is c):
            return "O"
        if not f and self.group is c:  # c % 1, folded
            return "O"
        for k, sp in enumerate(self.spatial):
            dil = _flip_dilation(f, sp, self.red.get(sp.r) == 1)
            if dil is not None and sp.weight_dim is None:
                sp.weight_dim, sp.dilation = d, dil
                return k
        return None


def _groups(rd: _Reader, names: dict, c) -> "int | None":
    """The number of groups, after checking the channel extents agree with it."""
    cin = const_of(rd.x.buffer.shape[rd.chan])
    wdim = {v: k for k, v in names.items()}
    w_in, w_out = const_of(rd.w.buffer.shape[wdim["I"]]), const_of(rd.w.buffer.shape[wdim["O"]])
    ig = rd.red[rd.chan_red]
    cout = const_of(rd.extents[rd.out_vars.index(c)])
    if None in (cin, w_in, w_out, ig, cout) or w_in != cin or cin % ig:
        return None
    groups = cin // ig
    o_form = affine(rd.w.indices[wdim["O"]])
    if rd.group is None:
        return 1 if groups == 1 and w_out == cout and _single(o_form) is c else None
    if isinstance(rd.group, Var):  # one output channel per group
        ok = rd.group is c and rd.chan_form[c] == ig and w_out == 1 and groups == cout > 1
        return groups if ok and (not o_form or _single(o_form) is c) else None
    og = const_of(rd.group.b)
    mod = _single(o_form)
    ok = (rd.group.a is c and og == w_out and rd.chan_form[rd.group] == ig and isinstance(mod, FloorMod)
          and const_of(mod.b) == og and og * groups == cout)
    return groups if ok else None


def _sizes(rd: _Reader) -> bool:
    for sp in rd.spatial:
        sp.taps = rd.red[sp.r]
        sp.size = const_of(rd.x.buffer.shape[sp.data_dim])
        sp.out = const_of(rd.extents[rd.out_vars.index(sp.y)])
        if None in (sp.taps, sp.size, sp.out) or sp.taps < 1:
            return False
    return True


def _kernel_sizes(rd: _Reader) -> bool:
    for sp in rd.spatial:
        k = const_of(rd.w.buffer.shape[sp.weight_dim])
        if k is None or (sp.taps - 1) % sp.dilation or (sp.taps - 1) // sp.dilation + 1 != k:
            return False
    return True


def _layouts(rd: _Reader, names: dict, c) -> tuple:
    letters = SPATIAL[-len(rd.spatial):]
    data = ["N" if d == rd.batch else "C" if d == rd.chan else "" for d in range(len(rd.x.indices))]
    by_y = {}
    for k, sp in enumerate(rd.spatial):
        data[sp.data_dim] = letters[k]
        by_y[sp.y] = letters[k]
    kernel = [letters[v] if isinstance(v, int) else v for _, v in sorted(names.items())]
    b = _single(affine(rd.x.indices[rd.batch]))
    out = ["N" if v is b else "C" if v is c else by_y[v] for v in rd.out_vars]
    return "".join(data), "".join(kernel), "".join(out)


def classify(e, space, x, w) -> "Roles | None":
    """The roles of the dimensions of ``sum(x-side * w-side)``, or None."""
    rd = _Reader(e, space, x, w)
    if not (rd.data() and rd.vars_used_once() and _sizes(rd)):
        return None
    c = rd.out_channel()
    names = rd.weight(c) if c is not None else None
    if names is None or not _kernel_sizes(rd):
        return None
    groups = _groups(rd, names, c)
    if groups is None:
        return None
    return Roles(rd.spatial, groups, *_layouts(rd, names, c))
