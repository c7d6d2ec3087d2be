"""layers.io ListenAndServ / Send / Recv build the ops Paddle 1.8.5 builds (structure read from Paddle's
own programs for the same calls), and misuse of hand-built RPC programs is named before any connection."""

import pytest

import paddle_compat as fluid
from paddle_compat.fluid import core, layers
from paddle_compat.fluid.layers import ops
from paddle_compat.fluid.layers.io import ListenAndServ, Recv, Send


def _server_program(endpoint="127.0.0.1:0", fan_in=1):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        serv = ListenAndServ(endpoint, ["X"], fan_in=fan_in, optimizer_mode=False)
        with serv.do():
            out = main.global_block().create_var(name="scale_0.tmp_0", dtype="float32", shape=[32, 32])
            x = layers.data(shape=[32, 32], dtype="float32", name="X", append_batch_size=False)
            fluid.initializer.Constant(value=1.0)(x, main.global_block())
            ops._scale(x=x, scale=10.0, out=out)
    return main


def _client_program(send_eps, recv_eps):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = layers.data(shape=[32, 32], dtype="float32", name="X", append_batch_size=False)
        fluid.initializer.Constant(value=2.3)(x, main.global_block())
        get = main.global_block().create_var(name="scale_0.tmp_0", dtype="float32", shape=[32, 32])
        fluid.initializer.Constant(value=2.3)(get, main.global_block())
        Send(send_eps, [x, get])
        o = Recv(recv_eps, [get])
    return main, o


def test_server_program_structure_as_paddle():
    main = _server_program()
    assert [op.type for op in main.global_block().ops] == ["fill_constant", "listen_and_serv"]
    ls = main.global_block().ops[1]
    assert ls.input("X") == ["X"] and ls.output_names == []
    assert ls.attr("endpoint") == "127.0.0.1:0" and ls.attr("Fanin") == 1
    assert ls.attr("distributed_mode") == 0 and ls.attr("grad_to_block_id") == [""]
    assert [b.idx for b in ls.attr("optimize_blocks")] == [1]
    sub = main.block(1)
    assert sub.parent_idx == 0
    assert [(op.type, op.input("X"), op.output("Out"), op.attr("scale")) for op in sub.ops] == \
        [("scale", ["X"], ["scale_0.tmp_0"], 10.0)]
    assert main.current_block_idx == 0
    text = str(main)     # test_program_code prints it
    assert "listen_and_serv" in text and "block 1" in text


def test_client_program_structure_as_paddle():
    main, o = _client_program("127.0.0.1:9123,127.0.0.1:9124", "127.0.0.1:9123")
    gb = main.global_block()
    assert [op.type for op in gb.ops] == ["fill_constant", "fill_constant", "send", "send_barrier", "recv",
                                          "fetch_barrier"]
    send, sb, recv, fb = gb.ops[2:]
    assert send.input("X") == ["X", "scale_0.tmp_0"] and send.output("Out") == []
    assert send.attr("epmap") == ["127.0.0.1:9123", "127.0.0.1:9124"]
    assert send.attr(core.op_proto_and_checker_maker.kOpRoleAttrName()) == \
        core.op_proto_and_checker_maker.OpRole.RPC == 4
    assert sorted(sb.attr("endpoints")) == ["127.0.0.1:9123", "127.0.0.1:9124"]
    assert recv.output("Out") == ["scale_0.tmp_0"] and recv.attr("epmap") == ["127.0.0.1:9123"]
    assert fb.output("Out") == ["scale_0.tmp_0"] and fb.attr("endpoints") == ["127.0.0.1:9123"]
    assert [v.name for v in o] == ["scale_0.tmp_0"]


def test_no_barriers_without_sync():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = layers.data(shape=[2], dtype="float32", name="X", append_batch_size=False)
        Send("127.0.0.1:1", [x], sync=False)
        Recv("127.0.0.1:1", [x], sync=False)
    assert [op.type for op in main.global_block().ops] == ["send", "recv"]


