"""TVM-printed fixtures (tests/fixtures/) and checking that two PrimFuncs compute the same."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import tir

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_func(name: str, edit=lambda text: text):
    """The one PrimFunc of ``fixtures/NAME.py`` (its text passed through ``edit`` first)."""
    (_, func), = tir.parse(edit((FIXTURES / f"{name}.py").read_text())).prim_funcs()
    return func


def replaced(name: str, old: str = "", new: str = "") -> str:
    """The text of ``fixtures/NAME.py`` with ``old`` (which must occur once) made ``new``."""
    text = (FIXTURES / f"{name}.py").read_text()
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def fixture_ops(name: str, old: str = "", new: str = "") -> list:
    """(name, attrs) of the ops opinfo finds in the one PrimFunc of fixture ``name``, with
    ``old`` made ``new`` first."""
    import opinfo

    (_, func), = tir.parse(replaced(name, old, new)).prim_funcs()
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def assert_same_values(a, b, tol: float = 1e-5, engine_a: str = "interp") -> None:
    """``a`` and ``b`` (static float32 shapes, output last) agree on random inputs, ``b`` run
    on the interpreter, ``a`` on ``engine_a`` ("c" for a TVM schedule the interpreter can only
    walk element by element: seconds there, a fraction of one compiled)."""
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, [int(s.value) for s in buf.shape]).astype("float32") for buf in a.buffers[:-1]]
    np.testing.assert_allclose(tir.run(b, *args), tir.run(a, *args, engine=engine_a), rtol=1e-5, atol=tol)
