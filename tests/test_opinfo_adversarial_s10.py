"""Mutants of TVM-printed functions for the areas the session-9 review left out (the
run-based and numeric recognizers, the graph-named creation ops, packed layouts, network
conventions): each computes a different op (or none) while looking close to the real one,
and must abstain -- or be named with what it computes.

Findings fixed with these tests:

- the numeric recognizers (softmax, norms; :mod:`opinfo.recognize.numeric`) evaluated the
  expression at about a dozen random output positions and on data in [-1, 1): a ``tril``
  inlined into softmax's last block zeroing one corner, and a ``clip(x, -6, 6)`` inlined
  before the softmax, were still read as ``nn.softmax``. Small outputs are now evaluated
  everywhere (corners and axis sweeps of large ones), and one data scale reaches beyond
  the expression's float constants.
- a symbolic ``eye`` was run at sizes 7 and 10 only: a diagonal cut short by ``i < 12`` was
  named ``eye_like``; a third size beyond the body's constants refutes it.
"""
from __future__ import annotations

import pytest

import opinfo
import tir
from opinfo.api import analyze_module


def _module_ops(text: str) -> dict:
    return {name: [(op.name, dict(op.attrs)) for op in info.ops] for name, info in analyze_module(tir.parse(text)).items()}


def _mutant(text: str, *pairs) -> str:
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    return text


def _names(text: str) -> list:
    (_, func), = tir.parse(text).prim_funcs()
    return [op.name for op in opinfo.analyze(func).ops]


# ------------------------------------------------------------------ numeric recognizers

SOFTMAX = '@I.ir_module\nclass Module:\n    @T.prim_func(private=True, s_tir=True)\n    def softmax(x: T.Buffer((T.int64(8), T.int64(8), T.int64(4), T.int64(8)), "float32"), T_softmax_norm: T.Buffer((T.int64(8), T.int64(8), T.int64(4), T.int64(8)), "float32")):\n        T.func_attr({"tir.noalias": True})\n        # with T.sblock("root"):\n        T_softmax_maxelem = T.sblock_alloc_buffer((T.int64(8), T.int64(8), T.int64(8)))\n        T_softmax_exp = T.sblock_alloc_buffer((T.int64(8), T.int64(8), T.int64(4), T.int64(8)))\n        T_softmax_expsum = T.sblock_alloc_buffer((T.int64(8), T.int64(8), T.int64(8)))\n        for i0, i1, i2, k in T.grid(T.int64(8), T.int64(8), T.int64(8), T.int64(4)):\n            with T.sblock("T_softmax_maxelem"):\n                v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k])\n                T.reads(x[v_i0, v_i1, v_k, v_i2])\n                T.writes(T_softmax_maxelem[v_i0, v_i1, v_i2])\n                with T.init():\n                    T_softmax_maxelem[v_i0, v_i1, v_i2] = T.float32(-340282346638528859811704183484516925440.0)\n                T_softmax_maxelem[v_i0, v_i1, v_i2] = T.max(T_softmax_maxelem[v_i0, v_i1, v_i2], x[v_i0, v_i1, v_k, v_i2])\n        for i0, i1, i2, i3 in T.grid(T.int64(8), T.int64(8), T.int64(4), T.int64(8)):\n            with T.sblock("T_softmax_exp"):\n                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])\n                T.reads(x[v_i0, v_i1, v_i2, v_i3], T_softmax_maxelem[v_i0, v_i1, v_i3])\n                T.writes(T_softmax_exp[v_i0, v_i1, v_i2, v_i3])\n                T_softmax_exp[v_i0, v_i1, v_i2, v_i3] = T.exp(x[v_i0, v_i1, v_i2, v_i3] - T_softmax_maxelem[v_i0, v_i1, v_i3])\n        for i0, i1, i2, k in T.grid(T.int64(8), T.int64(8), T.int64(8), T.int64(4)):\n            with T.sblock("T_softmax_expsum"):\n                v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k])\n                T.reads(T_softmax_exp[v_i0, v_i1, v_k, v_i2])\n                T.writes(T_softmax_expsum[v_i0, v_i1, v_i2])\n                with T.init():\n                    T_softmax_expsum[v_i0, v_i1, v_i2] = T.float32(0.0)\n                T_softmax_expsum[v_i0, v_i1, v_i2] = T_softmax_expsum[v_i0, v_i1, v_i2] + T_softmax_exp[v_i0, v_i1, v_k, v_i2]\n        for i0, i1, i2, i3 in T.grid(T.int64(8), T.int64(8), T.int64(4), T.int64(8)):\n            with T.sblock("T_softmax_norm"):\n                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])\n                T.reads(T_softmax_exp[v_i0, v_i1, v_i2, v_i3], T_softmax_expsum[v_i0, v_i1, v_i3])\n                T.writes(T_softmax_norm[v_i0, v_i1, v_i2, v_i3])\n                T.sblock_attr({"axis": 2})\n                T_softmax_norm[v_i0, v_i1, v_i2, v_i3] = T_softmax_exp[v_i0, v_i1, v_i2, v_i3] / T_softmax_expsum[v_i0, v_i1, v_i3]\n'

