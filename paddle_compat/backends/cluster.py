"""Who is who in a distributed job: one pure function from (explicit arguments, environment, MPI facts) to a
frozen ClusterSpec. Role makers (fluid/incubate/fleet/base/role_maker.py) only gather its inputs (os.environ,
mpi4py) and call it; nothing here reads os.environ, talks to MPI, resolves host names or imports torch.

Order of sources: explicit arguments (UserDefined*RoleMaker), then MPI facts for MPISymetricRoleMaker, then
Paddle's launcher variables (PADDLE_*, TRAINING_ROLE), then torchrun's (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT), then MPI's rank variables (PMI_RANK / OMPI_COMM_WORLD_RANK ...) with endpoints from MPI facts.
A missing or malformed variable raises ClusterEnvError naming it (Paddle raised a bare KeyError or asserted).
"""

import collections

from . import job_env
from .endpoints import parse_endpoint, parse_endpoints

__all__ = ["ClusterSpec", "ClusterEnvError", "resolve_cluster", "resolve_general", "mpi_launched", "WORKER", "SERVER",
           "TRAINER_ID_ENV", "TRAINERS_NUM_ENV", "TRAINER_ENDPOINTS_ENV", "CURRENT_ENDPOINT_ENV", "PSERVERS_ENV",
           "PSERVER_ID_ENV", "PORT_ENV", "POD_IP_ENV", "ROLE_ENV", "PADDLE_ROLE_ENV", "TOKEN_ENV", "TOKEN_FILE_ENV",
           "role_of", "collective_trainer_env", "pserver_env", "ps_trainer_env"]

WORKER, SERVER = 1, 2

# -- the environment contract: Paddle 1.8's launcher variables, named once here ------------------------------
TRAINER_ID_ENV = "PADDLE_TRAINER_ID"                # this trainer's index
TRAINERS_NUM_ENV = "PADDLE_TRAINERS_NUM"            # how many trainers
TRAINER_ENDPOINTS_ENV = "PADDLE_TRAINER_ENDPOINTS"  # every trainer's ip:port (collective; GeneralRoleMaker)
CURRENT_ENDPOINT_ENV = "PADDLE_CURRENT_ENDPOINT"    # this process's ip:port
PSERVERS_ENV = "PADDLE_PSERVERS_IP_PORT_LIST"       # every pserver's ip:port
PSERVER_ID_ENV = "PADDLE_PSERVER_ID"                # this pserver's index (GeneralRoleMaker)
PORT_ENV = "PADDLE_PORT"                            # a pserver finds itself at POD_IP:PADDLE_PORT
POD_IP_ENV = "POD_IP"
ROLE_ENV = "TRAINING_ROLE"                          # TRAINER or PSERVER
PADDLE_ROLE_ENV = "PADDLE_TRAINING_ROLE"            # the same, as Paddle's launchers also set it
TOKEN_ENV, TOKEN_FILE_ENV = job_env.TOKEN_ENV, job_env.TOKEN_FILE_ENV   # the job key (job_env.py)


def role_of(env, default=None):
    """TRAINER / PSERVER from PADDLE_TRAINING_ROLE or TRAINING_ROLE (upper-cased), else `default`."""
    role = env.get(PADDLE_ROLE_ENV) or env.get(ROLE_ENV)
    return role.upper() if role else default


def collective_trainer_env(rank, endpoints):
    """What a collective launcher gives trainer `rank` of the trainers at `endpoints`."""
    return {TRAINER_ID_ENV: str(rank), CURRENT_ENDPOINT_ENV: endpoints[rank], TRAINERS_NUM_ENV: str(len(endpoints)),
            TRAINER_ENDPOINTS_ENV: ",".join(endpoints)}


def pserver_env(endpoints, index, trainers):
    """What a pserver-mode launcher gives pserver `index` of `endpoints` (a job of `trainers` trainers)."""
    ep = endpoints[index]
    host, _, port = ep.rpartition(":")
    return {PSERVERS_ENV: ",".join(endpoints), TRAINERS_NUM_ENV: str(trainers), ROLE_ENV: "PSERVER",
            PADDLE_ROLE_ENV: "PSERVER", PORT_ENV: port, POD_IP_ENV: host, PSERVER_ID_ENV: str(index),
            CURRENT_ENDPOINT_ENV: ep}


