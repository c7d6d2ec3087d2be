"""Role makers: who this process is in the job (worker or server, its index, the endpoints).

Every role maker resolves through one pure function, backends.cluster.resolve_cluster(env, is_collective,
explicit) -> ClusterSpec (frozen); the classes here only choose its inputs and expose Paddle's methods.
Missing or malformed variables raise errors that name the variable (Paddle raised bare KeyErrors).
"""

import os
import secrets
import socket
import warnings

from .....backends.cluster import (SERVER, WORKER, ClusterEnvError, mpi_launched, resolve_cluster,
                                  resolve_general)
from .....backends import cluster, job_env
from .....backends.ps import connections as ps_connections

__all__ = ["Role", "RoleMakerBase", "PaddleCloudRoleMaker", "UserDefinedRoleMaker", "UserDefinedCollectiveRoleMaker",
           "MPIRoleMaker", "MPISymetricRoleMaker", "GeneralRoleMaker", "ClusterEnvError"]


class Role:
    WORKER = WORKER
    SERVER = SERVER


class RoleMakerBase:
    """Base of every role maker: resolve once (generate_role), then answer from the frozen ClusterSpec."""

    def __init__(self):
        self._spec = None
        self._role_is_generated = False

    def _resolve(self):
        raise NotImplementedError("%s does not say how to resolve the cluster" % type(self).__name__)

    def generate_role(self):
        if not self._role_is_generated:
            spec = self._resolve()
            for note in spec.notes:
                warnings.warn(note, stacklevel=3)
            self._spec = spec
            self._role_is_generated = True

    _generate_role = generate_role

    @property
    def cluster(self):
        """The frozen ClusterSpec of this process."""
        self.generate_role()
        return self._spec

    def is_worker(self):
        return self.cluster.role == Role.WORKER

    def is_server(self):
        return self.cluster.role == Role.SERVER

    def is_first_worker(self):
        return self.cluster.is_first_worker

    def worker_num(self):
        return self.cluster.worker_num

    def worker_index(self):
        return self.cluster.current_id if self.is_worker() else -1

    def server_index(self):
        return self.cluster.current_id if self.is_server() else -1

    def server_num(self):
        return len(self.cluster.server_endpoints)

    def role_id(self):
        return self.cluster.current_id

    def get_trainer_endpoints(self):
        return list(self.cluster.worker_endpoints)

    def get_pserver_endpoints(self):
        return list(self.cluster.server_endpoints)

    def get_current_endpoint(self):
        return self.cluster.current_endpoint

    def barrier_worker(self):
        """Wait for every worker. Collective jobs use the trainers' group, pserver-mode jobs meet at pserver 0;
        either way the group forms when the startup program runs."""
        if not self.cluster.is_collective:
            conn = ps_connections.joined()
            if conn is None:
                raise RuntimeError("barrier_worker: this worker has not joined its pservers yet; run "
                                   "fleet.startup_program first")
            conn.worker_barrier()
            return
        from .....backends import comm   # kept in a function: loads torch.distributed (collective mode only)
        c = comm.any_communicator()
        if c is None:
            raise RuntimeError("barrier_worker: no trainer group yet; run the transpiled startup program first")
        c.barrier()

    def barrier_all(self):
        self.barrier_worker()

    def to_string(self):
        s = self.cluster
        return "role: %s, current_id: %d, worker_endpoints: %s, server_endpoints: %s" % (
            "worker" if s.role == Role.WORKER else "server", s.current_id, ",".join(s.worker_endpoints),
            ",".join(s.server_endpoints))

    __repr__ = to_string


class PaddleCloudRoleMaker(RoleMakerBase):
    """Roles from the environment: PADDLE_TRAINER_ID, PADDLE_TRAINER_ENDPOINTS, PADDLE_CURRENT_ENDPOINT,
    PADDLE_TRAINERS_NUM (as set by the launcher); under torchrun RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT."""

    def __init__(self, is_collective=False, **kwargs):
        super().__init__()
        self._is_collective = bool(is_collective)
        self._kwargs = kwargs

    def _resolve(self):
        env = dict(os.environ)
        mpi = None
        if self._is_collective and mpi_launched(env) and not _has_explicit_endpoints(env):
            mpi = _gather_mpi_facts(_mpi_comm())   # mpirun without PADDLE_*/MASTER_*: ask the ranks
        return resolve_cluster(env, is_collective=self._is_collective, mpi=mpi)


def _has_explicit_endpoints(env):
    return any(k in env for k in (cluster.TRAINER_ENDPOINTS_ENV, cluster.TRAINER_ID_ENV, "RANK", "MASTER_ADDR"))


class UserDefinedRoleMaker(RoleMakerBase):
    """Roles given in code for pserver mode: this process's id and role, the worker count, every server."""

    def __init__(self, current_id=0, role=Role.WORKER, worker_num=0, server_endpoints=None):
        super().__init__()
        # validated now, as Paddle did, so a bad argument fails where it is written
        self._spec = resolve_cluster({}, explicit={"kind": "user_defined", "current_id": current_id, "role": role,
                                                   "worker_num": worker_num, "server_endpoints": server_endpoints})
        self._role_is_generated = True

    def _resolve(self):
        return self._spec


