"""Who owns a trainer's connection to its pserver job (backends/ps/connections.py): made at an Executor's
first RPC op, shared by the Executors of one job and closed by the last of them, refused for a second job
while one is joined, and found without an Executor by one lookup that will not guess between two jobs.

The pservers are a fake wire connection that records what it is told (no processes, no sockets)."""

import gc
import threading

import pytest

import paddle_compat as fluid
from paddle_compat.backends.ps import client as client_mod
from paddle_compat.backends.ps import comm_plan, connections
from paddle_compat.backends.ps.errors import PsError
from paddle_compat.backends.ps.records import TrainerPlan, trainer_plan
from paddle_compat.fluid.incubate.fleet.base import role_maker as rm

JOB_A = ("127.0.0.1:7001", "127.0.0.1:7002")
JOB_B = ("127.0.0.1:7101",)


class _Done:
    def __init__(self, value=None):
        self.value = value

    def wait(self):
        return self.value


class FakeConnection:
    """Stands for wire.client.Connection: every call is answered at once and recorded."""
    made = []

    def __init__(self, endpoint, identity, deadline, what=None, key=None, on_lost=None, timeout=None):
        self.endpoint, self.identity = endpoint, identity
        self.calls, self.closed = [], False
        FakeConnection.made.append(self)

    def call_async(self, name, *args):
        self.calls.append((name,) + args)
        return _Done(True)

    def close(self):
        self.closed = True


@pytest.fixture(autouse=True)
def fake_wire(monkeypatch):
    FakeConnection.made = []
    monkeypatch.setattr(client_mod, "Connection", FakeConnection)
    monkeypatch.setattr(client_mod.atexit, "register", lambda fn: None)   # the test closes what it opens
    yield
    for conn in connections.live():
        conn.close()
    assert connections.live() == []


def _plan(endpoints=JOB_A, trainer_id=0, trainers=2):
    return TrainerPlan(trainer_id=trainer_id, trainers=trainers, pserver_endpoints=tuple(endpoints), mode="sync",
                       plan_digest="d")


def _told(handler):
    """(endpoint, trainer id) of every `handler` call the fake pservers received (the pservers are called at
    once: sorted)."""
    return sorted((c.endpoint, call[1]) for c in FakeConnection.made for call in c.calls if call[0] == handler)


