"""Pserver-mode programs against what real Paddle 3.3.1's DistributeTranspiler builds
(tests/data/transpiler_structure_paddle331.txt): communication and optimizer ops, their placement among
the backward ops, parameter blocks per pserver (names, shapes, dispatch order), optimize blocks and the
startup programs. Forward/backward op names differ between Fluid 1.x and 3.3.1 (mean vs reduce_mean,
cross_entropy vs softmax_with_cross_entropy), so runs of those ops are compared as one placeholder."""

import ast
import os
import re

import pytest

import paddle_compat as fluid
import reference_data as R
from helpers import startup_order
from paddle_compat.backends.ps.records import pserver_plan, trainer_plan

EPS = "127.0.0.1:6174,127.0.0.1:6175"
COMM = {"send", "recv", "split_byref", "send_barrier", "fetch_barrier", "concat"}
FIT_INIT, MLP_INIT = R.make_init()


def _expand(text):
    out = []
    for tok in text.split():
        m = re.match(r"^(.*)x(\d+)$", tok)
        out.extend([m.group(1)] * int(m.group(2)) if m else [tok])
    return out


def _parse_reference():
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "transpiler_structure_paddle331.txt")
    cases = {}
    with open(path) as f:
        chunks = f.read().split("=" * 100)
    for chunk in chunks:
        lines = [ln for ln in chunk.splitlines() if ln.strip()]
        if not lines or "slice_var_up" not in lines[0]:
            continue
        case = {"pservers": {}}
        ps = None
        for ln in lines[1:]:
            s = ln.strip()
            if s.startswith("trainer main"):
                case["main"] = _expand(s.split(":", 1)[1])
            elif s.startswith("trainer startup"):
                case["startup"] = _expand(s.split(":", 1)[1])
            elif s.startswith("pserver "):
                ep, rest = s[len("pserver "):].split(" params: ")
                ps = case["pservers"][ep] = {"params": ast.literal_eval(rest), "blocks": []}
            elif s.startswith("main block0:"):
                ps["block0"] = _expand(s.split(":", 1)[1])
            elif re.match(r"^block\d+:", s):
                ps["blocks"].append(_expand(s.split(":", 1)[1]))
            elif s.startswith("startup:"):
                ps["startup"] = _expand(s.split(":", 1)[1])
        cases[lines[0].strip()] = case
    return cases


REFERENCE = _parse_reference()


def _collapse(types):
    """Comm ops kept, runs of any other ops -> '*'."""
    out = []
    for t in types:
        t = t if t in COMM else "*"
        if t == "*" and out and out[-1] == "*":
            continue
        out.append(t)
    return out


def _build(model, opt, init):
    if model == "fit_a_line":
        if init == "npy":
            R.build_fit_a_line(fluid, FIT_INIT, opt=opt)
        else:
            x = fluid.layers.data(name="x", shape=[13], dtype="float32")
            y = fluid.layers.data(name="y", shape=[1], dtype="float32")
            pred = fluid.layers.fc(input=x, size=1)
            loss = fluid.layers.mean(fluid.layers.square_error_cost(input=pred, label=y))
            R.make_optimizer(fluid, opt, 0.001).minimize(loss)
    else:
        if init == "npy":
            R.build_mlp(fluid, MLP_INIT, opt)
        else:
            img = fluid.layers.data(name="img", shape=[784], dtype="float32")
            label = fluid.layers.data(name="label", shape=[1], dtype="int64")
            h = fluid.layers.fc(img, 200, act="relu")
            h = fluid.layers.fc(h, 200, act="relu")
            h = fluid.layers.fc(h, 10, act="softmax")
            loss = fluid.layers.mean(fluid.layers.cross_entropy(input=h, label=label))
            R.make_optimizer(fluid, opt, 0.1 if opt == "sgd" else 0.001).minimize(loss)


