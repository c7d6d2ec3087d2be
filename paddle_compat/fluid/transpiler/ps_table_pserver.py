"""Pserver side of a distributed lookup table: besides its table optimize block (ps_pserver_pass.py), each
shard this pserver holds gets, as in Paddle,

  a prefetch block     lookup_sparse_table(Ids=<t>.prefetch_in.block<i>, W=<t>.block<i>) -> <t>.prefetch_out.block<i>
                       (Ids are row numbers within the shard: the trainer subtracts the shard's offset)
  the checkpoint block `save` of every shard var and its optimizer state, file_path = the file name the
                       pserver writes in the directory a distributed save asks for: `<var>.block<i>`
                       (Paddle's tensor format; shard i holds the table's rows from its row offset on)

listen_and_serv lists them in `prefetch_var_name_to_block_id` and `checkpint_block_id` (Paddle's names).
"""

from ...ir import OP_ROLE_KEY, OpRole

__all__ = ["table_blocks"]


def table_blocks(plan, prog, src, endpoint):
    """Append the prefetch and checkpoint blocks; returns (prefetch_var_name_to_block_id,
    checkpoint block id or -1, [shard info for the service])."""
    gb = prog.global_block()
    prefetch, shards = [], []
    for b in plan.ordered_blocks_on(endpoint):
        chain = plan.chains[b.param]
        t = chain.table
        if t is None:
            continue
        w = src.var(t.name)
        pb = prog._create_block(0)
        ids, out = t.ids_block(b), t.rows_block(b)
        pb.create_var(name=ids, shape=[-1, 1], dtype="int64")
        pb.create_var(name=out, shape=[-1, t.width], dtype=w.dtype)
        pb.append_op(type="lookup_sparse_table", inputs={"Ids": [ids], "W": [b.name]}, outputs={"Out": [out]},
                     attrs={OP_ROLE_KEY: int(OpRole.RPC), "is_sparse": True, "is_distributed": True,
                            "padding_idx": -1, "table": t.name})
        prog._rollback()
        prefetch.append("%s:%d" % (ids, pb.idx))
        shards.append({"table": t.name, "shard": b.index, "var": b.name, "offset": b.offset, "rows": b.rows,
                       "height": t.height, "width": t.width, "ids": ids, "out": out, "prefetch_block": pb.idx,
                       "state": [b.state_name(s) for s in chain.state]})
    if not shards:
        return [], -1, {"shards": [], "checkpoint_block": -1}
    cb = prog._create_block(0)
    for s in shards:
        for var in [s["var"]] + s["state"]:
            if gb.has_var(var):
                cb.append_op(type="save", inputs={"X": [var]}, outputs={},
                             attrs={OP_ROLE_KEY: int(OpRole.RPC), "file_path": var, "overwrite": True})
    prog._rollback()
    return prefetch, cb.idx, {"shards": shards, "checkpoint_block": cb.idx}
