"""A program and its clone compare equal attribute by attribute, as Paddle 1.8's test_desc_clone checks them
(Program.__dict__ items, each op's attributes): sub-block attributes compare by block index, a program's
identity and edit count are not in its __dict__; a changed attribute still makes two ops differ."""

import copy

import numpy as np

import paddle_compat.fluid as fluid
from paddle_compat.ir.operator import Attrs


def _pserver_programs():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[4], dtype="float32")
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        loss = fluid.layers.mean(fluid.layers.square_error_cost(fluid.layers.fc(x, 1), y))
        fluid.optimizer.SGD(0.1).minimize(loss)
    t = fluid.DistributeTranspiler()
    t.transpile(trainer_id=0, program=main, startup_program=startup, pservers="127.0.0.1:6190", trainers=1)
    ps = t.get_pserver_program("127.0.0.1:6190")
    return ps, t.get_startup_program("127.0.0.1:6190", ps)


def _dicts_equal(a, b):
    for k, v in a.__dict__.items():
        if k == "blocks":
            continue
        if v != b.__dict__[k]:
            return k
    return None


def test_clone_of_pserver_program_compares_equal():
    ps, startup = _pserver_programs()
    for prog in (ps, startup):
        clone = prog.clone()
        assert _dicts_equal(clone, prog) is None
        assert len(clone.blocks) == len(prog.blocks)
        for b1, b2 in zip(clone.blocks, prog.blocks):
            for o1, o2 in zip(b1.ops, b2.ops):
                assert o1.attrs == o2.attrs, o1.type
                assert not (o1.attrs != o2.attrs)
    listen = [op for op in ps.global_block().ops if op.type == "listen_and_serv"][0]
    copy = [op for op in ps.clone().global_block().ops if op.type == "listen_and_serv"][0]
    # the clone's op holds the clone's blocks: different objects, same indices
    assert copy.attrs["optimize_blocks"][0] is not listen.attrs["optimize_blocks"][0]
    assert copy.attrs == listen.attrs


def test_changed_attribute_differs():
    ps, _ = _pserver_programs()
    clone = ps.clone()
    op1 = clone.global_block().ops[0]
    op2 = ps.global_block().ops[0]
    op1._set_attr("Fanin", 7)
    assert op1.attrs != op2.attrs
    a = Attrs({"v": np.array([1.0, 2.0])})
    assert a == {"v": np.array([1.0, 2.0])} and a != {"v": np.array([1.0, 3.0])}
    assert a != {"v": np.array([1.0, 2.0, 3.0])} and a != {"w": 1}


def test_program_identity_is_not_in_dict():
    p = fluid.Program()
    assert "_uid" not in p.__dict__ and "_version" not in p.__dict__
    q = p.clone()
    assert q._uid != p._uid
    r = copy.copy(p)
    assert r._uid == p._uid and r._version == p._version
