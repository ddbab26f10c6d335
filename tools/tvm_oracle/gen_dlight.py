"""Schedule a generated corpus the way TVM's CUDA pipeline does, to measure opinfo on real GPU schedules.

    gen_dlight.py CORPUS_DIR OUT_DIR

Every case of CORPUS_DIR (``gen_ops.py`` / ``gen_variants.py`` output, either dialect) is read by
TVM, and ``dlight.ApplyDefaultSchedule`` runs over it with the rules of
``relax.backend.cuda.legalize_passes`` (Matmul, GEMV, Reduction, GeneralReduction, Fallback) for
target ``cuda`` (scheduling only: no GPU is needed). The scheduled module is written to OUT_DIR
with the case's index entry, its variant ``dlight``, and ``tvm_kind`` from AnnotateTIROpPattern on
the scheduled functions (the kind the pipeline recorded before scheduling is the original
case's). Cases TVM cannot read or schedule are skipped (named on stderr). The output holds
thread bindings (blockIdx/threadIdx loops, threads cooperating on shared-memory tiles),
rfactor'd cross-thread reductions, padded reindexed matmuls and vectorised loops.
"""
import json
import os
import sys

import tvm
from tvm import relax
from tvm.s_tir import dlight as dl

from gen_numeric import module_from_text
from gen_ops import kinds_of

RULES = (dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(), dl.gpu.GeneralReduction(), dl.gpu.Fallback())


def main(src: str, out: str) -> None:
    os.makedirs(out, exist_ok=True)
    index = json.load(open(os.path.join(src, "index.json")))
    cases = []
    target = tvm.target.Target("cuda")
    for case in index["cases"]:
        path = os.path.join(src, case["id"] + ".py")
        try:
            mod = module_from_text(open(path).read())
            with target:
                scheduled = dl.ApplyDefaultSchedule(*RULES)(mod)
            kinds = kinds_of(scheduled)
            text = scheduled.script()
        except Exception as e:  # noqa: BLE001 - a TVM failure skips the case
            print("SKIP", case["id"], type(e).__name__, (str(e).splitlines() or [""])[0][:120], file=sys.stderr)
            continue
        with open(os.path.join(out, case["id"] + ".py"), "w") as f:
            f.write(text)
        cases.append(dict(case, variant="dlight", tvm_kind=kinds, numeric=False))
    json.dump({"generator": "gen_dlight.py", "source": src, "cases": cases},
              open(os.path.join(out, "index.json"), "w"), indent=1)
    print(len(cases), "cases")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