def ps_trainer_env(endpoints, trainer_id, trainers, pod_ip=None):
    """What a pserver-mode launcher gives trainer `trainer_id` (pservers at `endpoints`)."""
    out = {PSERVERS_ENV: ",".join(endpoints), TRAINERS_NUM_ENV: str(trainers), ROLE_ENV: "TRAINER",
           PADDLE_ROLE_ENV: "TRAINER", TRAINER_ID_ENV: str(trainer_id)}
    if pod_ip is not None:
        out[POD_IP_ENV] = pod_ip
    return out


class ClusterEnvError(ValueError):
    """A cluster variable or argument is missing or malformed; the message names it."""


_Spec = collections.namedtuple("ClusterSpec", [
    "role",               # WORKER or SERVER
    "current_id",         # this process's index among its role
    "worker_endpoints",   # tuple of "ip:port", trainer order
    "server_endpoints",   # tuple of "ip:port"
    "current_endpoint",   # this process's endpoint (None if it has none)
    "worker_num",
    "is_collective",
    "source",             # "explicit", "PADDLE_*", "torchrun"
    "notes",              # tuple of remarks on what was derived, for the role maker to warn about
])


class ClusterSpec(_Spec):
    """Frozen description of the job (a namedtuple: immutable, comparable, printable)."""
    __slots__ = ()

    @property
    def is_first_worker(self):
        return self.role == WORKER and self.current_id == 0


def resolve_cluster(env, is_collective=True, explicit=None, mpi=None):
    """env: a mapping of environment variables. explicit: a role maker's arguments ({"kind": "user_defined",
    ...} or {"kind": "user_defined_collective", ...}, or the collective form without "kind"). mpi: facts an MPI
    role maker gathered with mpi4py: {"rank", "size", "ips" (per rank), "ports" (per rank), "symmetric"}."""
    if explicit is not None:
        if explicit.get("kind") == "user_defined":
            return _ps_explicit(explicit)
        return _collective_explicit(explicit)
    if mpi is not None and mpi.get("symmetric"):
        return _mpi_symmetric(mpi)
    if not is_collective:
        return _ps_paddle(env, general=False)
    if TRAINER_ENDPOINTS_ENV in env or TRAINER_ID_ENV in env:
        return _collective_paddle(env)
    if "RANK" in env or "WORLD_SIZE" in env:
        return _collective_torchrun(env)
    if _mpi_rank_vars(env) is not None:
        return _collective_mpi(env, mpi)
    raise ClusterEnvError("collective role: set PADDLE_TRAINER_ID and PADDLE_TRAINER_ENDPOINTS (as "
                          "`python -m paddle_compat.distributed.launch` does), or run under torchrun (RANK, "
                          "WORLD_SIZE, MASTER_ADDR, MASTER_PORT) or mpirun; none of these is in the environment")


def resolve_general(env):
    """GeneralRoleMaker's contract: PADDLE_PSERVERS_IP_PORT_LIST, PADDLE_TRAINER_ENDPOINTS, TRAINING_ROLE,
    PADDLE_TRAINER_ID (trainers), PADDLE_PSERVER_ID or POD_IP + PADDLE_PORT (pservers)."""
    return _ps_paddle(env, general=True)


def _int(env, name, minimum=0):
    raw = env.get(name)
    if raw is None:
        raise ClusterEnvError("environment variable %s is not set" % name)
    try:
        v = int(str(raw).strip())
    except ValueError:
        raise ClusterEnvError("environment variable %s must be an integer, got %r" % (name, raw))
    if v < minimum:
        raise ClusterEnvError("environment variable %s must be >= %d, got %d" % (name, minimum, v))
    return v


def _worker_spec(current_id, endpoints, source, notes=()):
    return ClusterSpec(role=WORKER, current_id=current_id, worker_endpoints=tuple(endpoints), server_endpoints=(),
                       current_endpoint=endpoints[current_id], worker_num=len(endpoints), is_collective=True,
                       source=source, notes=tuple(notes))


