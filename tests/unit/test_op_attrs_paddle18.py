"""Ops carry the attributes Paddle 1.8.5 gives them: its attribute checker's defaults (use_mkldnn, op_device,
x_num_col_dims, ...), op_namescope (Paddle's name_scope naming: optimizer, optimizer_1, ...), op_role_var,
op_callstack, Adam's beta-pow initializers on op_device 'cpu', the loss gradient's bare fill_constant and the
grad ops whose grad maker copies no attribute (mean_grad). Programs built by the same builders as
tests/data/paddle18/make_op_attrs.py recorded from Paddle 1.8.5 (op_attrs.json), compared op by op."""

import json
import os
import sys

import paddle_compat  # noqa: F401  (the `paddle` namespace)
import paddle.fluid as fluid
from paddle_compat.ir.recording import NameScope, switch_name_scope

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18")
sys.path.insert(0, HERE)
import op_attr_cases  # noqa: E402

# every op Paddle 1.8.5 records has its counterpart here (layers.cross_entropy's cross_entropy2 included)
KNOWN_UNMATCHED = set()


def test_every_op_has_paddles_attributes():
    want = json.load(open(os.path.join(HERE, "op_attrs.json")))
    # name scopes are numbered per process, as in Paddle (the recording ran in a fresh one)
    old = switch_name_scope(NameScope())
    try:
        got = json.loads(json.dumps(op_attr_cases.record(fluid)))
    finally:
        switch_name_scope(old)
    unmatched, compared, diffs = set(), 0, []
    for case in want:
        for part in ("main", "startup"):
            assert len(got[case][part]) == len(want[case][part]), (case, part)
            for wb, gb in zip(want[case][part], got[case][part]):
                ours = {(o[0], tuple(o[3])): o for o in gb}
                for t, attrs, has_stack, outs in wb:
                    o = ours.get((t, tuple(outs)))
                    if o is None:
                        unmatched.add((case, t))
                        continue
                    compared += 1
                    if o[1] != attrs or o[2] != has_stack:
                        diffs.append((case, part, t, outs, {k: (o[1].get(k), attrs.get(k)) for k in
                                                            set(attrs) | set(o[1]) if o[1].get(k) != attrs.get(k)},
                                      o[2], has_stack))
    assert not diffs, diffs
    assert unmatched == KNOWN_UNMATCHED
    assert compared > 80


def test_printed_program_shows_the_default_attributes():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3])
        fluid.layers.fc(x, size=2)
    text = str(main)
    assert "mul(" in text and "use_mkldnn = False" in text and "x_num_col_dims = 1" in text
    assert "op_namescope = '/'" in text and "op_device = ''" in text and "scale_y = [1.0]" in text
    mul = main.global_block().ops[0]
    assert mul.attr("op_callstack") and "File" in mul.attr("op_callstack")[0]
    assert mul.attr_type("x_num_col_dims") == fluid.core.AttrType.INT


def test_programdesc_bytes_carry_the_defaults():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3])
        fluid.layers.fc(x, size=2)
    back = fluid.Program.parse_from_string(main.desc.serialize_to_string())
    mul = back.global_block().ops[0]
    assert mul.attr("scale_x") == 1.0 and mul.attr("force_fp32_output") is False
    assert mul.attr("op_callstack") == main.global_block().ops[0].attr("op_callstack")