def _transpile(sync, slice_up, trainer_id=0, split=None):
    cfg = fluid.DistributeTranspilerConfig()
    cfg.slice_var_up = slice_up
    if split is not None:
        cfg.split_method = split
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(trainer_id, pservers=EPS, trainers=2, sync_mode=sync)
    return t


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_matches_paddle_331(name):
    ref = REFERENCE[name]
    model, opt, init, sync, slice_up = name.split("/")
    _build(model, opt, init.split("=")[1])
    t = _transpile(sync.endswith("True"), slice_up.endswith("True"))
    main = t.get_trainer_program(wait_port=False)
    assert main is fluid.default_main_program()      # rewritten in place
    assert _collapse([op.type for op in main.global_block().ops]) == _collapse(ref["main"])
    assert startup_order([op.type for op in fluid.default_startup_program().global_block().ops]) == \
        startup_order(ref["startup"])
    for ep, want in ref["pservers"].items():
        prog, startup = t.get_pserver_programs(ep)
        assert [[n, list(s)] for n, s in pserver_plan(prog).placement] == want["params"], ep
        assert [op.type for op in prog.global_block().ops] == want["block0"]
        assert [[op.type for op in b.ops] for b in prog.blocks[1:]] == want["blocks"], ep
        assert startup_order([op.type for op in startup.global_block().ops]) == startup_order(want["startup"]), ep
        # every param block's shape in the pserver program is the placement's
        for pname, shape in want["params"]:
            assert list(prog.global_block().var(pname).shape) == shape


def test_reference_has_all_pserver_cases():
    assert len(REFERENCE) == 20


def test_sync_send_recv_details():
    _build("mlp", "sgd", "npy")
    t = _transpile(True, True, trainer_id=1)
    main = t.get_trainer_program(wait_port=False)
    ops = main.global_block().ops
    split = [op for op in ops if op.type == "split_byref"]
    assert [op.output("Out") for op in split] == [
        ["fc_1.w_0@GRAD.block0.trainer_1", "fc_1.w_0@GRAD.block1.trainer_1"],
        ["fc_0.w_0@GRAD.block0.trainer_1", "fc_0.w_0@GRAD.block1.trainer_1"]]
    assert split[1].attrs["sections"] == [392, 392]
    sends = {op.attrs["op_role_var"][0]: op for op in ops if op.type == "send"}
    # an uncut grad keeps its local name; the pserver-side name carries the trainer suffix
    assert sends["fc_2.w_0"].input("X") == ["fc_2.w_0@GRAD"]
    assert sends["fc_2.w_0"].attrs["send_varnames"] == ["fc_2.w_0@GRAD.trainer_1"]
    assert sends["fc_0.w_0"].attrs["epmap"] == ["127.0.0.1:6175", "127.0.0.1:6174"]
    recvs = [op for op in ops if op.type == "recv"]
    assert [op.attrs["op_role_var"][0] for op in recvs] == sorted(op.attrs["op_role_var"][0] for op in recvs)
    assert recvs[1].output("Out") == ["fc_0.w_0.block0", "fc_0.w_0.block1"]
    concat = [op for op in ops if op.type == "concat"]
    assert concat[0].output("Out") == ["fc_0.w_0"] and concat[0].input("X") == ["fc_0.w_0.block0", "fc_0.w_0.block1"]
    # optimizer and its state leave the trainer
    assert not any(op.type == "sgd" for op in ops)
    assert not main.global_block().has_var("learning_rate_0")
    assert main._is_distributed and not main._is_chief and main._endpoints == EPS.split(",")
    info = trainer_plan(main)
    assert info.trainer_id == 1 and info.trainers == 2 and info.sync_mode and info.mode == "sync"
    assert info.remote_vars["fc_0.w_0"]["pieces"] == (("127.0.0.1:6175", "fc_0.w_0.block0", 0, 392),
                                                      ("127.0.0.1:6174", "fc_0.w_0.block1", 392, 392))


