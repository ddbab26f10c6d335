"""Movement ops over a symbolic batch ``n`` in the forms TVM 0.27 prints (extents ``n * 12``,
``n + 2``, offsets ``n - v - 1``, guards ``v < n``, ``v % n`` in reshape indices), split
(several outputs), identity copies named by their compute tag, 1-D take vs gather_elements
by tag, and repeat with axis None (a flattening block first)."""
import math
from pathlib import Path

import numpy as np
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import opinfo
from opinfo.affine import const_of
import tir
from opinfo.recognize.extent import always_equal
from tir.interp import interpret

HEAD = '''# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.script import relax as R

n = TypeVar("n")
@I.ir_module
class Module:
'''


def ops_of(body: str) -> list:
    """(op, attrs) of every op of the one PrimFunc in ``body`` (indented module members)."""
    mod = tir.parse(HEAD + body)
    return [(o.name, o.to_json()["attrs"]) for _, f in mod.prim_funcs() for o in opinfo.analyze(f).ops]


def i64(v) -> str:
    return f"T.int64({v})" if isinstance(v, int) else v


def shape(dims) -> str:
    return "(" + ", ".join(i64(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def one_block(name, params, out, out_dims, tag, value, rank=None) -> str:
    """A PrimFunc of one block ``tag`` writing ``out[v_ax0, ...] = value``."""
    rank = len(out_dims) if rank is None else rank
    vs = [f"v_ax{d}" for d in range(rank)]
    axes = [f"ax{d}" for d in range(rank)]
    sig = ", ".join(f'{p}: T.Buffer({shape(d)}, "{t}")' for p, d, t in params)
    return f'''
    @T.prim_func(private=True, s_tir=True)
    def {name}({sig}, {out}: T.Buffer({shape(out_dims)}, "float32")):
        T.func_attr({{"tirx.noalias": True}})
        for {", ".join(axes)} in T.grid({", ".join(i64(d) for d in out_dims)}):
            with T.sblock("{tag}"):
                {", ".join(vs)} = T.axis.remap("{"S" * rank}", [{", ".join(axes)}])
                {out}[{", ".join(vs)}] = {value}
'''


def x_of(*dims):
    return [("x", list(dims), "float32")]


# ---------------------------------------------------------------------------- split
def split_func(in_dims, axis, sizes, tag, offsets=None) -> str:
    """``topi.split`` as TVM writes it: one block per piece, ``x[.., v + begin, ..]``."""
    outs, blocks, begin = [], [], 0
    for k, size in enumerate(sizes):
        name = tag if k == 0 else f"{tag}_{k}"
        dims = list(in_dims)
        dims[axis] = size
        off = begin if offsets is None else offsets[k]
        idx = [f"v_ax{d}" + (f" + {i64(off)}" if d == axis and off != 0 else "") for d in range(len(dims))]
        vs = ", ".join(f"v_ax{d}" for d in range(len(dims)))
        axes = ", ".join(f"ax{d}" for d in range(len(dims)))
        outs.append(f'{name}: T.Buffer({shape(dims)}, "float32")')
        blocks.append(f'''
        for {axes} in T.grid({", ".join(i64(d) for d in dims)}):
            with T.sblock("{name}"):
                {vs} = T.axis.remap("{"S" * len(dims)}", [{axes}])
                {name}[{vs}] = x[{", ".join(idx)}]''')
        begin = f"{begin} + {i64(size)}" if isinstance(size, str) or isinstance(begin, str) else begin + size
    return f'''
    @T.prim_func(private=True, s_tir=True)
    def split(x: T.Buffer({shape(in_dims)}, "float32"), {", ".join(outs)}):
        T.func_attr({{"tirx.noalias": True}}){"".join(blocks)}
'''


def test_split_sections_and_indices():
    assert ops_of(split_func([9], 0, [3, 3, 3], "T_split_sections")) == \
        [("split", {"axis": 0, "indices_or_sections": 3})]
    assert ops_of(split_func([7, 4, 9], 1, [1, 2, 1], "T_split")) == \
        [("split", {"axis": 1, "indices_or_sections": [1, 3]})]
    # ceil(10 / 3) == 4: sections 4, 4, 2
    assert ops_of(split_func([2, 10], 1, [4, 4, 2], "T_split_sections")) == \
        [("split", {"axis": 1, "indices_or_sections": 3})]


def test_split_whose_pieces_do_not_fit_the_form_abstains():
    # sections must all be ceil(N / s) but the last
    assert ops_of(split_func([8], 0, [1, 3, 4], "T_split_sections")) == []
    # a gap, an overlap, a missing tail, pieces along two axes
    assert ops_of(split_func([8], 0, [3, 3], "T_split", offsets=[0, 4])) == []
    assert ops_of(split_func([8], 0, [4, 4], "T_split", offsets=[0, 3])) == []
    assert ops_of(split_func([8], 0, [3, 3], "T_split")) == []
    # the same loops under a name that is not split's (the form would be unknown)
    assert ops_of(split_func([8], 0, [4, 4], "T_copy")) == []


def test_split_of_a_symbolic_extent():
    """split(x, 2) of (n,): pieces of ``(n + 1) // 2`` and ``n - (n + 1) // 2``."""
    half = "(n + T.int64(1)) // T.int64(2)"
    body = f'''
    @T.prim_func(private=True, s_tir=True)
    def split(x: T.Buffer((n,), "float32"), T_split_sections: T.Buffer(("{half}",), "float32"), T_split_sections_1: T.Buffer(("n - {half}",), "float32")):
        T.func_attr({{"tirx.noalias": True}})
        for ax0 in range({half}):
            with T.sblock("T_split_sections"):
                v_ax0 = T.axis.spatial({half}, ax0)
                T_split_sections[v_ax0] = x[v_ax0]
        for ax0 in range(n - {half}):
            with T.sblock("T_split_sections_1"):
                v_ax0 = T.axis.spatial(n - {half}, ax0)
                T_split_sections_1[v_ax0] = x[{half} + v_ax0]
'''
    assert ops_of(body) == [("split", {"axis": 0, "indices_or_sections": 2})]
    # n // 2 first: not the sections TVM makes (ceil first) for odd n
    assert ops_of(body.replace(f"x[{half} + v_ax0]", "x[n // T.int64(2) + v_ax0]")
                  .replace(half, "n // T.int64(2)")) == []


def test_one_piece_split_names_its_axis_only_in_1d():
    one = one_block("split", x_of(7), "T_split_sections", [7], "T_split_sections", "x[v_ax0]")
    assert ops_of(one) == [("split", {"axis": 0, "indices_or_sections": 1})]
    assert ops_of(one.replace("T_split_sections", "T_split")) == [("split", {"axis": 0, "indices_or_sections": []})]
    two = one_block("split", x_of(4, 5), "T_split_sections", [4, 5], "T_split_sections", "x[v_ax0, v_ax1]")
    assert ops_of(two) == []  # any axis


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.integers(0, 1), st.booleans())
def test_split_random_pieces(sizes, axis, as_indices):
    """Pieces in order along one axis: an index list is read back exactly; a section count
    only when the pieces are TVM's ``ceil(N / s)`` sections."""
    in_dims = [3, 3]
    in_dims[axis] = sum(sizes)
    tag = "T_split" if as_indices else "T_split_sections"
    got = ops_of(split_func(in_dims, axis, sizes, tag))
    total, s = sum(sizes), len(sizes)
    if as_indices:
        want = list(itertools_accumulate(sizes))[:-1]
        assert got == [("split", {"axis": axis, "indices_or_sections": want})]
    elif all(x == math.ceil(total / s) for x in sizes[:-1]) and sizes[-1] == total - (s - 1) * math.ceil(total / s):
        assert got == [("split", {"axis": axis, "indices_or_sections": s})]
    else:
        assert got == []


def itertools_accumulate(xs):
    out, t = [], 0
    for x in xs:
        t += x
        out.append(t)
    return out


# ---------------------------------------------------------------------------- symbolic movement
def test_flatten_of_a_symbolic_batch():
    body = one_block("reshape", x_of("n", 3, 4), "T_reshape", ["n * T.int64(12)"], "T_reshape",
                     "x[v_ax0 // T.int64(12) % n, v_ax0 % T.int64(12) // T.int64(4), v_ax0 % T.int64(4)]")
    assert ops_of(body) == [("reshape", {"shape": ["n * 12"]})]
    # the last two indices swapped: not row-major
    assert ops_of(body.replace("v_ax0 % T.int64(12) // T.int64(4), v_ax0 % T.int64(4)]",
                               "v_ax0 % T.int64(4), v_ax0 % T.int64(12) // T.int64(4)]")) == []


def test_reshape_of_a_symbolic_batch_into_constants():
    """Element counts fix n (3 * n == 27); the copy is proved with n == 9."""
    body = one_block("reshape", x_of("n", 3), "T_reshape", [1, 27], "T_reshape",
                     "x[(v_ax0 * T.int64(9) + v_ax1 // T.int64(3)) % n, v_ax1 % T.int64(3)]")
    assert ops_of(body) == [("reshape", {"shape": [1, 27]})]
    assert ops_of(body.replace("v_ax1 % T.int64(3)]", "v_ax1 % T.int64(3) // T.int64(2)]")) == []


def test_pad_of_a_symbolic_batch():
    guard = "T.int64(0) <= v_ax0 and v_ax0 < n and T.int64(0) <= v_ax1 and v_ax1 < T.int64(3)"
    body = one_block("pad", x_of("n", 3), "PadInput", ["n + T.int64(2)", 4], "PadInput",
                     f"T.if_then_else({guard}, x[v_ax0, v_ax1], T.float32(0.0))")
    assert ops_of(body) == [("nn.pad", {"pad_width": [0, 2, 0, 1], "pad_value": 0.0, "pad_mode": "constant"})]
    before = one_block("pad", x_of("n"), "PadInput", ["n + T.int64(3)"], "PadInput",
                       "T.if_then_else(T.int64(1) <= v_ax0 and v_ax0 <= n, x[v_ax0 - T.int64(1)], T.float32(-1.5))")
    assert ops_of(before) == [("nn.pad", {"pad_width": [1, 2], "pad_value": -1.5, "pad_mode": "constant"})]
    # a guard that keeps one row too many, or that ignores the padded rows, is not a pad
    assert ops_of(body.replace("v_ax0 < n", "v_ax0 <= n")) == []
    assert ops_of(body.replace("v_ax0 < n and ", "")) == []


def test_tile_flip_repeat_slice_of_a_symbolic_batch():
    tile = one_block("tile", x_of("n", 7), "T_tile", ["n * T.int64(2)", 7], "T_tile",
                     "x[v_ax0 % n, v_ax1 % T.int64(7)]")
    assert ops_of(tile) == [("tile", {"repeats": [2, 1]})]
    assert ops_of(tile.replace("n * T.int64(2)", "n + T.int64(2)")) == []  # not a whole number of copies
    flip = one_block("flip", x_of("n"), "T_reverse_sequence", ["n"], "T_reverse_sequence", "x[n - v_ax0 - T.int64(1)]")
    assert ops_of(flip) == [("flip", {"axis": 0})]
    assert ops_of(flip.replace("x[n - v_ax0 - T.int64(1)]", "x[n - v_ax0 - T.int64(2)]")) == []
    rep = one_block("repeat", x_of("n", 8), "T_repeat", ["n", 16], "T_repeat", "x[v_ax0, v_ax1 // T.int64(2)]")
    assert ops_of(rep) == [("repeat", {"repeats": 2, "axis": 1})]
    ss = one_block("strided_slice", x_of("n", 3), "T_dynamic_strided_slice_with_axes", ["n", 1],
                   "T_dynamic_strided_slice_with_axes", "x[v_ax0, v_ax1 * T.int64(2) + T.int64(1)]")
    assert ops_of(ss) == [("strided_slice", {"axes": [1], "begin": [1], "end": [2], "strides": [2]})]


def test_broadcast_over_a_symbolic_extent_needs_its_tag_when_it_copies():
    grow = one_block("broadcast_to", x_of("n", 1), "T_broadcast_to", [2, 3, 5], "T_broadcast_to",
                     "x[v_ax1, T.int64(0)]")
    assert ops_of(grow) == [("broadcast_to", {"shape": [2, 3, 5]})]
    same = one_block("broadcast_to", x_of("n", 8), "T_broadcast_to", [5, 8], "T_broadcast_to", "x[v_ax0, v_ax1]")
    assert ops_of(same) == [("broadcast_to", {"shape": [5, 8]})]
    assert ops_of(same.replace("T_broadcast_to", "T_strided_slice")) == []


def test_identity_copies_named_by_tag():
    perm = one_block("transpose", x_of("n", 4), "T_transpose", ["n", 4], "T_transpose", "x[v_ax0, v_ax1]")
    assert ops_of(perm) == [("permute_dims", {"axes": [0, 1]})]
    units = one_block("transpose", x_of(1, 1, 4), "T_transpose", [1, 1, 4], "T_transpose", "x[v_ax0, v_ax1, v_ax2]")
    assert ops_of(units) == []  # axes [0, 1, 2] or [1, 0, 2]
    tile = one_block("tile", x_of(2, 5), "T_tile", [2, 5], "T_tile", "x[v_ax0, v_ax1]")
    assert ops_of(tile) == [("tile", {"repeats": [1, 1]})]
    full = one_block("strided_slice", x_of(2, 5), "T_strided_slice_with_axes", [2, 5], "T_strided_slice_with_axes",
                     "x[v_ax0, v_ax1]")
    assert ops_of(full) == []  # which axes were sliced is not seen


def test_1d_take_and_gather_elements_by_tag():
    params = [("x", [5], "float32"), ("y", [2], "int64")]
    take = one_block("take", params, "T_take", [2], "T_take", "x[y[v_ax0]]")
    assert ops_of(take) == [("take", {"axis": 0})]
    assert ops_of(take.replace("T_take", "T_gather")) == [("gather_elements", {"axis": 0})]
    assert ops_of(take.replace("T_take", "T_copy")) == []


def test_repeat_with_axis_none_reads_a_flattening_block():
    body = '''
    @T.prim_func(private=True, s_tir=True)
    def repeat(x: T.Buffer((T.int64(2), T.int64(3)), "float32"), T_repeat: T.Buffer((T.int64(12),), "float32")):
        T.func_attr({"tirx.noalias": True})
        T_reshape = T.sblock_alloc_buffer((T.int64(6),))
        for ax0 in range(T.int64(6)):
            with T.sblock("T_reshape"):
                v_ax0 = T.axis.spatial(T.int64(6), ax0)
                T_reshape[v_ax0] = x[v_ax0 % T.int64(6) // T.int64(3), v_ax0 % T.int64(3)]
        for ax0 in range(T.int64(12)):
            with T.sblock("T_repeat"):
                v_ax0 = T.axis.spatial(T.int64(12), ax0)
                T_repeat[v_ax0] = T_reshape[v_ax0 // T.int64(2)]
'''
    assert ops_of(body) == [("repeat", {"repeats": 2, "axis": None})]
    # the flattening block transposes: not a flatten
    assert ops_of(body.replace("x[v_ax0 % T.int64(6) // T.int64(3), v_ax0 % T.int64(3)]",
                               "x[v_ax0 % T.int64(2), v_ax0 // T.int64(2)]")) == []


# ---------------------------------------------------------------------------- always_equal
N = sympy.Dummy("n", integer=True)


@st.composite
def quasi_linear(draw):
    terms = []
    for _ in range(draw(st.integers(1, 3))):
        a, b = draw(st.integers(-3, 3)), draw(st.integers(-4, 4))
        q = draw(st.integers(1, 5))
        kind = draw(st.sampled_from(["lin", "floor", "mod"]))
        c = draw(st.integers(-3, 3))
        inner = a * N + b
        part = inner if kind == "lin" else sympy.floor(inner / q) if kind == "floor" else sympy.Mod(inner, q)
        terms.append(c * part)
    return sympy.Add(*terms)


@settings(max_examples=150, deadline=None)
@given(quasi_linear(), quasi_linear())
def test_always_equal_agrees_with_every_value(a, b):
    """Proved equal only when equal at every n (checked far past the period), and two
    expressions equal at every n of that range are proved equal."""
    same = all((a - b).subs(N, k) == 0 for k in range(1, 400))
    assert always_equal(a, b) == same


def test_concat_along_a_symbolic_axis():
    params = [("x", ["n", 6], "float32"), ("y", [3, 6], "float32")]
    body = one_block("concatenate", params, "T_concat", ["n + T.int64(3)", 6], "T_concat",
                     "T.if_then_else(T.int64(0) <= v_ax0 - n, y[v_ax0 - n, v_ax1], x[v_ax0, v_ax1])")
    assert ops_of(body) == [("concat", {"axis": 0})]
    # the switch one row late, or the second input read from its start too late
    assert ops_of(body.replace("T.int64(0) <= v_ax0 - n,", "T.int64(1) <= v_ax0 - n,")) == []
    assert ops_of(body.replace("y[v_ax0 - n, v_ax1]", "y[v_ax0 - n - T.int64(1), v_ax1]")) == []


def test_reshape_keeping_a_symbolic_leading_axis():
    """(n, 3, 4) -> (n * 2, 6) and -> (n, 12): the leading extents never weigh a position."""
    halves = one_block("reshape", x_of("n", 3, 4), "T_reshape", ["n * T.int64(2)", 6], "T_reshape",
                       "x[(v_ax0 * T.int64(6) + v_ax1) // T.int64(12) % n, (v_ax0 * T.int64(6) + v_ax1) % T.int64(12)"
                       " // T.int64(4), (v_ax0 * T.int64(6) + v_ax1) % T.int64(4)]")
    assert ops_of(halves) == [("reshape", {"shape": ["n * 2", 6]})]
    rows = one_block("reshape", x_of("n", 3, 4), "T_reshape", ["n", 12], "T_reshape",
                     "x[v_ax0, v_ax1 // T.int64(4), v_ax1 % T.int64(4)]")
    assert ops_of(rows) == [("reshape", {"shape": ["n", 12]})]
    # the last index not carried through the row (6 is not a multiple of 4), or rows read
    # from the wrong half
    assert ops_of(halves.replace("(v_ax0 * T.int64(6) + v_ax1) % T.int64(4)]", "v_ax1 % T.int64(4)]")) == []
    assert ops_of(halves.replace("(v_ax0 * T.int64(6) + v_ax1) // T.int64(12) % n",
                                 "(v_ax0 * T.int64(6) + v_ax1 + T.int64(6)) // T.int64(12) % n")) == []


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3), st.integers(0, 3), st.integers(0, 2), st.integers(-1, 1))
def test_pad_widths_of_a_symbolic_axis(before, after, cols, slip):
    """Any widths on the symbolic axis (and a constant one) are read back; a guard off by
    ``slip`` rows at either end is not a pad."""
    lo, hi = before + (slip if slip < 0 else 0), before + (slip if slip > 0 else 0)
    guard = f"T.int64({lo}) <= v_ax0 and v_ax0 < n + T.int64({hi}) and v_ax1 < T.int64(3)"
    idx = f"v_ax0 - T.int64({before})" if before else "v_ax0"
    body = one_block("pad", x_of("n", 3), "PadInput", [f"n + T.int64({before + after})", 3 + cols], "PadInput",
                     f"T.if_then_else({guard}, x[{idx}, v_ax1], T.float32(1.0))")
    got = ops_of(body)
    widths = [before, after, 0, cols]
    if slip == 0 and any(widths):
        assert got == [("nn.pad", {"pad_width": widths, "pad_value": 1.0, "pad_mode": "constant"})]
    elif (slip < 0 and before == 0 or slip > 0 and after == 0) and any(widths):
        # a bound past the loop's own range says nothing: still the pad
        assert got == [("nn.pad", {"pad_width": widths, "pad_value": 1.0, "pad_mode": "constant"})]
    else:
        assert got == []


