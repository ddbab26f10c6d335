#!/bin/bash
# usage: TVM_PYTHON=/abs/path/tvmenv/bin/python [GEN=gen_unitdims.py] gen_per_op.sh OUT SEED PER
# gen_ops.py run once per op (OPINFO_SCHEDULE as for gen_ops.py): a TVM segfault in one op
# loses that op only; the parts are merged into OUT with one index.json (OUT.log: the errors).
OUT=$(realpath -m "$1"); SEED=$2; PER=$3
cd "$(dirname "$0")"
PY=${TVM_PYTHON:-python3}
GEN=${GEN:-gen_ops.py}  # or gen_unitdims.py: any script taking OUT SEED PER OPS...
OPS=${OPS:-$($PY -c "import gen_ops; print(' '.join(gen_ops.SPECS))" 2>/dev/null)}  # or the OPS given
mkdir -p $OUT.parts
for op in $OPS; do
  timeout 300 $PY $GEN $OUT.parts/$op $SEED $PER $op > /dev/null 2>> $OUT.log || echo "FAIL $op rc=$?" >> $OUT.log
done
$PY - $OUT <<'PY'
import json, os, shutil, sys
out = sys.argv[1]; parts = out + ".parts"; os.makedirs(out, exist_ok=True)
cases = []; meta = None
for op in sorted(os.listdir(parts)):
    idx = os.path.join(parts, op, "index.json")
    if not os.path.exists(idx): continue
    d = json.load(open(idx)); meta = d
    for c in d["cases"]:
        for ext in (".py", ".npz", ".plain"):
            src = os.path.join(parts, op, c["id"] + ext)
            if os.path.exists(src): shutil.copy(src, os.path.join(out, c["id"] + ext))
        cases.append(c)
json.dump({"generator": meta["generator"], "seed": meta["seed"], "cases": cases}, open(os.path.join(out, "index.json"), "w"), indent=1)
print(len(cases), "cases")
PY
touch $OUT.done
