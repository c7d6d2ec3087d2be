"""Record which globals the pickled files of Paddle 1.8.5 (numpy 1.x) name, and keep small examples of each
(run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_pickles.py

Writes under pickles/:
- static.pdparams / static.pdopt: fluid.save of a small fc model trained 1 step with Adam and an
  exponential_decay learning rate (protocol 2, as Paddle writes them);
- dygraph.pdparams / dygraph.pdopt: fluid.dygraph.save_dygraph of a Linear layer's and of an Adam optimizer's
  state_dict (NoamDecay learning rate: the optimizer state holds an "LR_Scheduler" dict of Python numbers and
  numpy scalars, and the name table save_dygraph adds);
- p3.pdparams / p4.pdparams: the static state dict pickled by user code with Python 3.7's default protocol (3)
  and its highest (4), plus numpy scalars, an int64 and a bool array: files fluid.io.load_program_state reads.
and pickles.json: for each file, the pickle protocol, the globals it names, what Paddle's own loaders read
back (names, dtypes, shapes) and numpy's version.
"""

import json
import os
import pickle
import pickletools

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "pickles")


def names_globals(path):
    """(protocol, sorted globals) of a pickle file. STACK_GLOBAL takes the two values pushed before it, which
    protocol 4 may fetch from the memo: strings are followed through MEMOIZE/PUT and GET."""
    with open(path, "rb") as f:
        data = f.read()
    proto, found, pushed, memo = None, set(), [], {}
    for op, arg, _ in pickletools.genops(data):
        if op.name == "PROTO":
            proto = arg
        elif op.name in ("GLOBAL", "INST"):
            found.add(arg.replace(" ", "."))
        elif op.name == "STACK_GLOBAL":
            found.add("%s.%s" % (pushed[-2], pushed[-1]))
        elif op.name == "MEMOIZE":
            memo[len(memo)] = pushed[-1]
        elif op.name in ("PUT", "BINPUT", "LONG_BINPUT"):
            memo[arg] = pushed[-1]
        elif op.name in ("GET", "BINGET", "LONG_BINGET"):
            pushed.append(memo[arg])
        elif op.name != "FRAME":
            pushed.append(arg if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8") else None)
    return proto, sorted(found)


def describe(d):
    out = {}
    for k, v in sorted(d.items()):
        if isinstance(v, np.ndarray):
            out[k] = ["ndarray", str(v.dtype), list(v.shape)]
        elif isinstance(v, dict):
            out[k] = describe(v)
        else:
            out[k] = [type(v).__name__, repr(v)]
    return out


def static_files():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.data("x", [None, 4], "float32")
        y = fluid.layers.fc(x, 3)
        loss = fluid.layers.reduce_mean(y)
        lr = fluid.layers.exponential_decay(0.1, 10, 0.5)
        fluid.optimizer.Adam(lr).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        exe.run(main, feed={"x": np.ones((2, 4), "float32")}, fetch_list=[loss])
        fluid.save(main, os.path.join(OUT, "static"))
    os.remove(os.path.join(OUT, "static.pdmodel"))
    state = fluid.io.load_program_state(os.path.join(OUT, "static"))
    extra = dict(state)
    extra["np_float32_scalar"] = np.float32(0.5)
    extra["np_int64_scalar"] = np.int64(7)
    extra["int64_array"] = np.arange(6, dtype="int64").reshape(2, 3)
    extra["bool_array"] = np.array([True, False])
    for proto in (3, 4):
        with open(os.path.join(OUT, "p%d.pdparams" % proto), "wb") as f:
            pickle.dump(extra, f, protocol=proto)
    read = {"static": describe(state)}
    for proto in (3, 4):
        read["p%d" % proto] = describe(fluid.io.load_program_state(os.path.join(OUT, "p%d" % proto)))
    return read


def dygraph_files():
    with fluid.dygraph.guard(fluid.CPUPlace()):
        fc = fluid.dygraph.Linear(4, 3)
        opt = fluid.optimizer.Adam(fluid.dygraph.NoamDecay(4, 10), parameter_list=fc.parameters())
        loss = fluid.layers.reduce_mean(fc(fluid.dygraph.to_variable(np.ones((2, 4), "float32"))))
        loss.backward()
        opt.minimize(loss)
        fluid.dygraph.save_dygraph(fc.state_dict(), os.path.join(OUT, "dygraph"))
        fluid.dygraph.save_dygraph(opt.state_dict(), os.path.join(OUT, "dygraph"))
        params, opti = fluid.dygraph.load_dygraph(os.path.join(OUT, "dygraph"), keep_name_table=True)
    return {"dygraph_params": describe(params), "dygraph_opt": describe(opti)}


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    read = static_files()
    read.update(dygraph_files())
    files = {}
    for name in sorted(os.listdir(OUT)):
        proto, found = names_globals(os.path.join(OUT, name))
        files[name] = {"protocol": proto, "globals": found}
    rec = {"numpy": np.__version__, "files": files, "paddle_reads": read,
           "all_globals": sorted(set(g for f in files.values() for g in f["globals"]))}
    with open(os.path.join(HERE, "pickles.json"), "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
    print(json.dumps({k: v for k, v in rec.items() if k != "paddle_reads"}, indent=1))