NORM = "T_softmax_norm[v_i0, v_i1, v_i2, v_i3] = T_softmax_exp[v_i0, v_i1, v_i2, v_i3] / T_softmax_expsum[v_i0, v_i1, v_i3]"
NORM_VALUE = NORM.split(" = ")[1]
MAX_READ = "T.max(T_softmax_maxelem[v_i0, v_i1, v_i2], x[v_i0, v_i1, v_k, v_i2])"
EXP_READ = "T.exp(x[v_i0, v_i1, v_i2, v_i3] - T_softmax_maxelem"


def _clip(load: str, lo: str, hi: str) -> str:
    return f"T.max(T.min({load}, T.float32({hi})), T.float32({lo}))"


def test_softmax_fixture_is_named():
    assert _names(SOFTMAX) == ["nn.softmax"]


SOFTMAX_MUTANTS = {
    # tril(softmax(x), k=6) over the last two axes, inlined: only position (i2=0, i3=7) is 0
    "tril inlined, one corner": [(NORM, NORM.replace(NORM_VALUE, f"T.Select(v_i3 <= v_i2 + T.int64(6), {NORM_VALUE}, T.float32(0.0))"))],
    # one output position changed
    "one position": [(NORM, NORM.replace(NORM_VALUE, f"T.Select(v_i0 == T.int64(3) and v_i1 == T.int64(5) and v_i2 == T.int64(1) and v_i3 == T.int64(6), T.float32(0.0), {NORM_VALUE})"))],
    # softmax(clip(x, -6, 6)): the clip inlined into the max and the exp
    "clip inlined": [(MAX_READ, MAX_READ.replace("x[v_i0, v_i1, v_k, v_i2]", _clip("x[v_i0, v_i1, v_k, v_i2]", "-6", "6"))),
                     (EXP_READ, EXP_READ.replace("x[v_i0, v_i1, v_i2, v_i3]", _clip("x[v_i0, v_i1, v_i2, v_i3]", "-6", "6")))],
    # a select on the data at a threshold the data in [-1, 1) never reach
    "threshold select": [(EXP_READ, EXP_READ.replace("x[v_i0, v_i1, v_i2, v_i3]", "T.Select(x[v_i0, v_i1, v_i2, v_i3] > T.float32(3), T.float32(0), x[v_i0, v_i1, v_i2, v_i3])"))],
}


@pytest.mark.parametrize("pairs", list(SOFTMAX_MUTANTS.values()), ids=list(SOFTMAX_MUTANTS))
def test_softmax_mutants_abstain(pairs):
    assert _names(_mutant(SOFTMAX, *pairs)) == []


