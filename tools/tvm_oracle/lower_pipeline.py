"""Put every single-PrimFunc case of a corpus through TVM's CPU lowering pipeline up to
``MakePackedAPI`` and write what TVM prints (development only; run with TVM's interpreter).

    python lower_pipeline.py CORPUS OUT

The passes are those of TVM 0.27's ``s_tir`` pipeline from ``CanonicalizeLoop`` to
``CommonSubexprElim`` (the function bound to an llvm target first): flattened views, storage
reuse, vector code, thread launches, lets from CSE. ``../lowered_check.py CORPUS OUT`` then
checks that opinfo reads, prints back and runs each one as the unlowered function;
``lower_kinds.py OUT`` records TVM's kinds of the lowered functions.
"""
import glob
import os
import sys

import tvm
from tvm import s_tir, tirx

from gen_numeric import module_from_text

S, X = s_tir.transform, tirx.transform
PASSES = [
    S.CanonicalizeLoop(), S.LowerCrossThreadReduction(), S.LowerInitBlock(), S.PlanAndUpdateBufferAllocationLocation(),
    S.ConvertBlocksToOpaque(), S.LiftThreadBinding(), S.ManifestSharedMemoryLocalStage(), S.CompactBufferAllocation(),
    S.LowerAutoCopy(), S.UnifyThreadBinding(), S.LowerMatchBuffer(), S.StmtSimplify(), S.InjectPermutedLayout(),
    S.AnnotateIrregularLoop(), S.InjectSoftwarePipeline(), S.TransformMmaBufferLayout(), S.LowerOpaqueBlock(),
    X.FlattenBuffer(), X.BF16ComputeLegalize(), X.NarrowDataType(32), S.LoopPartition(), X.VectorizeLoop(True),
    S.InjectVirtualThread(), S.InjectDoubleBuffer(), X.StorageRewrite(), S.HoistIfThenElse(), X.UnrollLoop(),
    S.RenormalizeSplitPattern(), X.StmtSimplify(), X.RemoveNoOp(), S.RewriteUnsafeSelect(), X.CommonSubexprElim(),
]


def main(src: str, out: str) -> None:
    os.makedirs(out, exist_ok=True)
    target = tvm.target.Target("llvm")
    ok = bad = 0
    for f in sorted(glob.glob(os.path.join(src, "*.py"))):
        try:
            mod = module_from_text(open(f).read())
            prims = [(gv, fn) for gv, fn in mod.functions.items() if isinstance(fn, tirx.PrimFunc)]
            if len(prims) != 1:
                continue
            gv, fn = prims[0]
            with target, tvm.transform.PassContext(opt_level=3):
                lowered = tvm.transform.Sequential(PASSES)(tvm.IRModule({gv: fn.with_attr("target", target)}))
            with open(os.path.join(out, os.path.basename(f)), "w") as fh:
                fh.write(lowered.script())
            ok += 1
        except Exception as e:  # noqa: BLE001 - a TVM failure on one case skips it
            bad += 1
            print("SKIP", os.path.basename(f), type(e).__name__, str(e)[:100])
    print(ok, "lowered", bad, "skipped")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
