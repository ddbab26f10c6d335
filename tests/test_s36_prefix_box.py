"""A block whose predicate runs a leading part of its domain (``reverse_compute_inline`` of a
slice into its producer: domain 13 under ``T.where(v < 12)``, writing 12 elements) is the
block over that part; other predicates that drop points still refuse the function. And a
concat whose one-wide last piece TVM's simplifier reads at index 0 (``y[i, 0]`` for
``y[i, j - 9]`` under ``9 <= j``) is still a concat."""
import numpy as np

import opinfo
import tir
from opinfo.coverage import block_realizes
from opinfo.predicates import prefix_box

HEADER = "# from tvm.script import tirx as T\n\n"


def _blocks(func):
    return [(r, loops) for r, loops in block_realizes(func.body) if r.block.name != "root"]


def _cut(pred: str, out_len: int = 12, reader: bool = False):
    body = f'''@T.prim_func
def f(x: T.Buffer(({out_len},), "float32"), out: T.Buffer(({out_len},), "float32")):
'''
    target = "tmp" if reader else "out"
    if reader:
        body += '''    tmp = T.sblock_alloc_buffer((13,))
'''
    body += f'''    for i0, i1 in T.grid(4, 4):
        with T.sblock("compute"):
            v = T.axis.spatial(13, i0 * 4 + i1)
            T.where({pred})
            {target}[v] = T.exp(x[v])
'''
    if reader:
        body += f'''    for i in range({out_len}):
        with T.sblock("copy"):
            v = T.axis.spatial({out_len}, i)
            out[v] = tmp[v]
'''
    return tir.parse(HEADER + body)


def test_a_leading_part_of_the_domain_is_the_block_over_that_part():
    func = _cut("i0 * 4 + i1 < 12 and i0 * 4 + i1 < 13")
    (op,) = opinfo.analyze(func).ops
    assert op.name == "exp" and [o.buffer for o in op.operands] == ["x"]
    x = np.random.default_rng(0).normal(size=12).astype("float32")
    np.testing.assert_allclose(tir.run(func, x), np.exp(x), rtol=1e-6)


def test_an_output_the_leading_part_leaves_unwritten_is_refused():
    func = _cut("i0 * 4 + i1 < 12", out_len=13)
    assert opinfo.analyze(func).ops == ()


def test_the_cut_domain_is_what_the_loops_run():
    func = _cut("i0 * 4 + i1 < 12")
    ((realize, loops),) = _blocks(func)
    (iv,) = prefix_box(realize, loops)
    assert int(iv.dom.extent.value) == 12
    # the whole domain run: nothing to cut (the split predicate rules say so)
    whole = _cut("i0 * 4 + i1 < 13", out_len=13)
    ((realize, loops),) = _blocks(whole)
    assert prefix_box(realize, loops) is None


def test_a_predicate_dropping_a_middle_point_still_refuses():
    func = _cut("i0 * 4 + i1 < 12 and i0 * 4 + i1 != 5")
    assert opinfo.analyze(func).ops == ()
    ((realize, loops),) = _blocks(func)
    assert prefix_box(realize, loops) is None


def test_a_reader_of_the_points_cut_off_is_refused():
    # the producer computes 12 of 13, its reader copies all 13: element 12 is never written
    func = _cut("i0 * 4 + i1 < 12", out_len=13, reader=True)
    x = np.random.default_rng(0).normal(size=13).astype("float32")
    got = tir.run(func, x)
    np.testing.assert_allclose(got[:12], np.exp(x[:12]), rtol=1e-6)
    assert opinfo.analyze(func).ops == ()


def test_a_reduction_cut_short_is_not_a_box():
    func = tir.parse(HEADER + '''@T.prim_func
def f(x: T.Buffer((13,), "float32"), out: T.Buffer((), "float32")):
    for k0, k1 in T.grid(4, 4):
        with T.sblock("x_red"):
            vk = T.axis.reduce(13, k0 * 4 + k1)
            T.where(k0 * 4 + k1 < 12)
            with T.init():
                out[()] = T.float32(0)
            out[()] = out[()] + x[vk]
''')
    ((realize, loops),) = _blocks(func)
    assert prefix_box(realize, loops) is None
    assert opinfo.analyze(func).ops == ()


def test_concat_with_a_one_wide_piece_read_at_zero():
    func = tir.parse(HEADER + '''@T.prim_func
def f(x: T.Buffer((9, 4), "float32"), y1: T.Buffer((9, 5), "float32"), y2: T.Buffer((9, 1), "float32"),
      out: T.Buffer((9, 10), "float32")):
    for f0, f1 in T.grid(3, 32):
        with T.sblock("T_concat"):
            v0 = T.axis.spatial(9, (f0 * 32 + f1) // 10)
            v1 = T.axis.spatial(10, (f0 * 32 + f1) % 10)
            T.where(f0 * 32 + f1 < 90)
            out[v0, v1] = T.if_then_else(9 <= v1, y2[v0, 0], T.if_then_else(4 <= v1, y1[v0, v1 - 4], x[v0, v1]))
''')
    (op,) = opinfo.analyze(func).ops
    assert op.name == "concat" and dict(op.attrs) == {"axis": 1}
    assert [o.buffer for o in op.operands] == ["x", "y1", "y2"]
    rng = np.random.default_rng(1)
    x, y1, y2 = (rng.normal(size=s).astype("float32") for s in ((9, 4), (9, 5), (9, 1)))
    np.testing.assert_array_equal(tir.run(func, x, y1, y2), np.concatenate([x, y1, y2], axis=1))


def test_a_wider_piece_read_at_zero_is_no_concat():
    func = tir.parse(HEADER + '''@T.prim_func
def f(x: T.Buffer((9, 4), "float32"), y1: T.Buffer((9, 5), "float32"), y2: T.Buffer((9, 2), "float32"),
      out: T.Buffer((9, 11), "float32")):
    for i, j in T.grid(9, 11):
        with T.sblock("T_concat"):
            v0, v1 = T.axis.remap("SS", [i, j])
            out[v0, v1] = T.if_then_else(9 <= v1, y2[v0, 0], T.if_then_else(4 <= v1, y1[v0, v1 - 4], x[v0, v1]))
''')
    assert all(op.name != "concat" for op in opinfo.analyze(func).ops)


def test_loops_running_a_leading_part_without_a_predicate_are_refused():
    """Found by tools/fuzz_soundness.py: ``ax1_0 * 2 + ax1_1`` over 3 x 3 runs columns 0..6
    of 9, a leading part, with no predicate to cut the domain by: the output's last two
    columns are never written, whatever the leading-part rule allows."""
    func = tir.parse(HEADER + '''@T.prim_func
def f(x: T.Buffer((2, 9), "bool"), y: T.Buffer((2, 9), "bool"), out: T.Buffer((2, 9), "bool")):
    for i in T.parallel(2):
        for j0, j1 in T.grid(3, 3):
            with T.sblock("T_logical_and"):
                vi = T.axis.spatial(2, i)
                vj = T.axis.spatial(9, j0 * 2 + j1)
                out[vi, vj] = x[vi, vj] and y[vi, vj]
''')
    info = opinfo.analyze(func)
    assert info.ops == () and info.refused is not None


def test_a_cut_that_leaves_an_output_column_unwritten_is_refused():
    # predicate cuts 13 to 12 but the output has 13 columns: the leading part is no excuse
    func = _cut("i0 * 4 + i1 < 12", out_len=13)
    assert opinfo.analyze(func).refused is not None
