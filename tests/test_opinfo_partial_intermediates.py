"""An intermediate written only in part, then read in full (opinfo.intermediate_check), and
the pattern kind of TVM's read_at / write_at copies (opinfo.kind).

Mutants cut an intermediate's producer loop short: the consumer then reads elements no
store ever writes, and the function computes nothing an op computes -- opinfo must abstain.
Real TVM output whose intermediates are written piecewise or partly (pad_einsum's padded
buffers, reverse_compute_at recomputing a reduction per outer iteration, cache_index's copy
placed after its reader) keeps its answer: what no store writes never reaches an output
there, or every element read is written at some time.

Fixtures ``h54_*.py`` are TVM 0.27 output (sample ops corpus, v_fused, s10_pad, s10_rca,
s10_rcache, s10_at)."""
import re

import pytest

import tir
from opinfo.api import WARNINGS, analyze, analyze_module
from opinfo.intermediate_check import stale_reads, uninitialised_reads
from fixture_util import FIXTURES

INT = re.compile(r"T\.int64\((\d+)\)")


def _text(name: str) -> str:
    return (FIXTURES / f"{name}.py").read_text()


def cut(text: str, block: str, position: int) -> str:
    """``text`` with the ``position``-th extent of the loop line right above block ``block``
    made one shorter."""
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if f'block("{block}")' in line)
    i = at - 1
    while not lines[i].lstrip().startswith("for "):
        i -= 1
    m = list(INT.finditer(lines[i]))[position]
    lines[i] = lines[i][:m.start()] + f"T.int64({int(m.group(1)) - 1})" + lines[i][m.end():]
    return "\n".join(lines)


def _ops(text: str, func: "str | None" = None) -> list:
    infos = analyze_module(tir.parse(text))
    info = infos[func] if func is not None else next(iter(infos.values()))
    return [op.name for op in info.ops]


MUTANTS = [
    # fixture, function (None: the only one), block whose loop is cut, extent position, op names
    ("h54_softmax", None, "T_softmax_exp", 2, ["nn.softmax"]),
    ("h54_fused_add_exp", "fused_add_tir_exp", "T_add", 0, ["add", "exp"]),
    ("h54_conv2d_nhwc", None, "pad_temp", 3, ["nn.conv2d"]),
    ("h54_adaptive_avg_pool2d", None, "adaptive_pool_sum", 1, ["nn.adaptive_avg_pool2d"]),
    ("h54_rms_norm", None, "T_multiply", 0, ["nn.rms_norm"]),
    ("h54_fused_exp_sum", None, "compute", 0, ["exp", "sum"]),
    ("h54_gelu", None, "T_multiply", 1, ["nn.gelu"]),
]


@pytest.mark.parametrize("name,func,block,position,ops", MUTANTS, ids=[m[0] + "-" + m[2] for m in MUTANTS])
def test_intermediate_cut_short_abstains(name, func, block, position, ops):
    text = _text(name)
    assert _ops(text, func) == ops
    mutant = cut(text, block, position)
    assert mutant != text
    assert _ops(mutant, func) == []


def test_unread_part_left_unwritten_is_not_refuted():
    """The pad's last column (x = 16) is read by no conv window (x * 3 + rx * 2 <= 14):
    left unwritten, the function computes the same (an equivalent mutant), nothing refuted.
    Its last row is read (y + ry reaches 9): left unwritten, refuted."""
    text = _text("h54_conv2d_nhwc")
    (_, same), = tir.parse(cut(text, "pad_temp", 2)).prim_funcs()
    (_, short), = tir.parse(cut(text, "pad_temp", 1)).prim_funcs()
    assert not uninitialised_reads(same)
    assert uninitialised_reads(short)


@pytest.mark.parametrize("name,ops", [
    # pad_einsum: T_divide reads the whole padded matmul buffer, written only in its
    # unpadded corner; what it computes from the rest is cropped away before the output
    ("h54_pad_einsum_attention_bias", ["nn.attention_bias"]),
])
def test_real_tvm_output_keeps_its_answer(name, ops):
    text = _text(name)
    for _, f in tir.parse(text).prim_funcs():
        assert not uninitialised_reads(f)
    assert _ops(text) == ops


def test_real_tvm_output_reading_rows_of_other_iterations_is_named_with_a_warning():
    """reverse_compute_at recomputes the variance's sum at each iteration of the loop over
    rows, reading rows of T_multiply that other iterations write. As written (T_multiply
    allocated by the root block, kept across iterations) the last iteration's sum is whole:
    the function computes the variance, and our interpreter says so. Every access of
    T_multiply is inside that loop, so TVM's lowering allocates it there, fresh at each
    iteration: TVM 0.27's own build returns other numbers. The answer stands, with the
    warning that TVM's build computes something else."""
    text = _text("h54_rca_variance")
    (_, f), = tir.parse(text).prim_funcs()
    assert not uninitialised_reads(f)
    assert stale_reads(f) == (("T_multiply", ("ax0", "ax0_1", "ax0_2", "ax1")),)
    info = next(iter(analyze_module(tir.parse(text)).values()))
    assert [op.name for op in info.ops] == ["variance"]
    warning = WARNINGS["stale"].format(buffer="T_multiply", loops="ax0, ax0_1, ax0_2, ax1")
    assert info.warnings == (warning,)
    assert info.to_json()["warnings"] == [warning]


def test_real_tvm_output_reading_an_index_cache_before_it_is_filled_abstains():
    """cache_index places the index copy after its reader: TVM's own output reads the
    index buffer before any store to it (every element is written, but later). Until
    session 12 that was let pass; it computes from garbage (tests/test_block_loops.py has
    more such real functions)."""
    text = _text("h54_cache_index_resize2d")
    (_, f), = tir.parse(text).prim_funcs()
    assert uninitialised_reads(f)
    assert _ops(text) == []


@pytest.mark.parametrize("name,kind", [("h54_write_at_abs", "elemwise"), ("h54_at_sum", "comm_reduce")])
def test_auto_copy_kind(name, kind):
    """read_at / write_at copies (blocks annotated auto_copy) store and load at one shared
    index expression in TVM, which its pattern analysis sees as the same: elemwise."""
    (_, f), = tir.parse(_text(name)).prim_funcs()
    assert analyze(f).kind == kind


def test_auto_copy_annotation_is_needed():
    """Without the annotation the same copy's compound indices are distinct objects to TVM:
    the function is opaque, as before."""
    text = _text("h54_write_at_abs").replace('T.sblock_attr({"auto_copy": True})', "")
    (_, f), = tir.parse(text).prim_funcs()
    assert analyze(f).kind == "opaque"
