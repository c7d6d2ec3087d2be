"""GradientClipByGlobalNorm (set_gradient_clip) in pserver mode: the trainer and pserver programs Paddle 1.8.5
builds (tests/data/paddle18/ps_clip.json, make_ps_clip.py): the clip ops (their @CLIP name scope) stay on the
trainer, which sends the clipped gradients; each pserver block applies them (sync: sum and scale first).
The numbers of a 2x2 job are in tests/dist/test_ps_grad_clip.py."""

import json
import os
import sys

import pytest

import paddle_compat  # noqa: F401  (the `paddle` namespace)
import paddle.fluid as fluid

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18")
sys.path.insert(0, DATA)
import ps_clip_job  # noqa: E402

WANT = json.load(open(os.path.join(DATA, "ps_clip.json")))["structure"]


def _ours(types, mode):
    # where our trainer programs differ from Paddle 1.8.5's by design, whatever the clip: the sync strategy
    # trains as classic sync (a fetch_barrier ends the step; Paddle's communicator-based sync has none), and
    # a Geo-SGD trainer pushes its deltas with one geo_sgd op where Paddle's has a send
    if mode == "sync" and types[-1:] == ["fetch_barrier"]:
        types = types[:-1]
    return ["send" if t == "geo_sgd" and mode == "geo" else t for t in types]


@pytest.mark.parametrize("mode", ["sync", "async", "geo"])
def test_programs_match_paddle18(mode):
    got = ps_clip_job.structure(fluid, mode)
    assert _ours(got["trainer"], mode) == WANT[mode]["trainer"]
    assert got["pserver0"] == WANT[mode]["pserver0"]
    if mode != "geo":
        assert "sqrt" in got["trainer"] and all(t in ("listen_and_serv", "sum", "scale", "sgd")
                                                 for b in got["pserver0"] for t in b)


def test_clip_ops_are_backward_ops_on_the_trainer():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        fleet, _ = ps_clip_job.build(fluid, "async", "trainer", 0, ["127.0.0.1:36011", "127.0.0.1:36012"],
                                     wait_port=False)
    clip = [op for op in fleet.main_program.global_block().ops if "@CLIP" in op.attrs.get("op_namescope", "")]
    assert clip and all(op.attr("op_role") == 1 for op in clip)     # Backward, as Paddle sets them
    sent = [n for op in fleet.main_program.global_block().ops if op.type == "send" for n in op.input("X")]
    assert sent and all(n.startswith("elementwise_mul_") for n in sent)   # the clipped gradients