# ---------------------------------------------------------------------------- strided_slice of a symbolic axis
SLICES = Path(__file__).parent / "fixtures" / "strided_slice_symbolic.py"
SLICED = {  # PrimFunc of the fixture -> the attributes read back (None: abstains)
    "brief": {"axes": [0, 1, 2, 3], "begin": [3, 1, 0, 2], "end": [4, 4, 1, 3], "strides": [1, 1, 1, 1]},
    "neg_begin_stride2": {"axes": [0], "begin": [-12], "end": [1], "strides": [2]},
    "neg_stride_neg_end": {"axes": [0], "begin": [7], "end": [-4], "strides": [-1]},
    "neg_stride_neg_both": {"axes": [0, 1], "begin": [-6, 2], "end": [-11, 3], "strides": [-1, 1]},
    # ends 1, 2 and 3 take the same rows by stride 3; TVM wrote T.min(1, n) in the extent
    "stride3_end_written": {"axes": [0, 1], "begin": [0, 3], "end": [1, 6], "strides": [3, 1]},
    # the extent simplified to T.max(T.min(10, n), 0): the end is read from the count alone
    "neg_stride_simplified": {"axes": [0], "begin": [-1], "end": [-11], "strides": [-1]},
    "empty": None,  # begin 6, end 1: no element for any n, so any end would do
    "end_simplified_away": None,  # ends -2 and -3 take the same rows, and neither is written
    # axis 2 was listed whole (begin 0, end 3): invisible, reported as the constant reader does
    "whole_axis_listed": {"axes": [0], "begin": [1], "end": [4], "strides": [2]},
}


