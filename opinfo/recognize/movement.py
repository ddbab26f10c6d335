"""Data movement that reads one element per output element straight from its data:
permute_dims, the reshape family (reshape, squeeze, expand_dims, broadcast_to), strided_slice,
flip, tile and take. The recognizer reads the index map (affine forms over the output
variables) and checks it. Selects over loads (nn.pad, concat, stack) are read by
:mod:`.movement_select`, the row-major proof of a reshape by :mod:`.movement_reshape`."""
from __future__ import annotations

from tir.expr import Add, BufferLoad, Call, Cast, FloorMod, Max, Min, Mod, Select, Sub

from ..affine import const_of
from ..semantic import Inlined
from ..copy_tags import TAKE_OR_GATHER
from .common import Match, Space, strip
from .extent import always_equal, sym
from .movement_index import affine_terms, const_extents, data_operand, load_extents, pure_space
from .movement_reshape import reshape_ok
from .movement_select import match_select_movement
from .movement_slice import whole_axes_assumed
from .pad_modes import match_pad_modes
from . import symbolic
from ..tags import tags


def match_movement(expr, space: Space, ctx) -> "Match | None":
    """One of the ops above (or, for a select, of :mod:`.movement_select`), reading
    parameters only."""
    e = strip(expr)
    if not pure_space(space):
        return None
    if isinstance(e, BufferLoad) and ctx.is_param(e.buffer):
        return _take(e, space, ctx) or _as_tile(_affine_copy(e, space, flip_tagged(ctx)), e, space, ctx) \
            or _mod_copy(e, space) or match_pad_modes(e, space, ctx)
    if isinstance(e, Call) and e.op == "if_then_else" or isinstance(e, Select):
        return match_select_movement(e, space, ctx)
    return None


def match_intermediate_movement(expr, space: Space, ctx) -> "Match | None":
    """A copy-like op (permute_dims, reshape family, strided_slice, flip, tile) whose data is
    an intermediate buffer of a fused kernel, read at other indices than the output's.
    Tried after the structural recognizers, which own such copies inside their ops
    (group_norm's closing reshape)."""
    e = expr
    while isinstance(e, Inlined) and len(e.indices) == space.rank and all(
            a is b for a, b in zip(e.indices, space.indices)) and all(
            _same_extent(n, x) for n, x in zip(e.buffer.shape, space.extents)):  # not a leading slice
        e = e.value
    if not isinstance(e, Inlined) or not pure_space(space):
        return None
    return _affine_copy(e, space) or _mod_copy(e, space)


