"""Forms TVM 0.27 prints for the ONNX model zoo's light models (other than ResNet-50):
unsimplified reshape indices, LRN's squeeze of a 5-D tensor, constants printed as
``metadata[...]`` references, a file holding one bare PrimFunc."""
import json
import subprocess
import sys

import numpy as np
import pytest

import opinfo
import tir
from opinfo.bounded import bounded_form
from tir.expr import Var

HEAD = "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n# from tvm.script import relax as R\n"

SHUFFLE = HEAD + '''
@T.prim_func(private=True, s_tir=True)
def reshape1(lv14: T.Buffer((T.int64(1), T.int64(112), T.int64(56), T.int64(56)), "float32"), T_reshape: T.Buffer((T.int64(1), T.int64(4), T.int64(28), T.int64(56), T.int64(56)), "float32")):
    T.func_attr({"tirx.noalias": True})
    for ax0, ax1, ax2, ax3, ax4 in T.grid(T.int64(1), T.int64(4), T.int64(28), T.int64(56), T.int64(56)):
        with T.sblock("T_reshape"):
            v_ax0, v_ax1, v_ax2, v_ax3, v_ax4 = T.axis.remap("SSSSS", [ax0, ax1, ax2, ax3, ax4])
            T.reads(lv14[T.int64(0), (v_ax1 * T.int64(28) + (v_ax4 // T.int64(56) + v_ax3) // T.int64(56) + v_ax2) % T.int64(112), (v_ax4 // T.int64(56) + v_ax3) % T.int64(56), v_ax4 % T.int64(56)])
            T.writes(T_reshape[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4])
            T_reshape[v_ax0, v_ax1, v_ax2, v_ax3, v_ax4] = lv14[T.int64(0), (v_ax1 * T.int64(28) + (v_ax4 // T.int64(56) + v_ax3) // T.int64(56) + v_ax2) % T.int64(112), (v_ax4 // T.int64(56) + v_ax3) % T.int64(56), v_ax4 % T.int64(56)]
'''

SQUEEZE = HEAD + '''
@T.prim_func(private=True, s_tir=True)
def squeeze(lv6: T.Buffer((T.int64(1), T.int64(1), T.int64(96), T.int64(54), T.int64(54)), "float32"), T_squeeze: T.Buffer((T.int64(1), T.int64(96), T.int64(54), T.int64(54)), "float32")):
    T.func_attr({"tirx.noalias": True})
    for ax0, ax1, ax2, ax3 in T.grid(T.int64(1), T.int64(96), T.int64(54), T.int64(54)):
        with T.sblock("T_squeeze"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T.reads(lv6[v_ax0, T.int64(0), v_ax1, v_ax2, v_ax3])
            T.writes(T_squeeze[v_ax0, v_ax1, v_ax2, v_ax3])
            T_squeeze[v_ax0, v_ax1, v_ax2, v_ax3] = lv6[v_ax0, T.int64(0), v_ax1, v_ax2, v_ax3]
'''

METADATA = HEAD + '''
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def multiply(x: T.Buffer((T.int64(2), T.int64(3)), "float32"), c: T.Buffer((T.int64(3),), "float32"), T_multiply: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        T.func_attr({"tirx.noalias": True})
        for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
            with T.sblock("T_multiply"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T_multiply[v_ax0, v_ax1] = x[v_ax0, v_ax1] * c[v_ax1]

    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.multiply, (x, metadata["ir.GenericConst"][0]), out_ty=R.Tensor((2, 3), dtype="float32"))
            R.output(gv)
        return gv

# Metadata omitted. Use show_meta=True in script() method to show it.
'''


def _ops(text):
    return [(o.name, o.attrs.to_json() if hasattr(o.attrs, "to_json") else dict(o.attrs))
            for o in opinfo.analyze(tir.parse(text)).ops]


def test_unsimplified_reshape_index_is_proved_on_any_grid_size():
    # 351232 points: beyond the exhaustive grid check; the bounded forms prove it
    (name, attrs), = _ops(SHUFFLE)
    assert name == "reshape" and list(attrs["shape"]) == [1, 4, 28, 56, 56]


def test_wrong_reshape_index_is_not_proved():
    bad = SHUFFLE.replace("v_ax4 % T.int64(56)]", "(v_ax4 + T.int64(1)) % T.int64(56)]")
    assert _ops(bad) == []


