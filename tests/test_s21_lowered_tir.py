"""TIR as TVM 0.27 prints it after its lowering passes (LowerInitBlock ... FlattenBuffer):
flattened views of the parameters (``x_1 = x.view(n)``, ``b = T.decl_buffer(shape,
data=x.data)``) and allocations with planning annotations. Fixtures are real TVM output of
legalized Relax ops put through those passes; each is read, printed back, run by both
engines against the op lowered by tir.topi, and refused by analyze with its reason."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import opinfo
import tir
from tests.fixture_util import FIXTURES

CASES = {
    "s21_lowered_conv2d": ("nn.conv2d", [(1, 4, 6, 6), (8, 4, 3, 3)], {"padding": [1, 1, 1, 1]}),
    "s21_lowered_sum": ("sum", [(4, 8)], {"axis": [1]}),
    "s21_lowered_softmax": ("nn.softmax", [(4, 8)], {}),
    "s21_lowered_max_pool2d": ("nn.max_pool2d", [(1, 2, 4, 4)], {"pool_size": [2, 2], "strides": [2, 2]}),
}
ENGINES = ["interp"] + (["c"] if shutil.which("gcc") else [])


def _func(name):
    (_, func), = tir.parse((FIXTURES / f"{name}.py").read_text()).prim_funcs()
    return func


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowered_function_reads_prints_back_and_runs_as_the_op(name):
    op, shapes, attrs = CASES[name]
    func = _func(name)
    text = tir.to_script(func)
    assert ".view(" in text or "data=" not in text
    assert tir.to_script(tir.parse(text)) == text
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype("float32") for s in shapes]
    want = tir.run(tir.topi.lower(op, [(s, "float32") for s in shapes], **attrs), *args)
    for engine in ENGINES:
        got = tir.run(func, *args, engine=engine)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_analyze_refuses_a_function_with_views_and_says_why():
    info = opinfo.analyze(_func("s21_lowered_conv2d"))
    assert info.ops == () and "views another buffer's storage" in info.refused


def _one(body: str, params: str = 'x: T.Buffer((4, 6), "float32"), o: T.Buffer((4, 6), "float32")'):
    return f'''
# from tvm.script import tir as T
@T.prim_func
def f({params}):
{body}
'''


def test_view_with_an_inferred_extent_runs():
    func = tir.parse(_one('''    x_1 = x.view(-1)
    o_1 = o.view(T.int64(2), -1)
    for i in range(24):
        o_1[i // 12, i % 12] = x_1[i] * T.float32(2.0)'''))
    assert "o.view(T.int64(2), T.int64(12))" in tir.to_script(func)
    x = np.arange(24, dtype="float32").reshape(4, 6)
    for engine in ENGINES:
        np.testing.assert_array_equal(tir.run(func, x, engine=engine), 2 * x)


@pytest.mark.parametrize("body, message", [
    ("    x_1 = x.view(T.int64(25))\n    o[0, 0] = x_1[0]", "more than 'x' holds"),
    ("    x_1 = x.view(-1, -1)\n    o[0, 0] = x_1[0, 0]", "at most one extent"),
    ("    x_1 = x.view(T.int64(5), -1)\n    o[0, 0] = x_1[0, 0]", "cannot infer"),
    ("    x_1 = x.view(\"int32\")\n    o[0, 0] = x_1[0]", "new extents only"),
    ('    x_1 = T.decl_buffer((13,), "float64", data=x.data)\n    o[0, 0] = x_1[0]', r"more than 'x' holds \(24 float32\)"),
    ('    x_1 = T.decl_buffer((24,), "bfloat16", data=x.data)\n    o[0, 0] = x_1[0]', "bfloat16 is held as float32"),
    ('    x_1 = T.decl_buffer((30,), data=x.data)\n    o[0, 0] = x_1[0]', "more than 'x' holds"),
    ('    x_1 = T.decl_buffer((24,), data=x)\n    o[0, 0] = x_1[0]', "data=buf.data"),
])
def test_malformed_views_are_parse_errors(body, message):
    with pytest.raises(tir.ParseError, match=message):
        tir.parse(_one(body))


def test_decl_buffer_assignment_without_data_allocates():
    func = tir.parse(_one('''    t = T.decl_buffer((24,))
    for i in range(24):
        t[i] = x[i // 6, i % 6] + T.float32(1.0)
    for i in range(24):
        o[i // 6, i % 6] = t[i]'''))
    x = np.arange(24, dtype="float32").reshape(4, 6)
    for engine in ENGINES:
        np.testing.assert_array_equal(tir.run(func, x, engine=engine), x + 1)


def test_shared_scope_allocation_as_tvm_prints_it_after_lowering():
    """A cache_read to shared memory, lowered: ``x_shared = T.alloc_shared((n,), annotations=...)``."""
    func = tir.parse(_one('''    x_1 = x.view(T.int64(24))
    o_1 = o.view(T.int64(24))
    x_shared = T.alloc_shared((T.int64(24),), annotations={"buffer_allocated_addr": [], "buffer_data_alignment": 64})
    for i in range(24):
        x_shared[i] = x_1[i]
    for i in range(24):
        o_1[i] = T.tan(x_shared[i])'''))
    text = tir.to_script(func)
    assert "x_shared = T.alloc_shared((T.int64(24),), \"float32\")" in text and tir.to_script(tir.parse(text)) == text
    x = np.linspace(-1, 1, 24, dtype="float32").reshape(4, 6)
    for engine in ENGINES:
        np.testing.assert_allclose(tir.run(func, x, engine=engine), np.tan(x), rtol=1e-6)
    with pytest.raises(tir.ParseError, match='always "shared"'):
        tir.parse(_one('    t = T.alloc_shared((24,), scope="local")\n    o[0, 0] = t[0]'))


@pytest.mark.parametrize("name, kind", [("s21_lowered_conv2d", "opaque"), ("s21_lowered_sum", "elemwise"),
                                        ("s21_lowered_softmax", "opaque"), ("s21_lowered_max_pool2d", "opaque")])
def test_kind_of_lowered_functions_is_tvms(name, kind):
    """Without blocks TVM's analyser only compares each store's indices (by identity) with the
    first store's: a lowered sum into a 1-D output stores twice at ``[ax0]`` (elemwise), a
    lowered conv2d's init and update at two ``ff * 36 + ...`` expressions (opaque)."""
    assert opinfo.analyze(_func(name)).kind == kind