def test_an_executors_first_rpc_op_makes_its_connection():
    """The comm plan of a transpiled trainer block takes the connection of the Executor lowering it."""
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.layers.data(name="x", shape=[4], dtype="float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 2))
        fluid.optimizer.SGD(0.1).minimize(loss)
    t = fluid.DistributeTranspiler()
    t.transpile(1, program=main, startup_program=start, pservers=",".join(JOB_A), trainers=2)
    prog = t.get_trainer_program(wait_port=False)
    exe = fluid.Executor(fluid.CPUPlace())

    class Ctx:
        program, block, device, executor = prog, prog.global_block(), "cpu", exe

    assert connections.live() == []
    plan = comm_plan.CommPlan(Ctx())
    conn = plan.client
    assert connections.live() == [conn] and set(conn.holders) == {exe}
    assert conn.key == connections.job_key(trainer_plan(prog)) and conn.trainer_id == 1
    assert not conn.joined and FakeConnection.made == []        # nothing goes over the wire before a call
    assert comm_plan.CommPlan(Ctx()).client is conn             # another block of the same executor
    exe.close()
    assert conn.closed and connections.live() == []


def test_executors_of_one_job_share_it_and_the_last_close_tells_the_pservers():
    startup_exe, train_exe = fluid.Executor(), fluid.Executor()
    plan = _plan()
    conn = connections.for_executor(startup_exe, plan)
    conn.ensure_joined()
    assert connections.for_executor(train_exe, plan) is conn
    assert connections.for_executor(train_exe, plan) is conn and len(train_exe._closers) == 1   # held once
    assert [c.identity.split("|")[0] for c in FakeConnection.made] == ["trainer 0", "trainer 0"]
    assert connections.joined() is conn
    startup_exe.close()
    assert not conn.closed and _told("done") == []          # the training executor still runs this trainer
    assert connections.joined() is conn
    train_exe.close()
    assert conn.closed and _told("done") == [(JOB_A[0], 0), (JOB_A[1], 0)]
    assert all(c.closed for c in FakeConnection.made)
    assert connections.joined() is None and connections.live() == []
    train_exe.close()                                        # closing again says nothing more
    assert len(_told("done")) == 2


def test_an_executor_after_the_last_close_gets_a_new_connection():
    exe1 = fluid.Executor()
    first = connections.for_executor(exe1, _plan())
    first.ensure_joined()
    exe1.close()
    exe2 = fluid.Executor()
    second = connections.for_executor(exe2, _plan())
    assert second is not first and not second.closed and set(second.holders) == {exe2}
    with pytest.raises(RuntimeError, match="Executor was closed"):
        connections.for_executor(exe1, _plan())
    with pytest.raises(PsError, match=r"run under an Executor"):
        connections.for_executor(None, _plan())
    exe2.close()


def test_hogwild_threads_of_one_executor_share_one_connection():
    exe = fluid.Executor()
    got, barrier = [], threading.Barrier(8)

    def lower():
        barrier.wait()
        got.append(connections.for_executor(exe, _plan()))
    threads = [threading.Thread(target=lower) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and len({id(c) for c in got}) == 1 and len(exe._closers) == 1
    exe.close()
    assert got[0].closed


def test_a_second_job_is_refused_while_one_is_joined():
    exe_a, exe_b = fluid.Executor(), fluid.Executor()
    conn_a = connections.for_executor(exe_a, _plan(JOB_A))
    conn_a.ensure_joined()
    with pytest.raises(PsError, match=r"already trainer 0 of a job with pservers 127.0.0.1:7001,127.0.0.1:7002.*"
                                      r"\(pservers 127.0.0.1:7101\)"):
        connections.for_executor(exe_b, _plan(JOB_B))
    # the same pservers with another trainer id are another job too
    with pytest.raises(PsError, match="already trainer 0"):
        connections.for_executor(exe_b, _plan(JOB_A, trainer_id=1))
    exe_a.close()
    conn_b = connections.for_executor(exe_b, _plan(JOB_B))     # once the first job's executor closed
    conn_b.ensure_joined()
    assert connections.joined() is conn_b
    exe_b.close()


def test_a_second_job_made_before_either_joined_is_refused_at_its_join():
    exe_a, exe_b = fluid.Executor(), fluid.Executor()
    conn_a = connections.for_executor(exe_a, _plan(JOB_A))
    conn_b = connections.for_executor(exe_b, _plan(JOB_B))      # neither has called a pserver yet
    conn_a.ensure_joined()
    with pytest.raises(PsError, match="already trainer 0 of a job with pservers 127.0.0.1:7001"):
        conn_b.ensure_joined()
    assert not conn_b.joined and sorted(c.endpoint for c in FakeConnection.made) == list(JOB_A)
    exe_a.close()
    exe_b.close()


def test_the_lookup_names_both_jobs_rather_than_guess(monkeypatch):
    # the refusal above keeps a process to one joined job; without it the lookup still does not pick one
    monkeypatch.setattr(connections, "_refuse_other_job", lambda conn: None)
    exe_a, exe_b = fluid.Executor(), fluid.Executor()
    connections.for_executor(exe_a, _plan(JOB_A)).ensure_joined()
    connections.for_executor(exe_b, _plan(JOB_B, trainer_id=1, trainers=3)).ensure_joined()
    with pytest.raises(PsError, match=r"joined to 2 pserver jobs \(trainer 0 of 2 with pservers "
                                      r"127.0.0.1:7001,127.0.0.1:7002; trainer 1 of 3 with pservers 127.0.0.1:7101\)"):
        connections.joined()
    exe_b.close()
    assert connections.joined().endpoints == list(JOB_A)
    exe_a.close()


def test_stop_worker_closes_the_joined_connection_whoever_holds_it():
    exe1, exe2 = fluid.Executor(), fluid.Executor()
    conn = connections.for_executor(exe1, _plan())
    connections.for_executor(exe2, _plan())
    assert connections.close_joined() is False                 # not joined yet: nothing to tell
    conn.ensure_joined()
    assert connections.close_joined() is True
    assert conn.closed and len(_told("done")) == 2 and connections.joined() is None
    exe1.close()
    exe2.close()
    assert len(_told("done")) == 2                               # the executors' closes add nothing


def test_interpreter_exit_closes_a_connection_never_closed():
    exe = fluid.Executor()
    conn = connections.for_executor(exe, _plan())
    conn.ensure_joined()
    conn._at_exit()
    assert conn.closed and _told("done") == [(JOB_A[0], 0), (JOB_A[1], 0)] and connections.live() == []


def test_barrier_worker_meets_at_pserver_0_over_the_joined_connection():
    role = rm.UserDefinedRoleMaker(current_id=0, worker_num=2, server_endpoints=list(JOB_A))
    role.generate_role()
    with pytest.raises(RuntimeError, match="run fleet.startup_program first"):
        role.barrier_worker()
    exe = fluid.Executor()
    connections.for_executor(exe, _plan()).ensure_joined()
    role.barrier_worker()
    assert _told("worker_barrier") == [(JOB_A[0], 0)]
    exe.close()


def test_the_communicator_holds_the_connection_beside_the_executors():
    from paddle_compat.fluid.communicator import Communicator
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.layers.data(name="x", shape=[4], dtype="float32")
        fluid.optimizer.SGD(0.1).minimize(fluid.layers.mean(fluid.layers.fc(x, 2)))
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=start, pservers=",".join(JOB_A), trainers=2)
    prog = t.get_trainer_program(wait_port=False)
    comm = Communicator(prog)
    comm.start()
    exe = fluid.Executor()
    conn = connections.for_executor(exe, trainer_plan(prog))
    assert comm.is_running() and connections.joined() is conn and set(conn.holders) == {comm, exe}
    exe.close()
    assert comm.is_running() and _told("done") == []
    comm.stop()
    assert not comm.is_running() and len(_told("done")) == 2


def test_a_save_uses_the_jobs_connection_without_holding_it():
    """fluid.io's distributed save and the table export read the job over the training Executor's connection;
    the Executor they were given holds one only when the process has none."""
    train_exe, save_exe = fluid.Executor(), fluid.Executor()
    conn = connections.for_executor(train_exe, _plan())
    assert connections.for_job(_plan(), save_exe) is conn and set(conn.holders) == {train_exe}
    train_exe.close()
    assert conn.closed
    fresh = connections.for_job(_plan(), save_exe)           # nothing live: the save's executor holds a new one
    assert fresh is not conn and set(fresh.holders) == {save_exe}
    save_exe.close()
    assert fresh.closed


def test_a_dropped_executor_stops_holding():
    kept = fluid.Executor()
    conn = connections.for_executor(kept, _plan())
    dropped = fluid.Executor()
    connections.for_executor(dropped, _plan())
    assert len(conn.holders) == 2
    del dropped
    gc.collect()
    assert set(conn.holders) == {kept}
    kept.close()
    assert conn.closed