def test_bounded_form_reduces_div_mod_on_ranges():
    a, b = Var("a", tir.dtype.int64), Var("b", tir.dtype.int64)
    e = tir.parse(SHUFFLE)  # only for the dtype of its index vars
    del e
    from tir.expr import Add, FloorDiv, FloorMod, IntImm, Mul
    i64 = tir.dtype.int64
    c = lambda v: IntImm(i64, v)
    ranges = {a: (0, 3), b: (0, 27)}
    # (a * 28 + b) // 28 == a and % 28 == b when b < 28
    assert bounded_form(FloorDiv(Add(Mul(a, c(28)), b), c(28)), ranges) == {a: 1}
    assert bounded_form(FloorMod(Add(Mul(a, c(28)), b), c(28)), ranges) == {b: 1}
    # 4 * (b // 4) + b % 4 == b
    assert bounded_form(Add(Mul(FloorDiv(b, c(4)), c(4)), FloorMod(b, c(4))), ranges) == {b: 1}
    # b // 4 stays a div atom (b spans several blocks)
    assert len(bounded_form(FloorDiv(b, c(4)), ranges)) == 1 and bounded_form(FloorDiv(b, c(4)), ranges) != {b: 1}


def test_squeeze_of_unit_dimension_is_not_read_as_packed():
    (name, attrs), = _ops(SQUEEZE)
    assert name == "squeeze" and list(attrs["axis"]) == [1]


def test_metadata_constants_parse_typed_from_the_callee():
    mod = tir.parse(METADATA)
    (b,) = mod["main"].bindings
    const = b.value.args[1]
    assert const.ref == 'metadata["ir.GenericConst"][0]' and const.data is None
    assert [int(d.value) for d in const.type.shape] == [3]
    assert "metadata[\"ir.GenericConst\"][0]" in tir.script(mod) if hasattr(tir, "script") else True
    info = opinfo.analyze_module(mod)
    assert [o.name for o in info["multiply"].ops] == ["multiply"]


def test_running_a_module_with_omitted_constants_names_them(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(METADATA)
    x = tmp_path / "in.npz"
    np.savez(x, np.ones((2, 3), np.float32))
    r = subprocess.run([sys.executable, "-m", "opinfo", "run", str(p), "--inputs", str(x), "-o", str(tmp_path / "o.npz")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "metadata" in r.stderr, r.stderr


def test_analyze_reads_a_file_with_one_bare_prim_func(tmp_path):
    p = tmp_path / "sq.py"
    p.write_text(SQUEEZE)
    r = subprocess.run([sys.executable, "-m", "opinfo", "analyze", str(p), "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert [o["op"] for f in rec["functions"] for o in f["ops"]] == ["squeeze"]


COPY = HEAD + '''
@T.prim_func(private=True, s_tir=True)
def f(x: T.Buffer((T.int64(2),), "float32"), out: T.Buffer((T.int64(1), T.int64(2)), "float32")):
    T.func_attr({"tirx.noalias": True})
    for ax0, ax1 in T.grid(T.int64(1), T.int64(2)):
        with T.sblock("TAG"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            out[v_ax0, v_ax1] = x[v_ax1 % T.int64(2)]
'''


@pytest.mark.parametrize("tag,want", [("T_reshape", "reshape"), ("T_tile", "tile"), ("expand_dims", "reshape"),
                                      ("T_broadcast_to", None), ("T_transpose", None), ("compute", None)])
def test_order_preserving_copy_is_named_by_its_compute_tag(tag, want):
    """(2,) -> (1, 2) in row-major order is reshape, expand_dims or tile by ones: the loops
    cannot tell; TVM's block name can. Any other tag abstains."""
    got = _ops(COPY.replace("TAG", tag))
    assert [n for n, _ in got] == ([want] if want else [])


EINSUM = HEAD + '''
@T.prim_func(private=True, s_tir=True)
def f(x: T.Buffer((T.int64(8), T.int64(4)), "float32"), y: T.Buffer((T.int64(4), T.int64(9)), "float32"), T_einsum: T.Buffer((T.int64(8), T.int64(9)), "float32")):
    T.func_attr({"tirx.noalias": True})
    for ax0, ax1, j in T.grid(T.int64(8), T.int64(9), T.int64(4)):
        with T.sblock("T_einsum"):
            v_ax0, v_ax1, v_j = T.axis.remap("SSR", [ax0, ax1, j])
            with T.init():
                T_einsum[v_ax0, v_ax1] = T.float32(0.0)
            T_einsum[v_ax0, v_ax1] = T_einsum[v_ax0, v_ax1] + x[v_ax0, v_j] * y[v_j, v_ax1]
'''


def test_einsum_with_the_loops_of_matmul_is_not_called_matmul():
    assert _ops(EINSUM) == []
    assert [n for n, _ in _ops(EINSUM.replace('"T_einsum"', '"matmul"'))] == ["matmul"]
