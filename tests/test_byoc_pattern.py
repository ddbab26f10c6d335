"""byoc pattern language and matcher over the graph of recovered ops."""
import pytest

from tir.topi.graph import GraphBuilder

from byoc.graph import INPUT, PARAM, Leaf, NodeOut, build_graph
from byoc.match import find_matches, match
from byoc.pattern import is_input, is_op, is_param, wildcard
from opinfo.info import FuncInfo, OpInfo, Operand


def _conv_bias_relu(num_input=None):
    g = GraphBuilder()
    x = g.input("x", (1, 4, 8, 8))
    w = g.input("w", (8, 4, 3, 3))
    b = g.input("b", (1, 8, 1, 1))
    y = g.conv2d(x, w, padding=[1, 1, 1, 1])
    y = g.relu(g.add(y, b))
    z = g.conv2d(y, g.input("w2", (8, 8, 1, 1)))
    return g.build(z)


def _graph(num_input=None):
    return build_graph(_conv_bias_relu(), num_input=num_input)


def test_graph_has_one_node_per_recovered_op_with_dataflow_edges():
    g = _graph()
    names = [n.info.name for n in g.nodes]
    assert names == ["nn.conv2d", "add", "nn.relu", "nn.conv2d"]
    assert g.nodes[1].args[0] == NodeOut(0)
    assert g.users[0] == (1,)
    assert isinstance(g.nodes[0].args[0], Leaf) and g.nodes[0].args[0].kind == INPUT


def test_num_input_splits_inputs_from_weights():
    g = _graph(num_input=1)
    assert g.nodes[0].args[0].kind == INPUT
    assert g.nodes[0].args[1].kind == PARAM


def test_op_name_attrs_and_callable_predicates():
    g = _graph()
    conv = is_op("nn.conv2d")
    assert match(g, conv.has_attr({"padding": [1, 1, 1, 1]}), 0) is not None
    assert match(g, conv.has_attr({"padding": [0, 0, 0, 0]}), 0) is None
    assert match(g, conv.has_attr(lambda a: a["groups"] == 1), 0) is not None
    assert match(g, conv.where(lambda info: info.name.endswith("conv2d")), 3) is not None
    assert match(g, is_op("nn.relu"), 0) is None


def test_inputs_versus_params():
    g = _graph(num_input=1)
    assert match(g, is_op("nn.conv2d")(is_input(), is_param()), 0) is not None
    assert match(g, is_op("nn.conv2d")(is_param(), wildcard()), 0) is None


def test_optional_steps_take_the_longest_chain():
    g = _graph()
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    pat = conv.optional(lambda x: is_op("add")(x, wildcard())).optional(lambda x: is_op("nn.relu")(x))
    found = find_matches(g, [("cbr", pat)])
    assert sorted(sorted(m.nodes) for m in found) == [[0, 1, 2], [3]]


def test_alternatives_and_named_captures():
    g = _graph()
    act = is_op("nn.relu") | is_op("sigmoid")
    pat = act(is_op("add")(is_op("nn.conv2d")(wildcard().named("data"), wildcard()), wildcard().named("bias")))
    m = match(g, pat, 2)
    assert m is not None and set(m.captures) == {"data", "bias"}
    assert m.captures["data"] == g.nodes[0].args[0]


def test_same_capture_name_must_be_the_same_value():
    g = GraphBuilder()
    x = g.input("x", (2, 3))
    y = g.input("y", (2, 3))
    mod = g.build(g.add(g.relu(x), g.relu(y)))
    graph = build_graph(mod)
    v = wildcard().named("v")
    diamond = is_op("add")(is_op("nn.relu")(v), is_op("nn.relu")(v))
    assert match(graph, diamond, len(graph.nodes) - 1) is None
    free = is_op("add")(is_op("nn.relu")(wildcard()), is_op("nn.relu")(wildcard()))
    assert match(graph, free, len(graph.nodes) - 1) is not None


def test_inner_op_used_outside_is_not_absorbed():
    g = GraphBuilder()
    x = g.input("x", (2, 3))
    r = g.relu(x)
    mod = g.build(g.add(g.exp(r), r))
    graph = build_graph(mod)
    pat = is_op("exp")(is_op("nn.relu")(wildcard()))
    exp_node = [n.index for n in graph.nodes if n.info.name == "exp"][0]
    assert match(graph, pat, exp_node) is None


def _fused_analyze(mod):
    """A hand-made analysis: the PrimFunc 'fused' holds conv -> add -> relu."""
    from opinfo import analyze

    def fake(func):
        if func is not mod["conv2d"]:
            return analyze(func)
        ops = (
            OpInfo("nn.conv2d", {"groups": 1}, (Operand("data", "x", 0), Operand("weight", "w", 1)),
                   Operand("output", "c", None)),
            OpInfo("add", {}, (Operand("lhs", "c", None), Operand("rhs", "b", 2)), Operand("output", "s", None)),
            OpInfo("nn.relu", {}, (Operand("data", "s", None),), Operand("output", "out", 3)),
        )
        return FuncInfo("fused", "out_ewise_fusable", ops)

    return fake


def _one_call_module():
    g = GraphBuilder()
    x = g.input("x", (1, 4, 8, 8))
    w = g.input("w", (8, 4, 3, 3))
    g.input("b", (1, 8, 1, 1))
    return g.build(g.conv2d(x, w, padding=[1, 1, 1, 1]))


def test_ops_of_a_fused_primfunc_match_like_separate_calls():
    mod = _one_call_module()
    graph = build_graph(mod, analyze=_fused_analyze(mod))
    assert [n.binding for n in graph.nodes] == [0, 0, 0]
    chain = is_op("nn.relu")(is_op("add")(is_op("nn.conv2d")(wildcard(), wildcard()), wildcard()))
    assert match(graph, chain, 2) is not None
    # a pattern covering part of a fused PrimFunc cannot split it
    assert match(graph, is_op("nn.conv2d"), 0) is None
    assert match(graph, is_op("nn.relu")(wildcard()), 2) is None


def test_operand_patterns_must_be_patterns():
    with pytest.raises(TypeError):
        is_op("add")("x")