def test_pserver_block_attrs():
    _build("mlp", "adam", "npy")
    t = _transpile(True, True)
    prog = t.get_pserver_program("127.0.0.1:6174")
    ls = prog.global_block().ops[0]
    assert ls.attrs["Fanin"] == 2 and ls.attrs["sync_mode"] and ls.attrs["endpoint"] == "127.0.0.1:6174"
    assert [b.idx for b in ls.attrs["optimize_blocks"]] == [1, 2, 3, 4]
    assert ls.attrs["grad_to_block_id"] == ["fc_0.b_0@GRAD:1", "fc_0.w_0@GRAD.block1:2",
                                            "fc_1.w_0@GRAD.block0:3", "fc_2.b_0@GRAD:4"]
    b2 = prog.blocks[2].ops
    assert b2[0].input("X") == ["fc_0.w_0@GRAD.block1.trainer_0", "fc_0.w_0@GRAD.block1.trainer_1"]
    assert b2[1].attrs["scale"] == 0.5
    adam = b2[2]
    assert adam.input("Param") == ["fc_0.w_0.block1"] and adam.input("Grad") == ["fc_0.w_0@GRAD.block1"]
    # a cut parameter's optimizer state is per block, at block shape
    assert adam.input("Moment1") == ["fc_0.w_0_moment1_0.block1"]
    assert list(prog.global_block().var("fc_0.w_0_moment1_0.block1").shape) == [392, 200]
    assert adam.input("Beta1Pow") == ["fc_0.w_0_beta1_pow_acc_0.block1"]
    assert pserver_plan(prog) is not None and prog._ps_endpoint == "127.0.0.1:6174"


def test_async_has_no_barriers_and_applies_directly():
    _build("mlp", "sgd", "npy")
    t = _transpile(False, True)
    types = [op.type for op in t.get_trainer_program(wait_port=False).global_block().ops]
    assert "send_barrier" not in types and "fetch_barrier" not in types
    sends = [op for op in fluid.default_main_program().global_block().ops if op.type == "send"]
    assert all(not n.endswith(".trainer_0") for op in sends for n in op.attrs["send_varnames"])
    prog = t.get_pserver_program("127.0.0.1:6175")
    assert [[op.type for op in b.ops] for b in prog.blocks[1:]] == [["sgd"]] * 4
    assert prog.global_block().ops[0].attrs["sync_mode"] is False


def test_lr_decay_block_comes_first_on_every_pserver():
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    loss = fluid.layers.mean(fluid.layers.square_error_cost(input=fluid.layers.fc(x, 1), label=y))
    lr = fluid.layers.exponential_decay(0.1, decay_steps=10, decay_rate=0.5)
    fluid.optimizer.SGD(lr).minimize(loss)
    t = _transpile(True, True)
    trainer = t.get_trainer_program(wait_port=False)
    assert not any(op.type == "increment" for op in trainer.global_block().ops)
    startup = fluid.default_startup_program()
    # Paddle 1.8 keeps the counter's init in the trainer startup (no optimize op reads it); unused there
    assert [op.type for op in startup.global_block().ops
            if "@LR_DECAY_COUNTER@" in op.output_arg_names] == ["fill_constant"]
    for ep in EPS.split(","):
        prog, pstart = t.get_pserver_programs(ep)
        ls = prog.global_block().ops[0]
        assert ls.attrs["lr_decay_block_id"] == 1
        assert ls.attrs["optimize_blocks"][0].idx == 1
        assert prog.blocks[1].ops[0].type == "increment"
        sgd = prog.blocks[2].ops[-1]
        lr_name = sgd.input("LearningRate")[0]
        assert prog.global_block().var(lr_name).persistable      # crosses blocks through the scope
        assert any("@LR_DECAY_COUNTER@" in op.output_arg_names for op in pstart.global_block().ops)


def test_pserver_without_params_gets_an_empty_block():
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    loss = fluid.layers.mean(fluid.layers.square_error_cost(
        input=fluid.layers.fc(x, 1, bias_attr=False), label=y))
    fluid.optimizer.SGD(0.1).minimize(loss)
    t = fluid.DistributeTranspiler()
    t.transpile(0, pservers="127.0.0.1:6174,127.0.0.1:6175,127.0.0.1:6176", trainers=1)
    prog = t.get_pserver_program("127.0.0.1:6176")
    assert len(prog.blocks) == 2 and prog.blocks[1].ops == []
    assert prog.global_block().ops[0].attrs["grad_to_block_id"] == []
    # one trainer in sync mode: no sum/scale, no trainer suffix
    prog0 = t.get_pserver_program("127.0.0.1:6174")
    assert [op.type for op in prog0.blocks[1].ops] == ["sgd"]


