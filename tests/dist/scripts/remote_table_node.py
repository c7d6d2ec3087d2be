"""Hand-built servers used as stores, as Paddle 1.8's op tests use them (test_lookup_remote_table_op,
test_nce_remote_table_op, test_recv_save_op). Runs under Paddle 1.8.5 too (make_remote_tables.py records it).

    python remote_table_node.py server <id> <rows>
        a listen_and_serv server on 127.0.0.1:0 (its port in /tmp/paddle.<pid>.port), its variable `table`
        [rows, 4] filled with row r, column c = 100 * id + r + c / 8; serves until SIGINT
    python remote_table_node.py client <ep0> <ep1> <rows0> <dir>
        lookup_table with remote_prefetch against server 0 alone and against both (ids keep their LoD), nce
        with remote_prefetch against both, and save_persistables of a program whose `table` is sliced over
        both (recv_save), loaded back whole and by seek; prints `RESULT <json>`
"""

import json
import os
import sys

import numpy as np

import paddle.fluid as fluid
import paddle.fluid.core as core
from paddle.fluid.framework import Program, program_guard
from paddle.fluid.op import Operator
from paddle.fluid.transpiler.details import VarStruct, VarsDistributed

WIDTH = 4


def server(sid, rows):
    scope = core.Scope()
    program = Program()
    with fluid.scope_guard(scope):
        with program_guard(program, startup_program=Program()):
            place = fluid.CPUPlace()
            table = (100.0 * sid + np.arange(rows, dtype="float32")[:, None] +
                     np.arange(WIDTH, dtype="float32")[None, :] / 8.0).astype("float32")
            scope.var("table").get_tensor().set(table, place)
            block = program._create_block(program.global_block().idx)
            program.global_block().append_op(
                type="listen_and_serv", inputs={"X": []}, outputs={},
                attrs={"optimize_blocks": [block], "endpoint": "127.0.0.1:0", "Fanin": 1,
                       "distributed_mode": 0, "grad_to_block_id": []})
            fluid.Executor(place).run(program)
    print("SERVED", flush=True)


def _lookup(eps, sections, ids, lod, place):
    scope = core.Scope()
    with fluid.scope_guard(scope):
        scope.var("W").get_tensor().set(np.full((sum(sections), WIDTH), -1.0, dtype="float32"), place)
        t = scope.var("Ids").get_tensor()
        t.set(np.array(ids, dtype="int64").reshape(-1, 1), place)
        t.set_lod(lod)
        out = scope.var("Out").get_tensor()
        Operator("lookup_table", W="W", Ids="Ids", Out="Out", remote_prefetch=True, epmap=eps,
                 table_names=["table"] * len(eps), height_sections=sections).run(scope, place)
        return {"out": np.array(out).tolist(), "lod": out.lod()}


def _nce(eps, sections, place):
    scope = core.Scope()
    rng = np.random.RandomState(7)
    with fluid.scope_guard(scope):
        feeds = {"Input": rng.rand(4, WIDTH).astype("float32") - 0.5,
                 "Weight": np.zeros((sum(sections), WIDTH), dtype="float32"),
                 "Bias": rng.rand(sum(sections), 1).astype("float32"),
                 "SampleWeight": rng.rand(4, 1).astype("float32"),
                 "Label": np.array([[0], [4], [2], [3]], dtype="int64")}
        for n, v in feeds.items():
            scope.var(n).get_tensor().set(v, place)
        for n in ("Cost", "SampleLogits", "SampleLabels"):
            scope.var(n).get_tensor()
        Operator("nce", Input="Input", Weight="Weight", Label="Label", Bias="Bias", Cost="Cost",
                 SampleLogits="SampleLogits", SampleLabels="SampleLabels", SampleWeight="SampleWeight",
                 num_total_classes=sum(sections), num_neg_samples=2, custom_neg_classes=[1, 3], sampler=0,
                 seed=0, is_sparse=True, remote_prefetch=True, epmap=eps, table_names=["table"] * len(eps),
                 height_sections=sections).run(scope, place)
        return {n: np.array(scope.find_var(n).get_tensor()).tolist() for n in ("Cost", "SampleLogits", "SampleLabels")}


def _recv_save(eps, rows0, rows1, dirname, place):
    exe = fluid.Executor(place)
    overview = VarsDistributed()
    origin = VarStruct(name="table", type=core.VarDesc.VarType.LOD_TENSOR, shape=[rows0 + rows1, WIDTH],
                       dtype="float32", lod_level=0, persistable=True)
    for i, (ep, rows) in enumerate(zip(eps, (rows0, rows1))):
        piece = VarStruct(name="table", type=core.VarDesc.VarType.LOD_TENSOR, shape=[rows, WIDTH],
                          dtype="float32", lod_level=0, persistable=True)
        overview.add_distributed_var(origin_var=origin, slice_var=piece, block_id=i, offset=i * rows0 * WIDTH,
                                     is_slice=True, vtype="RemotePrefetch", endpoint=ep)
    program = Program()
    program._is_distributed = True
    program._is_chief = True
    program._parameters_on_pservers = overview
    fluid.io.save_persistables(exe, dirname, program)

    load = Program()
    block = load.global_block()
    whole = block.create_var(name="whole", type=core.VarDesc.VarType.LOD_TENSOR, shape=[rows0 + rows1, WIDTH],
                             dtype="float32", persistable=True)
    part = block.create_var(name="part", type=core.VarDesc.VarType.LOD_TENSOR, shape=[3, WIDTH],
                            dtype="float32", persistable=True)
    path = os.path.join(dirname, "table")
    block.append_op(type="load", inputs={}, outputs={"Out": [whole]}, attrs={"file_path": path})
    block.append_op(type="load", inputs={}, outputs={"Out": [part]},
                    attrs={"file_path": path, "seek": (rows0 - 1) * WIDTH, "shape": [3, WIDTH]})
    scope = core.Scope()
    with fluid.scope_guard(scope):
        exe.run(load)
        return {"files": sorted(os.listdir(dirname)),
                "whole": np.array(scope.find_var("whole").get_tensor()).tolist(),
                "part": np.array(scope.find_var("part").get_tensor()).tolist()}


def client(ep0, ep1, rows0, dirname):
    place = fluid.CPUPlace()
    rows1 = 2 * rows0
    rec = {
        "lookup_one": _lookup([ep0], [rows0], [1, 2, 4, 2], [[0, 1, 3, 4]], place),
        "lookup_two": _lookup([ep0, ep1], [rows0, rows1], [1, rows0 + 1, 0, rows0 + 3, rows0 - 1],
                              [[0, 2, 5]], place),
        "nce_two": _nce([ep0, ep1], [2, 3], place),
        "recv_save": _recv_save([ep0, ep1], rows0, rows1, dirname, place),
    }
    print("RESULT " + json.dumps(rec), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(int(sys.argv[2]), int(sys.argv[3]))
    else:
        client(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
