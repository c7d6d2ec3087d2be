"""Under mpiexec -n 4: resolve MPISymetricRoleMaker, check a worker barrier and allreduce, print the roles."""

import json
import os
import sys

from paddle_compat.fluid.incubate.fleet.base import role_maker

r = role_maker.MPISymetricRoleMaker()
r.generate_role()
total = r.all_reduce_worker(r.worker_index() + 1) if r.is_worker() else None
r.barrier_worker()
r.barrier_all()
from paddle_compat.backends import job_env  # noqa: E402
key, source = job_env.resolve_key()
row = json.dumps({"key": key.hex(), "key_source": source,
                  "rank": r._get_rank(), "server": r.is_server(), "worker": r.is_worker(),
                  "index": r.server_index() if r.is_server() else r.worker_index(),
                  "servers": r.get_pserver_endpoints(), "workers": r.get_trainer_endpoints(),
                  "first": r.is_first_worker(), "worker_sum": total})
with open(os.path.join(sys.argv[1], "rank%d.json" % r._get_rank()), "w") as f:
    f.write(row)
sys.exit(0)