def test_dc_asgd_ops():
    _build("fit_a_line", "sgd", "npy")
    cfg = fluid.DistributeTranspilerConfig()
    cfg.enable_dc_asgd = True
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(0, pservers=EPS, trainers=2, sync_mode=False)
    prog, startup = t.get_pserver_programs("127.0.0.1:6174")
    assert [op.type for op in prog.blocks[1].ops] == ["ref_by_trainer_id", "elementwise_sub", "elementwise_mul",
                                                      "elementwise_mul", "elementwise_add", "sgd"]
    assert prog.blocks[1].ops[0].input("X") == ["fc_0.b_0.trainer_0_bak", "fc_0.b_0.trainer_1_bak"]
    outs = [n for op in startup.global_block().ops for n in op.output_arg_names]
    assert "fc_0.b_0.trainer_1_bak" in outs


def test_runtime_split_send_recv_keeps_whole_tensors_in_the_program():
    _build("mlp", "sgd", "npy")
    cfg = fluid.DistributeTranspilerConfig()
    cfg.sync_mode = False
    cfg.runtime_split_send_recv = True
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(0, pservers=EPS, trainers=2, sync_mode=False)
    ops = t.get_trainer_program(wait_port=False).global_block().ops
    assert not any(op.type in ("split_byref", "concat") for op in ops)
    send = next(op for op in ops if op.type == "send" and op.attrs["op_role_var"][0] == "fc_0.w_0")
    assert send.input("X") == ["fc_0.w_0@GRAD"] and send.attrs["sections"] == [392, 392]
    assert send.attrs["send_varnames"] == ["fc_0.w_0@GRAD.block0", "fc_0.w_0@GRAD.block1"]
    recv = next(op for op in ops if op.type == "recv" and op.attrs["op_role_var"][0] == "fc_0.w_0")
    assert recv.output("Out") == ["fc_0.w_0"] and recv.attrs["recv_varnames"] == ["fc_0.w_0.block0", "fc_0.w_0.block1"]


def test_sparse_embedding_grad_is_cut_by_split_selected_rows():
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    e = fluid.layers.embedding(ids, size=[20000, 8], is_sparse=True, param_attr=fluid.ParamAttr(name="emb_w"))
    loss = fluid.layers.mean(fluid.layers.square_error_cost(fluid.layers.fc(e, 1), y))
    fluid.optimizer.SGD(0.1).minimize(loss)
    t = _transpile(True, True)
    ops = t.get_trainer_program(wait_port=False).global_block().ops
    cut = [op for op in ops if op.type == "split_selected_rows"]
    assert len(cut) == 1 and cut[0].attrs["height_sections"] == [10000, 10000]
    assert not any(op.type == "split_byref" for op in ops)


@pytest.mark.parametrize("sync,runtime_split,mode", [(True, False, 0), (False, True, 1), (False, False, 2)])
def test_listen_and_serv_distributed_mode_follows_paddle18(sync, runtime_split, mode):
    """Paddle 1.8's transpiler: SYNC, ASYNC when runtime_split_send_recv, else HALF_ASYNC (its
    test_dist_transpiler_config checks 1 and 2)."""
    _build("fit_a_line", "sgd", "default")
    cfg = fluid.DistributeTranspilerConfig()
    cfg.sync_mode = sync
    cfg.runtime_split_send_recv = runtime_split
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(0, pservers=EPS, trainers=2, sync_mode=sync)
    prog, _ = t.get_pserver_programs(EPS.split(",")[0])
    ls = prog.global_block().ops[0]
    assert ls.type == "listen_and_serv" and ls.attr("distributed_mode") == mode and ls.attr("sync_mode") == sync
