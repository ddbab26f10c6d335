"""Planning and offloading a network whose main passes constants printed as
``metadata[...]`` references without their values (how TVM prints folded weights when the
metadata section is left out): the planner re-lays-out the constant like a parameter, BYOC
keeps a region whose constant has no value in TIR with the reason."""
import pytest

import byoc
import layout
import tir
from tir.topi.examples import resnet_block_example

REF = 'metadata["ir.GenericConst"][0]'


@pytest.fixture(scope="module")
def module():
    text = tir.to_script(resnet_block_example())
    # the stem's bias (1, 8, 1, 1) becomes a folded constant without its value
    old = "R.call_tir(cls.add, (lv, stem_b)"
    assert old in text
    return tir.parse(text.replace(old, f"R.call_tir(cls.add, (lv, {REF})"))


def test_parsed_constant_has_no_value(module):
    (call,) = [b.value for b in module.main.bindings if getattr(b.value, "func", None) is not None
               and b.value.func.name == "add"]
    const = call.args[1]
    assert const.ref == REF and const.data is None


def test_plan_transforms_the_constant_like_a_weight(module):
    planned, summary = layout.plan(module, {"nn.conv2d": ("NHWC", "OHWI")})
    text = tir.to_script(planned)
    # the constant feeds the NHWC add through a layout_transform bound before the graph runs
    assert "R.call_tir(cls.layout_transform" in text
    line = next(ln for ln in text.splitlines() if REF in ln)
    assert "layout_transform" in line and line.strip().startswith("const0_")
    moved = [t for t in summary.transforms if t.value.startswith("const")]
    assert moved and all(t.kind == "weight" for t in moved)
    again = tir.parse(text)  # the planned module is valid TVMScript
    assert "main" in again.functions


def test_byoc_keeps_a_region_whose_constant_has_no_value(module):
    info = byoc.summary(byoc.partition(module, "onnxruntime"))
    kept = [k for k in info["kept"] if "not in the script" in k["reason"]]
    assert kept and any("add" in k["ops"] for k in kept)
    # every other supported op is still offloaded
    assert info["regions"]


def test_cli_reports_an_internal_error_in_one_line(monkeypatch, capsys, tmp_path):
    """A bug inside a command is one line on stderr and exit 3, not a traceback (the
    traceback comes back with OPINFO_TRACEBACK=1)."""
    import opinfo.cli as cli
    from opinfo.cli import show

    def broken(args):
        raise AttributeError("'Constant' object has no attribute 'name'")

    path = tmp_path / "m.py"
    path.write_text(tir.to_script(resnet_block_example()))
    monkeypatch.setattr(show, "run", broken)
    monkeypatch.delenv("OPINFO_TRACEBACK", raising=False)
    assert cli.main(["show", str(path)]) == 3
    err = capsys.readouterr().err
    assert "opinfo show: internal error: AttributeError" in err and "Traceback" not in err
    monkeypatch.setenv("OPINFO_TRACEBACK", "1")
    with pytest.raises(AttributeError):
        cli.main(["show", str(path)])


def _with_bias_constant(value):
    """The small network with its bias (1, 8, 1, 1) folded into main as a constant."""
    import attrs
    import numpy as np

    from tir import relax as R
    from tir.topi.graph import GraphBuilder

    g = GraphBuilder()
    x = g.input("x", (1, 4, 6, 6))
    w = g.input("w", (8, 4, 3, 3))
    b = g.input("b", (1, 8, 1, 1))
    mod = g.build(g.relu(g.add(g.conv2d(x, w, padding=[1, 1, 1, 1]), b)))
    bias = mod.main.params[2]
    data = None if value is None else np.asarray(value, dtype="float32")
    const = R.Constant(data, bias.type, "" if value is not None else REF)
    blocks = []
    for blk in mod.main.blocks:
        bindings = tuple(attrs.evolve(bd, value=attrs.evolve(bd.value, args=tuple(
            const if a is bias else a for a in bd.value.args))) if hasattr(bd.value, "args") else bd
            for bd in blk.bindings)
        blocks.append(attrs.evolve(blk, bindings=bindings))
    main = attrs.evolve(mod.main, params=mod.main.params[:2], blocks=tuple(blocks))
    return mod.with_function("main", main)


def test_c_backend_bakes_constant_values_into_the_source():
    import shutil

    import numpy as np

    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    bias = np.linspace(-1.5, 2.25, 8, dtype="float32").reshape(1, 8, 1, 1)
    mod = _with_bias_constant(bias)
    part = byoc.partition(mod, "c")
    (ext,) = part.attrs["external_mods"].values()
    assert "static const float k0[8]" in ext.source
    rng = np.random.default_rng(3)
    args = [rng.standard_normal((1, 4, 6, 6)).astype("float32"), rng.standard_normal((8, 4, 3, 3)).astype("float32")]
    np.testing.assert_allclose(np.asarray(tir.run(part, *args)), np.asarray(tir.run(mod, *args)), rtol=1e-5, atol=1e-5)


def test_c_backend_keeps_the_unit_whose_constant_has_no_value():
    """conv2d + bias + relu is one composite: the constant bias keeps all three in TIR, with
    the reason, and partitioning still succeeds (it used to fail compiling the region)."""
    info = byoc.summary(byoc.partition(_with_bias_constant(None), "c"))
    (kept,) = [k for k in info["kept"] if "not in the script" in k["reason"]]
    assert list(kept["ops"]) == ["nn.conv2d", "add", "nn.relu"]
    assert info["regions"] == []
