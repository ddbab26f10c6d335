"""``opinfo demo``: the whole story on one network, in a few seconds.

1. lower a network (the built-in ResNet-style example, or a user's TVMScript file);
2. recover every PrimFunc's op, kind and attributes;
3. re-plan data layouts after lowering (convolutions and pooling to NHWC);
4. offload convolution blocks to an external backend (BYOC after lowering);
5. run the original, the planned and the offloaded module and check they agree.

Each step is a plain function so the story can be followed in code too; ``run_demo``
prints it and returns an exit code (0: all agree, 1: a mismatch).
"""
from __future__ import annotations

import time
from typing import Callable, TextIO

import attrs
import numpy as np

DEFAULT_TARGETS = {"nn.conv2d": ("NHWC", "OHWI"), "nn.max_pool2d": "NHWC", "nn.avg_pool2d": "NHWC"}
TOLERANCE = 1e-4


def random_inputs(mod, seed: int = 0) -> list:
    """Arrays for the parameters of ``mod.main``: symbolic extents become 1; float weights are
    scaled by 1/sqrt(fan-in) so activations stay in a sensible range; integer parameters are
    zeros (always valid as indices)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for i, p in enumerate(mod.main.params):
        shape = tuple(_extent(e) for e in p.type.shape)
        dtype = p.type.dtype
        if not dtype.is_float:
            arrays.append(np.zeros(shape, dtype=dtype.numpy))
            continue
        arr = rng.standard_normal(shape)
        if i > 0 and len(shape) >= 2:
            arr /= np.sqrt(max(1, int(np.prod(shape[1:]))))
        elif i > 0:
            arr = 1.0 + 0.1 * arr
        arrays.append(arr.astype(dtype.numpy))
    return arrays


def _extent(e) -> int:
    """A static extent as an int; a symbolic one (a batch size ``n``) as 1."""
    from tir.expr import IntImm

    if isinstance(e, int):
        return e
    return e.value if isinstance(e, IntImm) else 1


def timed(fn: Callable, *args, **kwargs):
    """``(result, seconds)``"""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def max_diff(a, b) -> float:
    a, b = _flat(a), _flat(b)
    if len(a) != len(b):
        return float("inf")
    worst = 0.0
    for x, y in zip(a, b):
        if x.shape != y.shape:
            return float("inf")
        if x.size:
            worst = max(worst, float(np.nanmax(np.abs(x.astype(np.float64) - y.astype(np.float64)))))
    return worst


def agree(a, b) -> bool:
    return all(x.shape == y.shape and np.allclose(x, y, rtol=TOLERANCE, atol=TOLERANCE, equal_nan=True)
               for x, y in zip(_flat(a), _flat(b))) and len(_flat(a)) == len(_flat(b))


def _flat(value) -> list:
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _flat(item)]
    return [np.asarray(value)]


class Story:
    """Prints the demo's steps with their timings."""

    def __init__(self, out: TextIO):
        self.out = out
        self.step = 0

    def header(self, title: str, seconds: "float | None" = None) -> None:
        self.step += 1
        took = f"  [{seconds * 1000:.0f} ms]" if seconds is not None else ""
        print(f"\n{self.step}. {title}{took}", file=self.out)

    def line(self, text: str = "") -> None:
        print(f"   {text}" if text else "", file=self.out)

    def lines(self, text: str) -> None:
        for t in text.splitlines():
            self.line(t)


def load_example():
    """The built-in ResNet-style network, lowered with ``tir.topi``."""
    from tir.topi.examples import resnet_block_example

    return resnet_block_example()


def show_lowered(story: Story, mod, seconds: float, source: str) -> None:
    import tir

    from .cli.analyze import call_order

    funcs = [(n, mod[n]) for n in call_order(mod)]
    calls = sum(1 for b in mod.main.bindings if hasattr(b.value, "func"))
    story.header(f"Lowered module ({source}): {len(funcs)} PrimFuncs, main with {calls} calls", seconds)
    for name, f in funcs[:12]:
        blocks = [b.name for b in f.blocks()]
        story.line(f"{name:<22} {len(blocks)} block(s): {', '.join(blocks[:5])}{' ...' if len(blocks) > 5 else ''}")
    if len(funcs) > 12:
        story.line(f"... and {len(funcs) - 12} more")
    name, first = funcs[0]
    script = tir.to_script(first.with_attr("global_symbol", name)).splitlines()
    story.line("")
    story.line(f"for instance {name}, as TVMScript:")
    story.lines("\n".join("  " + t for t in script[:16]) + ("\n  ..." if len(script) > 16 else ""))


def memo_analyze() -> Callable:
    """``opinfo.analyze`` remembering its answer per PrimFunc object, so the table, the
    layout planner and the partitioner analyse each function once."""
    from .api import analyze_in_network as analyze

    memo: dict = {}

    def cached(func, name=None):
        hit = memo.get(id(func))
        if hit is None or hit[0] is not func:
            hit = memo[id(func)] = (func, analyze(func))
        return hit[1] if name is None else attrs.evolve(hit[1], name=name)

    return cached


