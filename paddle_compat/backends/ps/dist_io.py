"""What distributed save needs from the pservers: their persistable vars, one RPC per pserver; and the
distributed tables, which each pserver writes itself."""

from .connections import for_job

__all__ = ["pull_vars", "save_tables"]


def pull_vars(executor, info, names_by_endpoint):
    """{endpoint: [var names]} -> {(endpoint, name): numpy array}; the calls to all pservers overlap, over
    the job's connection (connections.for_job)."""
    client = for_job(info, executor)
    client.ensure_joined()
    futs = {ep: client.call_async(ep, "pull_state", list(names)) for ep, names in names_by_endpoint.items() if names}
    out = {}
    for ep, fut in futs.items():
        names, tensors = client.wait(ep, fut, "a distributed save (pull_state)")
        for n, t in zip(names, tensors):
            out[(ep, n)] = t.detach().cpu().numpy()
    return out


def save_tables(executor, info, dirname, endpoints, with_state=True):
    """Ask each pserver holding a distributed table shard to write its shards (and, with_state, their
    optimizer state) into `dirname` (one RPC per pserver, all at once); returns {endpoint: {file: record}}."""
    client = for_job(info, executor)
    client.ensure_joined()
    futs = {ep: client.call_async(ep, "save_tables", dirname, with_state) for ep in endpoints}
    what = "saving its distributed table shards into %s" % dirname
    return {ep: client.wait(ep, fut, what) for ep, fut in futs.items()}