def _collective_explicit(args):
    current_id, eps = args.get("current_id", 0), args.get("worker_endpoints")
    if not isinstance(current_id, int) or isinstance(current_id, bool):
        raise TypeError("current_id must be an int, got %r" % (current_id,))
    if current_id < 0:
        raise ValueError("current_id must be >= 0, got %d" % current_id)
    if not isinstance(eps, (list, tuple)) or not eps:
        raise ValueError("worker_endpoints must be a non-empty list of 'ip:port' strings, got %r" % (eps,))
    endpoints = parse_endpoints(list(eps), "worker_endpoints")
    if current_id >= len(endpoints):
        raise ValueError("current_id %d is out of range for %d worker_endpoints" % (current_id, len(endpoints)))
    return _worker_spec(current_id, endpoints, "explicit")


def _collective_paddle(env):
    role = env.get(PADDLE_ROLE_ENV, env.get(ROLE_ENV, "TRAINER"))
    if role != "TRAINER":
        raise ClusterEnvError("collective training runs trainers only, but PADDLE_TRAINING_ROLE/TRAINING_ROLE is %r"
                              % role)
    if TRAINER_ENDPOINTS_ENV not in env:
        raise ClusterEnvError("environment variable PADDLE_TRAINER_ENDPOINTS is not set (the comma-separated "
                              "'ip:port' list of every trainer)")
    try:
        endpoints = parse_endpoints(env[TRAINER_ENDPOINTS_ENV], TRAINER_ENDPOINTS_ENV)
    except (TypeError, ValueError) as e:
        raise ClusterEnvError("environment variable %s" % e)
    # Paddle defaulted a missing PADDLE_TRAINER_ID to 0: two trainers 0 then wait forever. Require it.
    tid = _int(env, TRAINER_ID_ENV)
    if tid >= len(endpoints):
        raise ClusterEnvError("PADDLE_TRAINER_ID=%d is out of range for the %d endpoints of PADDLE_TRAINER_ENDPOINTS"
                              % (tid, len(endpoints)))
    if TRAINERS_NUM_ENV in env and _int(env, TRAINERS_NUM_ENV, 1) != len(endpoints):
        raise ClusterEnvError("PADDLE_TRAINERS_NUM=%s but PADDLE_TRAINER_ENDPOINTS lists %d endpoints"
                              % (env[TRAINERS_NUM_ENV], len(endpoints)))
    if env.get(CURRENT_ENDPOINT_ENV):
        try:
            cur = parse_endpoint(env[CURRENT_ENDPOINT_ENV], CURRENT_ENDPOINT_ENV)
        except (TypeError, ValueError) as e:
            raise ClusterEnvError("environment variable %s" % e)
        if cur != endpoints[tid]:
            raise ClusterEnvError("PADDLE_CURRENT_ENDPOINT=%s is not entry %d (PADDLE_TRAINER_ID) of "
                                  "PADDLE_TRAINER_ENDPOINTS, which is %s" % (cur, tid, endpoints[tid]))
    return _worker_spec(tid, endpoints, "PADDLE_*")


def _collective_torchrun(env):
    rank, world = _int(env, "RANK"), _int(env, "WORLD_SIZE", 1)
    if rank >= world:
        raise ClusterEnvError("RANK=%d is out of range for WORLD_SIZE=%d" % (rank, world))
    addr = env.get("MASTER_ADDR")
    if not addr:
        raise ClusterEnvError("environment variable MASTER_ADDR is not set (torchrun sets it)")
    port = _int(env, "MASTER_PORT", 1)
    if port + world >= 65536:
        raise ClusterEnvError("MASTER_PORT=%d leaves no room for %d trainer ports above it" % (port, world))
    # torchrun's own store holds MASTER_PORT; trainer r is named MASTER_ADDR:MASTER_PORT+1+r. Right on one node;
    # across nodes the other trainers' addresses are unknown here, so set PADDLE_* there.
    endpoints = ["%s:%d" % (addr, port + 1 + r) for r in range(world)]
    note = ("PADDLE_TRAINER_* are not set: trainer endpoints derived from torchrun's MASTER_ADDR/MASTER_PORT as "
            "%s (MASTER_PORT+1+rank); trainer 0 listens on %s. On several nodes set PADDLE_TRAINER_ENDPOINTS and "
            "PADDLE_TRAINER_ID instead" % (",".join(endpoints), endpoints[0]))
    return _worker_spec(rank, endpoints, "torchrun", [note])


