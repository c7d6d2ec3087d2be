"""Role makers: who this process is in the job (worker or server, its index, the endpoints).

Every role maker resolves through one pure function, backends.cluster.resolve_cluster(env, is_collective,
explicit) -> ClusterSpec (frozen); the classes here only choose its inputs and expose Paddle's methods.
Missing or malformed variables raise errors that name the variable (Paddle raised bare KeyErrors).
"""

import os
import warnings

from .....backends.cluster import SERVER, WORKER, ClusterEnvError, resolve_cluster

__all__ = ["Role", "RoleMakerBase", "PaddleCloudRoleMaker", "UserDefinedCollectiveRoleMaker", "ClusterEnvError"]


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
        """Wait for every worker. Collective jobs use the trainers' group, formed by the startup program."""
        from .....backends import comm
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
        return resolve_cluster(dict(os.environ), is_collective=self._is_collective)


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
