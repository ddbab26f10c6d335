"""meshgrid in the form TVM 0.27 prints (tests/fixtures/meshgrid_*): one block per output
copying one input along one axis; ``indexing`` read from the axes (ij: input i along axis
i; xy: the first two swapped), named only under TVM's T_meshgrid tag."""
from fixture_util import fixture_func
from opinfo.api import analyze


def _named(func):
    return [(o.name, o.to_json()["attrs"], [r.buffer for r in o.operands]) for o in analyze(func).ops]


def test_meshgrid_ij_and_xy():
    assert _named(fixture_func("meshgrid_ij")) == [("meshgrid", {"indexing": "ij"}, ["x", "y1", "y2"])]
    # symbolic first input, xy: the outputs are (3, n, 6)
    assert _named(fixture_func("meshgrid_xy_symbolic")) == [("meshgrid", {"indexing": "xy"}, ["x", "y1", "y2"])]


def test_meshgrid_edits_are_not_named():
    # the second input read along the last axis: no indexing reads so
    moved = fixture_func("meshgrid_ij", lambda t: t.replace(
        "T_meshgrid_1[v_ax0, v_ax1, v_ax2] = y1[v_ax1]", "T_meshgrid_1[v_ax0, v_ax1, v_ax2] = y1[v_ax2 % T.int64(4)]"))
    assert analyze(moved).ops == ()
    # the same copies under another op's tag
    retagged = fixture_func("meshgrid_ij", lambda t: t.replace('block("T_meshgrid', 'block("T_broadcast_to'))
    assert analyze(retagged).ops == ()