# ---- parameter-server jobs -------------------------------------------------------------------------------
def _endpoints_var(env, name, required=True):
    if name not in env or not str(env[name]).strip():
        if required:
            raise ClusterEnvError("environment variable %s is not set (the comma-separated 'ip:port' list)" % name)
        return ()
    try:
        return tuple(parse_endpoints(env[name], name))
    except (TypeError, ValueError) as e:
        raise ClusterEnvError("environment variable %s" % e)


def _ps_paddle(env, general):
    servers = _endpoints_var(env, PSERVERS_ENV)
    workers = _endpoints_var(env, TRAINER_ENDPOINTS_ENV, required=general)
    if general:
        worker_num = len(workers)
    else:
        worker_num = _int(env, TRAINERS_NUM_ENV, 1)
        if workers and len(workers) != worker_num:
            raise ClusterEnvError("PADDLE_TRAINERS_NUM=%d but PADDLE_TRAINER_ENDPOINTS lists %d endpoints"
                                  % (worker_num, len(workers)))
    role = env.get(ROLE_ENV, env.get(PADDLE_ROLE_ENV))
    if role is None:
        raise ClusterEnvError("environment variable TRAINING_ROLE is not set (TRAINER or PSERVER)")
    source = "GeneralRoleMaker env" if general else "PADDLE_*"
    if role == "TRAINER":
        tid = _int(env, TRAINER_ID_ENV)
        if tid >= worker_num:
            raise ClusterEnvError("PADDLE_TRAINER_ID=%d is out of range for %d trainers (%s)"
                                  % (tid, worker_num, "PADDLE_TRAINER_ENDPOINTS" if general else "PADDLE_TRAINERS_NUM"))
        return ClusterSpec(role=WORKER, current_id=tid, worker_endpoints=workers, server_endpoints=servers,
                           current_endpoint=workers[tid] if workers else None, worker_num=worker_num,
                           is_collective=False, source=source, notes=())
    if role != "PSERVER":
        raise ClusterEnvError("environment variable TRAINING_ROLE must be TRAINER or PSERVER, got %r" % role)
    if general and env.get(PSERVER_ID_ENV) not in (None, ""):
        sid = _int(env, PSERVER_ID_ENV)
        if sid >= len(servers):
            raise ClusterEnvError("PADDLE_PSERVER_ID=%d is out of range for the %d endpoints of "
                                  "PADDLE_PSERVERS_IP_PORT_LIST" % (sid, len(servers)))
    else:
        ip = env.get(POD_IP_ENV)
        if not ip:
            raise ClusterEnvError("environment variable POD_IP is not set (a pserver finds itself in "
                                  "PADDLE_PSERVERS_IP_PORT_LIST by POD_IP:PADDLE_PORT)")
        port = _int(env, PORT_ENV, 1)
        me = "%s:%d" % (ip, port)
        if me not in servers:
            raise ClusterEnvError("POD_IP:PADDLE_PORT is %s, which is not in PADDLE_PSERVERS_IP_PORT_LIST (%s)"
                                  % (me, ",".join(servers)))
        sid = servers.index(me)
    return ClusterSpec(role=SERVER, current_id=sid, worker_endpoints=workers, server_endpoints=servers,
                       current_endpoint=servers[sid], worker_num=worker_num, is_collective=False, source=source,
                       notes=())