def test_softmax_with_another_max_init_is_still_softmax():
    # any shift cancels in exp(x - m) / sum(exp(x - m)): the init of the max is no attribute
    text = _mutant(SOFTMAX, ("T_softmax_maxelem[v_i0, v_i1, v_i2] = T.float32(-340282346638528859811704183484516925440.0)",
                             "T_softmax_maxelem[v_i0, v_i1, v_i2] = T.float32(-100.0)"))
    assert _names(text) == ["nn.softmax"]


# ------------------------------------------------------------------ creation ops named in context

EYE_SYMBOLIC = '@I.ir_module\nclass Module:\n    @T.prim_func(private=True)\n    def eye(var_eye: T.handle):\n        T.func_attr({"tir.noalias": True})\n        n = T.int64()\n        eye = T.match_buffer(var_eye, (n, n))\n        for i, j in T.grid(n, n):\n            with T.block("eye"):\n                v_i, v_j = T.axis.remap("SS", [i, j])\n                T.reads()\n                T.writes(eye[v_i, v_j])\n                eye[v_i, v_j] = T.if_then_else(v_i == v_j - T.int64(1), T.float32(1.0), T.float32(0.0))\n\n    @R.function\n    def main(x: R.Tensor(("n", "n"), dtype="float32")) -> R.Tensor(("n", "n"), dtype="float32"):\n        cls = Module\n        with R.dataflow():\n            lv = R.call_tir(cls.eye, R.tuple(), out_ty=R.Tensor((n, n), dtype="float32"))\n            gv: R.Tensor((n, n), dtype="float32") = lv\n            R.output(gv)\n        return gv\n'


def test_symbolic_eye_like_is_named():
    assert _module_ops(EYE_SYMBOLIC)["eye"] == [("eye_like", {"k": 1, "dtype": None})]


@pytest.mark.parametrize("cut", ["v_i < T.int64(12)", "v_j < T.int64(30)"])
def test_symbolic_eye_cut_short_abstains(cut):
    text = _mutant(EYE_SYMBOLIC, ("v_i == v_j - T.int64(1),", f"v_i == v_j - T.int64(1) and {cut},"))
    assert _module_ops(text)["eye"] == []


# ------------------------------------------------------------------ packed layouts (unpack)

CLIP_NCHW4C = '@I.ir_module\nclass Module:\n    @T.prim_func(private=True)\n    def tir_clip(x: T.Buffer((T.int64(1), T.int64(2), T.int64(3), T.int64(4), T.int64(4)), "float32"), compute: T.Buffer((T.int64(1), T.int64(2), T.int64(3), T.int64(4), T.int64(4)), "float32")):\n        T.func_attr({"tir.noalias": True})\n        # with T.block("root"):\n        for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(8), T.int64(3), T.int64(4)):\n            with T.block("compute"):\n                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])\n                T.reads(x[v_i0, v_i1 // T.int64(4), v_i2, v_i3, v_i1 % T.int64(4)])\n                T.writes(compute[v_i0, v_i1 // T.int64(4), v_i2, v_i3, v_i1 % T.int64(4)])\n                compute[v_i0, v_i1 // T.int64(4), v_i2, v_i3, v_i1 % T.int64(4)] = T.max(T.min(x[v_i0, v_i1 // T.int64(4), v_i2, v_i3, v_i1 % T.int64(4)], T.float32(6.0)), T.float32(0.0))'


def test_packed_clip_is_named():
    assert _names(CLIP_NCHW4C) == ["clip"]


def test_packed_output_written_in_part_abstains():
    # 7 of the 8 logical channels: ``compute[n, c // 4, h, w, c % 4]`` hides the partial
    # write from the physical coverage check; the unpacked function shows it
    text = _mutant(CLIP_NCHW4C, ("T.grid(T.int64(1), T.int64(8), T.int64(3), T.int64(4))",
                                 "T.grid(T.int64(1), T.int64(7), T.int64(3), T.int64(4))"))
    assert _names(text) == []