def test_scale_into_given_out():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = layers.fill_constant([2, 2], "float32", 1.5)
        out = main.global_block().create_var(name="given", dtype="float32", shape=[2, 2])
        assert ops._scale(x=x, scale=4.0, bias=1.0, out=out) is out
        auto = ops._scale(x=x, scale=2.0)
    exe = fluid.Executor(fluid.CPUPlace())
    got, got2 = exe.run(main, fetch_list=[out, auto])
    assert got.tolist() == [[7.0, 7.0]] * 2 and got2.tolist() == [[3.0, 3.0]] * 2


def test_bad_arguments_named():
    with pytest.raises(ValueError, match="endpoint must be 'ip:port'"):
        ListenAndServ("nohost", ["X"])
    with pytest.raises(ValueError, match="fan_in"):
        ListenAndServ("127.0.0.1:0", ["X"], fan_in=0)
    with pytest.raises(TypeError, match="send_vars"):
        Send("127.0.0.1:1", "X")


def test_client_with_two_servers_refused_before_connecting():
    main, _ = _client_program("127.0.0.1:9123,127.0.0.1:9124", "127.0.0.1:9123")
    exe = fluid.Executor(fluid.CPUPlace())
    with pytest.raises(Exception, match="exactly one server"):
        exe.run(main)


def test_client_trainer_id_outside_trainers_named(monkeypatch):
    monkeypatch.setenv("PADDLE_TRAINER_ID", "2")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "2")
    main, _ = _client_program("127.0.0.1:9123", "127.0.0.1:9123")
    with pytest.raises(Exception, match="PADDLE_TRAINER_ID=2"):
        fluid.Executor(fluid.CPUPlace()).run(main)


def test_async_server_mode_refused():
    main = _server_program()
    main.global_block().ops[1]._set_attr("distributed_mode", 1)
    with pytest.raises(Exception, match="sync mode"):
        fluid.Executor(fluid.CPUPlace()).run(main)


def test_transpiled_ops_without_job_facts_keep_the_transpiler_error():
    """A trainer program's send ops (with send_varnames) in a program without a TrainerPlan are not taken for
    hand-built ones."""
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = layers.fill_constant([2], "float32", 1.0)
        main.global_block().append_op(type="send", inputs={"X": [x]}, outputs={},
                                      attrs={"epmap": ["127.0.0.1:1"], "send_varnames": ["x@GRAD"]})
    with pytest.raises(Exception, match="run only in a trainer program of pserver mode"):
        fluid.Executor(fluid.CPUPlace()).run(main)


def test_port_announced_when_run_begins_and_removed_after_a_failed_run(monkeypatch):
    """The endpoint is bound and its port file written before the lowering; a run that fails before serving
    (a bad distributed_mode, or a failure right after the announcement) releases them, and a taken endpoint
    is named."""
    import os
    from paddle_compat.backends.ps import layer_listen
    main = _server_program()
    main.global_block().ops[1]._set_attr("distributed_mode", 1)
    with pytest.raises(Exception, match="sync mode"):
        fluid.Executor(fluid.CPUPlace()).run(main)
    # the failed run released what it announced: no port file, no socket, SIGINT as before
    assert not os.path.exists(layer_listen.port_file())
    assert layer_listen.take("127.0.0.1:0") is None
    import signal
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    seen = []
    real_bind = layer_listen.bind_early

    def spy(program):
        real_bind(program)
        seen.append(int(open(layer_listen.port_file()).read()))
        raise RuntimeError("stop after the announcement")
    monkeypatch.setattr(layer_listen, "bind_early", spy)
    with pytest.raises(RuntimeError, match="stop after"):
        fluid.Executor(fluid.CPUPlace()).run(_server_program())
    assert seen and seen[0] > 0 and not os.path.exists(layer_listen.port_file())
    monkeypatch.undo()
    taken = __import__("socket").socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    busy = _server_program("127.0.0.1:%d" % taken.getsockname()[1])
    with pytest.raises(OSError, match="cannot listen on its endpoint"):
        fluid.Executor(fluid.CPUPlace()).run(busy)
    taken.close()