def _as_tile(m: "Match | None", load, space: Space, ctx) -> "Match | None":
    """A broadcast_to reading of a block TVM tagged as tile's (``T_tile``) that adds leading
    axes, as that tile: every axis a repeat of one or of an axis of extent 1 (``v % 1`` is 0),
    so no axis is read modulo its extent (what :func:`_tile` reads). Its repeats are the
    output's extents over the data's (ones prepended), and have the output's rank: a tile
    adding axes takes as many repeats as the result has axes. With no axis added, how many
    leading ones the repeats held is not seen: the broadcast_to reading stands (and the tag
    makes :mod:`opinfo.copy_tags` abstain)."""
    if m is None or m.name != "broadcast_to" or space.rank <= len(load.indices) or "T_tile" not in tags(ctx.sem.func):
        return m
    out = const_extents(space)
    ins = [1] * (space.rank - len(load.indices)) + [const_of(e) for e in load.buffer.shape]
    if None in out or None in ins or any(i != 1 and i != o for i, o in zip(ins, out)):
        return m
    return Match("tile", {"repeats": [o // i for i, o in zip(ins, out)]}, data_operand(load, space))


def flip_tagged(ctx) -> bool:
    """Whether the function's only copy-like compute tag is flip's (``T_reverse_sequence``):
    a schedule that rebuilt the block from its loops (dlight) writes flip's ``n - 1 - v`` as
    ``v * -1 + (n - 1)``, the form of a reversing strided_slice, whose tag it does not have."""
    found = {t for t in tags(ctx.sem.func) if t.startswith("T_reverse_sequence") or t.startswith("T_strided_slice")}
    return found == {"T_reverse_sequence"}


def _affine_copy(load, space, tagged_flip: bool = False) -> "Match | None":
    t = affine_terms(load, space)
    if t is None:
        return None
    ine = load_extents(load)
    used = [j for j, _, _ in t if j is not None]
    if len(set(used)) != len(used):
        return None
    plain = all(j is None and b == 0 and ine[d] == 1 or (a, b) == (1, 0) and j is not None
                and _same_extent(load.buffer.shape[d], space.extents[j])
                for d, (j, a, b) in enumerate(t))
    if plain and used == sorted(used):
        return _broadcast_family(load, space, t)
    if used == sorted(used) and _broadcast_whole(load, space, t):
        m = _broadcast_family(load, space, t)
        return m if m is not None and m.name == "broadcast_to" else None
    if plain and len(t) == space.rank and all(j is not None for j, _, _ in t):
        axes = [0] * space.rank
        for d, (j, _, _) in enumerate(t):
            axes[j] = d
        return Match("permute_dims", {"axes": axes}, data_operand(load, space))
    if len(t) == space.rank and all(j == d for d, (j, _, _) in enumerate(t)):
        return _slice_or_flip(load, space, t, tagged_flip)
    return None


def _same_extent(a, b) -> bool:
    """Whether two extents are equal (constants, or the same symbolic expression): a
    dimension read whole, not sliced."""
    ca, cb = const_of(a), const_of(b)
    if ca is not None or cb is not None:
        return ca == cb
    return a is b or a == b or always_equal(sym(a), sym(b))


def _broadcast_whole(load, space, t) -> bool:
    """Each input dimension is read whole by an output one, or at 0 when it has extent 1,
    where an input extent that is symbolic against a constant output extent is taken as
    that extent: broadcast_to over a symbolic dimension assumes it (TVM reads ``x[v]``
    unless the dimension is 1). Only a growing broadcast_to is named on this ground."""
    ine = load_extents(load)
    return all(j is None and b == 0 and ine[d] == 1 or (a, b) == (1, 0) and j is not None
               and (_same_extent(load.buffer.shape[d], space.extents[j])
                    or ine[d] is None and const_of(space.extents[j]) is not None)
               for d, (j, a, b) in enumerate(t))


def _broadcast_family(load, space, t):
    oute = const_extents(space)
    R, r = space.rank, len(t)
    aligned = all(j is None or j == R - r + d for d, (j, _, _) in enumerate(t))
    used = {j for j, _, _ in t if j is not None}
    grows = any(oute[j] != 1 for j in range(R) if j not in used) or \
        any(j is None and oute[R - r + d] != 1 for d, (j, _, _) in enumerate(t) if R - r + d >= 0)
    # broadcast_to never lowers the rank (a (1, 1, 1) tensor is no broadcast_to of shape (2,):
    # repeat with axis None flattens it first)
    if aligned and r <= R and (grows or (R == r and all(j == d for d, (j, _, _) in enumerate(t)))):
        return Match("broadcast_to", {"shape": [s if s is not None else symbolic.extent_text(x) for s, x in
                                                zip(oute, space.extents)]}, data_operand(load, space))
    if any(oute[j] != 1 for j in range(R) if j not in used):
        return None
    squeezed = [d for d, (j, _, _) in enumerate(t) if j is None]
    new = [j for j in range(R) if j not in used]
    if squeezed and not new:
        return Match("squeeze", {"axis": squeezed}, data_operand(load, space))
    if new and not squeezed:
        return Match("expand_dims", {"axis": new}, data_operand(load, space))
    return Match("reshape", {"shape": oute}, data_operand(load, space))


def _slice_or_flip(load, space, t, tagged_flip: bool = False):
    ine, oute = load_extents(load), const_extents(space)
    changed = [d for d, (j, a, b) in enumerate(t)
               if (a, b) != (1, 0) or not _same_extent(load.buffer.shape[d], space.extents[d])]
    if any(ine[d] is None or oute[d] is None for d in changed):
        return None  # a symbolic dimension is only ever read whole
    if any(oute[d] == 0 for d in changed):
        return None  # an empty slice: every end at or before its begin prints the same
    # TVM writes flip's index ``n - 1 - v`` (a strided_slice with stride -1 writes ``v * -1 + b``)
    flips = [d for d in changed if t[d][1] == -1 and t[d][2] == ine[d] - 1 and oute[d] == ine[d]
             and (isinstance(load.indices[d], Sub) or tagged_flip)]
    if flips and len(flips) == len(changed) == 1:
        return Match("flip", {"axis": flips[0]}, data_operand(load, space))
    if any(t[d][1] <= 0 for d in changed):
        # A negative stride: x[:, 4:1:-1] and x[:, -2:-5:-1] are the same loops, and the
        # frameworks write reversals with negative begin/end (ONNX's starts=-1), unlike the
        # non-negative begin the positive strides of the corpus use: no convention to follow.
        return None
    begin = [t[d][2] for d in changed]
    strides = [t[d][1] for d in changed]
    end = [t[d][2] + t[d][1] * (oute[d] - 1) + 1 for d in changed]
    # a stride above one stopping short of the axis' end: every end up to one stride past
    # the last element reads the same (the convention: one past it; importers: any)
    short = any(s > 1 and e < ine[d] for d, s, e in zip(changed, strides, end))
    return Match("strided_slice", {"axes": changed, "begin": begin, "end": end, "strides": strides},
                 data_operand(load, space), unconventional=("end",) if short else (),
                 assumed=whole_axes_assumed(ine, changed))



def _mod_copy(load, space) -> "Match | None":
    tile = _tile(load, space)
    if tile is not None:
        return tile
    if reshape_ok(load, space):
        shape = [c if c is not None else symbolic.extent_text(e) for c, e in zip(const_extents(space), space.extents)]
        return Match("reshape", {"shape": shape}, data_operand(load, space))
    return None


def _tile(load, space):
    """``x[v % n, ..]`` over the trailing output axes (``n`` the data's extent, maybe
    symbolic): repeats are the whole ratios of the extents, constant leading axes new."""
    R, r = space.rank, len(load.indices)
    if r > R:
        return None
    ine = [sym(e) for e in load.buffer.shape]
    oute = [sym(e) for e in space.extents]
    reps = [const_of(e) for e in space.extents[:R - r]]
    moded, unit = False, False
    for d, idx in enumerate(load.indices):
        o = space.indices[R - r + d]
        if const_of(idx) == 0 and const_of(load.buffer.shape[d]) == 1:
            # a data axis of extent 1: TVM simplifies ``v % 1`` to 0 whatever the repeat
            reps.append(const_of(space.extents[R - r + d]))
            unit = True
            continue
        if idx is o and always_equal(oute[R - r + d], ine[d]):
            # a repeat of one: a schedule that splits the axis proves ``v % n`` is ``v``
            reps.append(1)
            continue
        if not (isinstance(idx, FloorMod) and idx.a is o and always_equal(sym(idx.b), ine[d])):
            return None
        moded = True
        reps.append(symbolic.ratio(oute[R - r + d], ine[d]))
    if None in reps or not moded or (unit and all(r == 1 for r in reps)):
        # no axis read modulo its extent: a broadcast_to reads the same; nothing repeated: a
        # copy, which reshape's reading (tried next) names as TVM's tags say
        return None
    return Match("tile", {"repeats": reps}, data_operand(load, space))


def _take(load, space, ctx):
    nested = [d for d, i in enumerate(load.indices) if _take_index(i, load.buffer.shape[d], ctx) is not None]
    if len(nested) != 1:
        return None
    d = nested[0]
    ind, mode = _take_index(load.indices[d], load.buffer.shape[d], ctx)
    # take's output dimensions are the data's before the axis, the indices', the data's after
    # it, each read once; gather_elements reads data and indices at the same positions instead
    order = list(load.indices[:d]) + list(ind.indices) + list(load.indices[d + 1:])
    if len(order) != space.rank or not all(i is o for i, o in zip(order, space.indices)):
        return None
    if mode == "flat":
        # TVM's take with axis=None (1-D data only) reads x[y % n] in mode "fast"
        return Match("take", {"axis": None}, (("data", load, space), ("indices", ind, space)))
    if mode.startswith("flat-"):
        return Match("take", {"axis": None, "mode": mode[5:]}, (("data", load, space), ("indices", ind, space)))
    if mode != "fast":
        # 1-D data: axis=None and axis=0 print the very same clip / wrap index. Importers
        # write axis=0 (ONNX Gather always has an axis; TVM's ONNX frontend reads one
        # dimension of a shape tensor with take(.., axis=0, mode="wrap")): a convention
        assumed = ("axis",) if len(load.indices) == 1 else ()
        return Match("take", {"axis": d, "mode": mode}, (("data", load, space), ("indices", ind, space)),
                     assumed)
    name = "take"
    if len(load.indices) == 1 and len(ind.indices) == 1:
        # 1-D data and indices: gather_elements(axis=0) computes exactly the same; a
        # function of this one block is named by its compute tag (copy_tags.settle)
        if len(ctx.sem.stages) != 1:
            return None
        name = TAKE_OR_GATHER
    return Match(name, {"axis": d}, (("data", load, space), ("indices", ind, space)))


def _take_index(e, n, ctx) -> "tuple | None":
    """(indices load, mode) when ``e`` is TVM's take index into a dimension of extent ``n``:
    ``y[..]`` (mode fast), ``min(max(0, y[..]), n - 1)`` (clip), ``truncmod(truncmod(y[..], n)
    + n, n)`` (wrap), ``floormod(y[..], n)`` (fast with axis=None: "flat"), ``floormod`` of a
    clip or wrap index (axis=None: "flat-clip", "flat-wrap")."""
    def extent(x, k):
        return always_equal(sym(x), sym(n) + k) if sym(n) is not None else False

    if isinstance(e, Min) and isinstance(e.a, Max) and extent(e.b, -1):
        lo, y = (e.a.a, e.a.b) if const_of(e.a.a) == 0 else (e.a.b, e.a.a)
        got = _index_load(y, ctx) if const_of(lo) == 0 else None
        return (got, "clip") if got is not None else None
    if isinstance(e, Mod) and extent(e.b, 0) and isinstance(e.a, Add) and extent(e.a.b, 0) \
            and isinstance(e.a.a, Mod) and extent(e.a.a.b, 0):
        got = _index_load(e.a.a.a, ctx)
        return (got, "wrap") if got is not None else None
    if isinstance(e, FloorMod) and extent(e.b, 0):
        got = _index_load(e.a, ctx)
        if got is not None:
            return got, "flat"
        inner = _take_index(e.a, n, ctx)
        # axis=None's flattening modulo left around a clip / wrap index (a symbolic extent
        # keeps it; a constant one lets TVM drop it, and axis 0 prints the same)
        return (inner[0], "flat-" + inner[1]) if inner is not None and inner[1] in ("clip", "wrap") else None
    got = _index_load(e, ctx)
    return (got, "fast") if got is not None else None


def _index_load(e, ctx):
    while isinstance(e, Cast):
        e = e.value
    return e if isinstance(e, BufferLoad) and ctx.is_param(e.buffer) else None
