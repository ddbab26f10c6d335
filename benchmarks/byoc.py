"""BYOC end to end on ResNet-50 (the corpus model): partition for ONNX Runtime, check the
result against the unpartitioned module, and time it against ONNX Runtime running the
original ONNX model (``light_resnet50.onnx`` from the onnx package) in the same run.

    python3 benchmarks/byoc.py [--repeat 10] [--engine c|interp] [--threads 0]

Times are medians of ``--repeat`` runs after one warm-up run. Both sides use ONNX
Runtime's default thread count unless ``--threads`` is given.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tir  # noqa: E402
from tir.graph_exec import GraphExecutor  # noqa: E402
from byoc import partition, summary  # noqa: E402
from byoc.backend import Registry  # noqa: E402
from byoc.c_backend import CBackend  # noqa: E402
from byoc.onnx_backend import OnnxRuntimeBackend  # noqa: E402

MODEL = ROOT.parent / "shared" / "corpus" / "models" / "resnet50.py"


def inputs_for(main, seed: int = 0) -> list:
    """Random inputs at a trained network's scale (He weights, batch-norm statistics near 0/1)."""
    rng = np.random.default_rng(seed)
    out = []
    for p in main.params:
        shape = tuple(int(s) for s in p.type.shape)
        dtype = p.type.dtype.numpy
        if not p.type.dtype.is_float:
            out.append(np.ones(shape, dtype=dtype))
            continue
        if len(shape) >= 2 and p is not main.params[0]:
            arr = rng.standard_normal(shape) * np.sqrt(1.0 / int(np.prod(shape[1:])))
        elif p.name.endswith(("_riv_0", "_s_0")):
            arr = rng.uniform(0.5, 1.0, shape)
        else:
            arr = rng.standard_normal(shape) * (1.0 if p is main.params[0] else 0.1)
        out.append(arr.astype(dtype))
    return out


def onnx_model_path() -> Path:
    import onnx

    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_resnet50.onnx"
    if not path.exists():
        raise SystemExit(f"{path} not found (the onnx package ships it)")
    return path


def original_session(threads: int):
    """ONNX Runtime on the original model, with feeds for its inputs that have no initializer."""
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(onnx_model_path()))
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    if threads:
        opts.intra_op_num_threads = threads
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    init = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(1)
    feeds = {}
    for i in sess.get_inputs():
        if i.name in init:
            continue
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feeds[i.name] = rng.uniform(0.5, 1.0, shape).astype(np.float32)
    return sess, feeds


def median_time(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--engine", choices=("c", "interp"), default="c", help="engine of the ops left in TIR")
    ap.add_argument("--threads", type=int, default=0, help="ONNX Runtime intra-op threads (0: default)")
    args = ap.parse_args()

    mod = tir.parse(MODEL.read_text())
    registry = Registry({"onnxruntime": OnnxRuntimeBackend(threads=args.threads), "c": CBackend()})
    t = time.perf_counter()
    part = partition(mod, "onnxruntime", registry=registry)
    t_part = time.perf_counter() - t
    info = summary(part)
    n_conv = sum(1 for r in info["regions"] for op in r["ops"] if op["op"] == "nn.conv2d")
    print(f"partition + codegen: {t_part:.2f} s; {len(info['regions'])} regions, {n_conv} conv2d offloaded; "
          f"kept in TIR: {[k['func'] for k in info['kept']]}")

    inputs = inputs_for(mod.main)
    ref = tir.run(mod, *inputs, engine=args.engine)
    executor = GraphExecutor(part, engine=args.engine)
    out = executor.run(*inputs)
    err = float(np.max(np.abs(out - ref)))
    print(f"max |partitioned - unpartitioned| = {err:.3g} ({'ok' if err <= 1e-4 else 'MISMATCH'})")

    t_byoc = median_time(lambda: executor.run(*inputs), args.repeat)
    sess, feeds = original_session(args.threads)
    t_ort = median_time(lambda: sess.run(None, feeds), args.repeat)
    print(f"partitioned module (graph executor + ONNX Runtime): {t_byoc * 1e3:.1f} ms")
    print(f"ONNX Runtime on light_resnet50.onnx:               {t_ort * 1e3:.1f} ms")
    print(f"ratio: {t_byoc / t_ort:.2f}x (target <= 1.5x)")
    return 0 if err <= 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