def show_analysis(story: Story, mod, analyze: Callable) -> dict:
    from .cli.analyze import call_order

    infos, seconds = timed(lambda: {n: analyze(mod[n], n) for n in call_order(mod)})
    recognized = sum(1 for i in infos.values() if i.ops)
    story.header(f"Recovered ops, kinds and attributes: {recognized} of {len(infos)} PrimFuncs recognised", seconds)
    for name, info in infos.items():
        ops = "; ".join(_op_text(o) for o in info.ops) or "(abstained: not certain)"
        story.line(f"{name:<22} {info.kind:<18} {ops}")
    return infos


def _op_text(op) -> str:
    attrs = ", ".join(f"{k}={_short(v)}" for k, v in op.attrs.items())
    return f"{op.name}({attrs})" if attrs else op.name


def _short(value) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def show_plan(story: Story, mod, targets: dict, analyze: Callable):
    from layout import plan

    (planned, summary), seconds = timed(plan, mod, targets, analyze)
    wanted = ", ".join(f"{op} -> {'/'.join(v) if isinstance(v, tuple) else v}" for op, v in targets.items())
    story.header(f"Layout plan after lowering ({wanted})", seconds)
    story.lines(summary.text(limit=8))
    return planned


def show_byoc(story: Story, mod, backend: str, analyze: Callable):
    import byoc

    from .cli.common import InputError

    try:
        partitioned, seconds = timed(byoc.partition, mod, backend, analyze=analyze)
    except (KeyError, byoc.Unsupported) as err:
        raise InputError(f"demo: cannot offload to {backend}: {err}") from None
    info = byoc.summary(partitioned, analyze)
    story.header(f"BYOC after lowering: offload to {backend}", seconds)
    for region in info["regions"]:
        story.line(f"{region['symbol']} ({len(region['ops'])} ops):")
        for text in _wrap(" -> ".join(_op_text_json(o) for o in region["ops"]), 100):
            story.line("    " + text)
    if not info["regions"]:
        story.line("nothing offloaded")
    for kept in info["kept"][:8]:
        story.line(f"kept in TIR: {kept.get('func', '?')} {kept.get('op', '')}: {kept.get('reason', '')}")
    if len(info["kept"]) > 8:
        story.line(f"... and {len(info['kept']) - 8} more kept in TIR")
    return partitioned


def _wrap(text: str, width: int) -> list:
    import textwrap

    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)


def _op_text_json(op: dict) -> str:
    keys = ("strides", "padding", "groups", "data_layout", "layout", "axis")
    attrs = ", ".join(f"{k}={_short(tuple(v) if isinstance(v, list) else v)}"
                      for k, v in op.get("attrs", {}).items() if k in keys)
    return f"{op['op']}({attrs})" if attrs else op["op"]


def show_runs(story: Story, modules: dict, inputs: list, engine: str) -> bool:
    import tir

    results, times, first = {}, {}, {}
    for label, mod in modules.items():
        if engine == "c":  # the first call compiles (or loads from the cache); time the second
            _, first[label] = timed(tir.run, mod, *inputs, engine=engine)
        results[label], times[label] = timed(tir.run, mod, *inputs, engine=engine)
    story.header(f"Run on random inputs ({engine} engine) and compare")
    reference = results["original"]
    ok = True
    for label, out in results.items():
        same = agree(out, reference)
        ok = ok and same
        note = "" if label == "original" else f"max |diff| vs original {max_diff(out, reference):.2e}  " \
                                              f"{'agree' if same else 'MISMATCH'}"
        build = f" (first call with build {first[label]:.1f} s)" if label in first else ""
        story.line(f"{label:<10} {times[label] * 1000:8.1f} ms{build}   {note}")
    story.line(f"all agree to {TOLERANCE:g}: {'yes' if ok else 'NO'}")
    return ok


def run_demo(out: TextIO, model_path: "str | None" = None, engine: str = "interp",
             backend: str = "onnxruntime", targets: "dict | None" = None) -> int:
    """Print the whole story; 0 when the three modules agree, 1 otherwise."""
    from .cli.common import read_module

    story = Story(out)
    start = time.perf_counter()
    print("opinfo demo: recover op-level facts from lowered loops, then plan layouts and offload", file=out)
    if model_path is None:
        mod, seconds = timed(load_example)
        source = "built-in ResNet-style example, lowered with tir.topi"
    else:
        mod, seconds = timed(read_module, model_path)
        source = model_path
    show_lowered(story, mod, seconds, source)
    analyze = memo_analyze()
    show_analysis(story, mod, analyze)
    planned = show_plan(story, mod, targets or DEFAULT_TARGETS, analyze)
    offloaded = show_byoc(story, mod, backend, analyze)
    ok = show_runs(story, {"original": mod, "planned": planned, "offloaded": offloaded},
                   random_inputs(mod), engine)
    print(f"\ndone in {time.perf_counter() - start:.1f} s", file=out)
    return 0 if ok else 1
