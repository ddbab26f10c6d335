"""Per-op layout rules: from a recovered op and the layouts its inputs arrive in, the layouts
it runs in and its attributes under them (a :class:`Decision`), or a :class:`Refusal`.

``rule_for(op_name)`` picks the rule; ops without one are refused, so the planner
materialises their inputs back in the original layout.
"""
from __future__ import annotations

from . import axes, elementwise, spatial
from .base import Decision, OpContext, Refusal

_UNARY = (
    "abs acos acosh asin asinh atan atanh ceil cos cosh erf exp exp2 floor isfinite isinf isnan log "
    "log10 log2 negative round rsqrt sigmoid sign sin sinh sqrt square tan tanh trunc logical_not "
    "bitwise_not astype clip nn.relu nn.relu6 nn.gelu nn.gelu_tanh nn.silu nn.selu nn.softplus "
    "nn.leakyrelu zeros_like ones_like"
)
_BINARY = (
    "add subtract multiply divide floor_divide floor_mod mod power maximum minimum equal not_equal "
    "greater greater_equal less less_equal logical_and logical_or logical_xor bitwise_and bitwise_or "
    "bitwise_xor where broadcast_to"
)

RULES = {name: elementwise.broadcast for name in (_UNARY + " " + _BINARY).split()}
RULES.update({
    "nn.conv1d": spatial.conv, "nn.conv2d": spatial.conv, "nn.conv3d": spatial.conv,
    "nn.max_pool1d": spatial.pool, "nn.max_pool2d": spatial.pool, "nn.max_pool3d": spatial.pool,
    "nn.avg_pool1d": spatial.pool, "nn.avg_pool2d": spatial.pool, "nn.avg_pool3d": spatial.pool,
    "nn.adaptive_avg_pool1d": spatial.pool, "nn.adaptive_avg_pool2d": spatial.pool,
    "nn.adaptive_avg_pool3d": spatial.pool,
    "sum": axes.reduction, "mean": axes.reduction, "max": axes.reduction, "min": axes.reduction,
    "prod": axes.reduction, "variance": axes.reduction, "std": axes.reduction,
    "argmax": axes.reduction, "argmin": axes.reduction,
    "nn.softmax": axes.softmax, "nn.log_softmax": axes.softmax,
    "nn.batch_norm": axes.batch_norm, "nn.layer_norm": axes.norm, "nn.rms_norm": axes.norm,
    "nn.group_norm": axes.norm,
    "concat": axes.concat, "stack": axes.stack, "permute_dims": axes.permute_dims,
    "nn.pad": axes.pad, "strided_slice": axes.strided_slice,
    "expand_dims": axes.expand_dims, "squeeze": axes.squeeze,
})
"""Op name -> rule. A plain table: adding an op means adding a line here."""


def apply_rule(ctx: OpContext) -> "Decision | Refusal":
    """The rule's answer for one op (a Refusal naming the op when there is no rule)."""
    rule = RULES.get(ctx.op.name)
    if rule is None:
        if ctx.target is not None or ctx.first_converted() is not None:
            return Refusal(f"no layout rule for {ctx.op.name}")
        return Decision(tuple(None for _ in ctx.inputs), None, ctx.op.attrs)
    return rule(ctx)


__all__ = ["Decision", "OpContext", "Refusal", "RULES", "apply_rule"]