def slice_funcs(text=None) -> dict:
    mod = tir.parse(SLICES.read_text() if text is None else text)
    return dict(mod.prim_funcs())


def test_strided_slice_bounds_read_from_tvm_clamps():
    """Read with the importers' convention (``conventions=True``: an axis read whole is not
    listed); on its own a slice with a constant axis read whole abstains, for that axis may
    have been listed (``whole_axis_listed`` was)."""
    for name, func in slice_funcs().items():
        ops = [(o.name, o.to_json()["attrs"]) for o in opinfo.analyze(func, conventions=True).ops]
        assert ops == ([] if SLICED[name] is None else [("strided_slice", SLICED[name])]), name
        alone = opinfo.analyze(func).ops
        whole = any(const_of(e) is not None and d not in (SLICED[name] or {}).get("axes", ())
                    for d, e in enumerate(func.buffer_map[func.params[0]].shape))
        assert (alone == ()) if whole or SLICED[name] is None else len(alone) == 1, name


def test_strided_slice_read_back_computes_what_tvm_lowered():
    """The interpreter runs TVM's function for many ``n``; numpy slices with the attributes read."""
    rng = np.random.default_rng(0)
    for name, func in slice_funcs().items():
        attrs = SLICED[name]
        if attrs is None:
            continue
        rest = [int(e.value) for e in func.buffer_map[func.params[0]].shape[1:]]
        for n in range(1, 16):
            x = rng.standard_normal((n, *rest)).astype("float32")
            index = [slice(None)] * x.ndim
            for a, b, e, s in zip(attrs["axes"], attrs["begin"], attrs["end"], attrs["strides"]):
                index[a] = slice(b, e, s)
            want = x[tuple(index)]
            got = np.zeros(want.shape, "float32")
            if want.size:
                interpret(func, x, got)
            assert np.array_equal(got, want), (name, n)