def _ps_explicit(args):
    """UserDefinedRoleMaker: Paddle's checks (TypeError / ValueError), plus trainer id < worker_num."""
    current_id, role = args.get("current_id", 0), args.get("role", WORKER)
    worker_num, servers = args.get("worker_num", 0), args.get("server_endpoints")
    if not isinstance(servers, list):
        raise TypeError("server_endpoints must be a list of 'ip:port' strings, got %r" % (servers,))
    if not servers:
        raise ValueError("server_endpoints must not be empty")
    if len(servers) != len(set(servers)):
        raise ValueError("server_endpoints has duplicate elements: %s" % servers)
    for ep in servers:
        if not isinstance(ep, str):
            raise TypeError("every element of server_endpoints must be a string, got %r" % (ep,))
    if role == WORKER:
        # Paddle accepts any strings here, and scripts that never transpile pass e.g. ['127.0.0.1'] (a
        # barrier over files needs only the worker count): a worker's server list is checked where it is
        # used (DistributeTranspiler.transpile names a bad one); a server listens on its entry, checked now
        try:
            servers = tuple(parse_endpoints(servers, "server_endpoints"))
        except ValueError:
            servers = tuple(ep.strip() for ep in servers)
    else:
        servers = tuple(parse_endpoints(servers, "server_endpoints"))
    if role not in (WORKER, SERVER):
        raise TypeError("role must be Role.WORKER or Role.SERVER, got %r" % (role,))
    if not isinstance(current_id, int) or isinstance(current_id, bool):
        raise TypeError("current_id must be an int, got %r" % (current_id,))
    if current_id < 0:
        raise ValueError("current_id must be >= 0, got %d" % current_id)
    if not isinstance(worker_num, int) or isinstance(worker_num, bool):
        raise TypeError("worker_num must be an int, got %r" % (worker_num,))
    if worker_num <= 0:
        raise ValueError("worker_num must be > 0, got %d" % worker_num)
    if role == SERVER and current_id >= len(servers):
        raise ValueError("a SERVER's current_id must be < len(server_endpoints) = %d, got %d"
                         % (len(servers), current_id))
    if role == WORKER and current_id >= worker_num:
        raise ValueError("a WORKER's current_id must be < worker_num = %d, got %d" % (worker_num, current_id))
    return ClusterSpec(role=role, current_id=current_id, worker_endpoints=(), server_endpoints=servers,
                       current_endpoint=servers[current_id] if role == SERVER else None, worker_num=worker_num,
                       is_collective=False, source="explicit", notes=())


# ---- MPI ----------------------------------------------------------------------------------------------
_MPI_VARS = (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
             ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"), ("PMIX_RANK", "PMIX_SIZE"))


def _mpi_rank_vars(env):
    """(rank, size, names) from MPI launcher variables (MPICH/hydra, Open MPI, MVAPICH, PMIx), or None."""
    for rank_name, size_name in _MPI_VARS:
        if rank_name in env:
            rank = _int(env, rank_name)
            size = _int(env, size_name, 1) if size_name in env else None
            return rank, size, (rank_name, size_name)
    return None


def mpi_launched(env):
    return _mpi_rank_vars(env) is not None


def _mpi_endpoints(mpi, size, what):
    if mpi is None or len(mpi.get("ips", ())) != size or len(mpi.get("ports", ())) != size:
        raise ClusterEnvError("%s under mpirun needs each rank's address: set MASTER_ADDR and MASTER_PORT, or "
                              "PADDLE_TRAINER_ENDPOINTS, or let the role maker gather them with mpi4py" % what)
    return tuple("%s:%d" % (ip, port) for ip, port in zip(mpi["ips"], mpi["ports"]))


def _collective_mpi(env, mpi):
    rank, size, (rank_name, size_name) = _mpi_rank_vars(env)
    if size is None:
        raise ClusterEnvError("environment variable %s is not set (mpirun sets it with %s)" % (size_name, rank_name))
    if rank >= size:
        raise ClusterEnvError("%s=%d is out of range for %s=%d" % (rank_name, rank, size_name, size))
    if env.get("MASTER_ADDR") and env.get("MASTER_PORT"):
        spec = _collective_torchrun(dict(env, RANK=str(rank), WORLD_SIZE=str(size)))
        return spec._replace(source="mpirun")
    endpoints = _mpi_endpoints(mpi, size, "collective training")
    return _worker_spec(rank, endpoints, "mpirun")


def _mpi_symmetric(mpi):
    """MPISymetricRoleMaker: two processes per node, even ranks serve, odd ranks train; index = rank // 2.
    Each server rank reports the port it will listen on (Paddle derived one random port from the server
    count, so two servers on one host collided)."""
    rank, size = mpi["rank"], mpi["size"]
    if size < 2 or size % 2:
        raise ClusterEnvError("MPISymetricRoleMaker needs an even number (>= 2) of MPI processes, got %d" % size)
    eps = _mpi_endpoints(mpi, size, "MPISymetricRoleMaker")
    servers = tuple(eps[r] for r in range(0, size, 2))
    workers = tuple(eps[r] for r in range(1, size, 2))
    role = SERVER if rank % 2 == 0 else WORKER
    return ClusterSpec(role=role, current_id=rank // 2, worker_endpoints=workers, server_endpoints=servers,
                       current_endpoint=eps[rank], worker_num=size // 2, is_collective=False, source="mpi4py",
                       notes=())