class GeneralRoleMaker(RoleMakerBase):
    """Roles from PADDLE_PSERVERS_IP_PORT_LIST, PADDLE_TRAINER_ENDPOINTS, TRAINING_ROLE, PADDLE_TRAINER_ID and
    PADDLE_PSERVER_ID (or POD_IP + PADDLE_PORT). Paddle's keyword arguments for its HDFS/gloo rendezvous (path,
    hdfs_name, hdfs_ugi, init/run timeouts) are accepted; barriers here use MPI or the job's own groups."""

    def __init__(self, **kwargs):
        super().__init__()
        self._kwargs = kwargs

    def _resolve(self):
        return resolve_general(dict(os.environ))


def _mpi():
    try:
        from mpi4py import MPI   # kept in a function: mpi4py (and an MPI library) load only for MPI role makers
    except ImportError:
        raise ImportError("MPI role makers need mpi4py (pip install mpi4py, plus an MPI such as `pip install mpich`)")
    return MPI


def _mpi_comm():
    return _mpi().COMM_WORLD


def _free_port(ip):
    s = socket.socket()
    try:
        s.bind((ip, 0))
        return s.getsockname()[1]
    finally:
        s.close()


def _gather_mpi_facts(comm, symmetric=False):
    """Each rank's address and a port free on it, exchanged over MPI. All ranks on one host use 127.0.0.1
    (never a public address for a one-machine job); POD_IP overrides."""
    host = socket.gethostname()
    hosts = comm.allgather(host)
    ip = os.environ.get(cluster.POD_IP_ENV) or ("127.0.0.1" if len(set(hosts)) == 1 else socket.gethostbyname(host))
    pairs = comm.allgather((ip, _free_port(ip)))
    return {"rank": comm.Get_rank(), "size": comm.Get_size(), "ips": [p[0] for p in pairs],
            "ports": [p[1] for p in pairs], "symmetric": symmetric}


class MPIRoleMaker(RoleMakerBase):
    """mpi4py underneath: rank, size, gathers, barriers and allreduce over MPI.COMM_WORLD."""

    def __init__(self):
        super().__init__()
        self._comm = _mpi_comm()
        self._node_type_comm = None

    def _get_rank(self):
        return self._comm.Get_rank()

    def _get_size(self):
        return self._comm.Get_size()

    def _all_gather(self, obj):
        return self._comm.allgather(obj)

    def _worker_gather(self, obj):
        return self._node_comm().allgather(obj) if self.is_worker() else None

    def _barrier_all(self):
        self._comm.barrier()

    def _finalize(self):
        pass

    def generate_role(self):
        if not self._role_is_generated:
            super().generate_role()
            # Split is collective over COMM_WORLD: every rank takes part here, once (as Paddle did)
            self._node_type_comm = self._comm.Split(self._spec.role)
            self._hand_out_job_key()

    def _hand_out_job_key(self):
        """No job key given: rank 0 makes one and MPI hands it to every rank (hosts need not share a home
        for the per-user key file). Collective over COMM_WORLD, like Split above."""
        given = job_env.user_gave_key(os.environ)
        if self._comm.allreduce(0 if given else 1) == 0:
            return
        token = self._comm.bcast(secrets.token_hex(32) if self._comm.Get_rank() == 0 else None, root=0)
        if not given:
            os.environ[job_env.TOKEN_ENV] = token

    _generate_role = generate_role

    def _node_comm(self):
        self.generate_role()
        return self._node_type_comm

    def barrier_worker(self):
        if self.is_worker():
            self._node_comm().barrier()

    def barrier_server(self):
        if self.is_server():
            self._node_comm().barrier()

    def barrier_all(self):
        self._comm.barrier()

    def all_reduce_worker(self, value, op="sum"):
        """Reduce a number or numpy array over the workers (Paddle's _all_reduce); every worker gets it."""
        MPI = _mpi()
        ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}
        if op not in ops:
            raise ValueError("all_reduce_worker: op must be one of %s, got %r" % (sorted(ops), op))
        return self._node_comm().allreduce(value, op=ops[op])

    def _resolve(self):
        return resolve_cluster(dict(os.environ), is_collective=False, mpi=_gather_mpi_facts(self._comm, True))


class MPISymetricRoleMaker(MPIRoleMaker):
    """Two processes per node under mpirun: even ranks are pservers, odd ranks trainers; index = rank // 2.
    (Paddle's spelling of the class name is kept.)"""


class UserDefinedCollectiveRoleMaker(RoleMakerBase):
    """Roles given in code: this worker's index and every worker's endpoint."""

    def __init__(self, current_id=0, worker_endpoints=None):
        super().__init__()
        # validate now, as Paddle did, so a bad argument fails where it is written
        self._spec = resolve_cluster({}, is_collective=True,
                                     explicit={"current_id": current_id, "worker_endpoints": worker_endpoints})
        self._role_is_generated = True

    def _resolve(self):
        return self._spec