def test_strided_slice_bounds_that_disagree_abstain():
    text = SLICES.read_text()
    # the read starts at row 2 while the extent counts from row 3
    moved = text.replace("x[T.min(T.int64(3), n) + v_ax0,", "x[T.min(T.int64(2), n) + v_ax0,")
    assert ops_of_func(slice_funcs(moved)["brief"]) == []
    # among the equivalent ends 1, 2, 3 the one written is read
    written = text.replace("(T.min(T.int64(1), n) + T.int64(2) - T.min(T.int64(0), n)) // T.int64(3)",
                           "(T.min(T.int64(2), n) + T.int64(2) - T.min(T.int64(0), n)) // T.int64(3)")
    assert ops_of_func(slice_funcs(written)["stride3_end_written"]) == [
        ("strided_slice", {"axes": [0, 1], "begin": [0, 3], "end": [2, 6], "strides": [3, 1]})]
    # an extent one row longer than the clamped rows allow (no end gives that count)
    long = text.replace("T.min(T.int64(4), n) - T.min(T.int64(3), n)",
                        "T.min(T.int64(4), n) - T.min(T.int64(3), n) + T.int64(1)")
    assert ops_of_func(slice_funcs(long)["brief"]) == []


def ops_of_func(func) -> list:
    return [(o.name, o.to_json()["attrs"]) for o in opinfo.analyze(func).ops]
