"""Who is who in a distributed job: one pure function from (explicit arguments, environment) to a frozen
ClusterSpec. Role makers (fluid/incubate/fleet/base/role_maker.py) only call it; nothing here reads
os.environ by itself or imports torch.

Order of sources: explicit arguments (UserDefined*RoleMaker), then Paddle's launcher variables (PADDLE_*),
then torchrun's (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). A missing or malformed variable raises
ClusterEnvError naming it (Paddle raised a bare KeyError or asserted).

Implemented: collective jobs. Parameter-server jobs (TRAINING_ROLE, PADDLE_PSERVERS_IP_PORT_LIST, ...) and MPI
go through the same function once their contracts are added.
"""

import collections

from ..fluid.transpiler.endpoints import parse_endpoint, parse_endpoints

__all__ = ["ClusterSpec", "ClusterEnvError", "resolve_cluster", "WORKER", "SERVER"]

WORKER, SERVER = 1, 2


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


def resolve_cluster(env, is_collective=True, explicit=None):
    """env: a mapping of environment variables. explicit: dict of role-maker arguments or None."""
    if not is_collective:
        raise NotImplementedError("parameter-server role resolution (TRAINING_ROLE, PADDLE_PSERVERS_IP_PORT_LIST, "
                                  "...) is not available yet; use is_collective=True for collective training")
    if explicit is not None:
        return _collective_explicit(explicit)
    if "PADDLE_TRAINER_ENDPOINTS" in env or "PADDLE_TRAINER_ID" in env:
        return _collective_paddle(env)
    if "RANK" in env or "WORLD_SIZE" in env:
        return _collective_torchrun(env)
    raise ClusterEnvError("collective role: set PADDLE_TRAINER_ID and PADDLE_TRAINER_ENDPOINTS (as "
                          "`python -m paddle_compat.distributed.launch` does), or run under torchrun (RANK, "
                          "WORLD_SIZE, MASTER_ADDR, MASTER_PORT); neither is in the environment")


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
    role = env.get("PADDLE_TRAINING_ROLE", env.get("TRAINING_ROLE", "TRAINER"))
    if role != "TRAINER":
        raise ClusterEnvError("collective training runs trainers only, but PADDLE_TRAINING_ROLE/TRAINING_ROLE is %r"
                              % role)
    if "PADDLE_TRAINER_ENDPOINTS" not in env:
        raise ClusterEnvError("environment variable PADDLE_TRAINER_ENDPOINTS is not set (the comma-separated "
                              "'ip:port' list of every trainer)")
    try:
        endpoints = parse_endpoints(env["PADDLE_TRAINER_ENDPOINTS"], "PADDLE_TRAINER_ENDPOINTS")
    except (TypeError, ValueError) as e:
        raise ClusterEnvError("environment variable %s" % e)
    # Paddle defaulted a missing PADDLE_TRAINER_ID to 0: two trainers 0 then wait forever. Require it.
    tid = _int(env, "PADDLE_TRAINER_ID")
    if tid >= len(endpoints):
        raise ClusterEnvError("PADDLE_TRAINER_ID=%d is out of range for the %d endpoints of PADDLE_TRAINER_ENDPOINTS"
                              % (tid, len(endpoints)))
    if "PADDLE_TRAINERS_NUM" in env and _int(env, "PADDLE_TRAINERS_NUM", 1) != len(endpoints):
        raise ClusterEnvError("PADDLE_TRAINERS_NUM=%s but PADDLE_TRAINER_ENDPOINTS lists %d endpoints"
                              % (env["PADDLE_TRAINERS_NUM"], len(endpoints)))
    if env.get("PADDLE_CURRENT_ENDPOINT"):
        try:
            cur = parse_endpoint(env["PADDLE_CURRENT_ENDPOINT"], "PADDLE_CURRENT_ENDPOINT")
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
