"""Records Paddle 1.8.5's train_from_dataset on MultiSlot files (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_dataset_train.py

A QueueDataset over two files (batches run across the file boundary), thread=1, two passes of a fixed-weight
model (two LoD id slots through one embedding with sum pooling, a dense slot, softmax fc, SGD). Writes
dataset_train.json: the file lines, the losses Paddle prints (6 digits) and the parameters after training.
"""

import json
import os
import re
import tempfile

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
rs = np.random.RandomState(0)
lines = []
for i in range(40):
    ids = [list(rs.randint(0, 20, size=rs.randint(1, 4))) for _ in range(2)]
    d = np.round(rs.uniform(-1, 1, 3), 3)
    lines.append(" ".join("%d %s" % (len(x), " ".join(map(str, x))) for x in ids) + " 3 " +
                 " ".join(map(str, d)) + " 1 %d\n" % int(rs.rand() > 0.5))
tmp = tempfile.mkdtemp()
os.chdir(tmp)   # Paddle writes a <id>_train_desc.prototxt into the working directory
files = [os.path.join(tmp, "a.txt"), os.path.join(tmp, "b.txt")]
open(files[0], "w").writelines(lines[:25])
open(files[1], "w").writelines(lines[25:])

main, startup = fluid.Program(), fluid.Program()
with fluid.program_guard(main, startup):
    slots = [fluid.data("s%d" % i, [None, 1], "int64", lod_level=1) for i in range(2)]
    dense = fluid.data("dense", [None, 3], "float32")
    label = fluid.data("label", [None, 1], "int64")
    E = np.linspace(-0.5, 0.5, 80).reshape(20, 4).astype("float32")
    W = np.linspace(-0.3, 0.4, 22).reshape(11, 2).astype("float32")
    pooled = [fluid.layers.sequence_pool(fluid.layers.embedding(
        x, [20, 4], is_sparse=True, param_attr=fluid.ParamAttr(
            name="emb", initializer=fluid.initializer.NumpyArrayInitializer(E))), "sum") for x in slots]
    pred = fluid.layers.fc(fluid.layers.concat(pooled + [dense], axis=1), 2, act="softmax", param_attr=fluid.ParamAttr(
        name="fc_w", initializer=fluid.initializer.NumpyArrayInitializer(W)), bias_attr=fluid.ParamAttr(name="fc_b"))
    loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
    fluid.optimizer.SGD(0.5).minimize(loss)
exe = fluid.Executor(fluid.CPUPlace())
exe.run(startup)
ds = fluid.DatasetFactory().create_dataset("QueueDataset")
ds.set_use_var(slots + [dense, label])
ds.set_pipe_command("cat")
ds.set_batch_size(8)
ds.set_thread(1)
ds.set_filelist(files)

# the losses are printed by C++ on fd 1: catch them there
out_path = os.path.join(tmp, "out.txt")
saved = os.dup(1)
with open(out_path, "w") as f:
    os.dup2(f.fileno(), 1)
    for _ in range(2):
        exe.train_from_dataset(main, ds, thread=1, fetch_list=[loss], fetch_info=["loss"], print_period=1)
    os.dup2(saved, 1)
losses = [float(x) for x in re.findall(r"data: \[([-0-9.e+]+)\]", open(out_path).read())]
scope = fluid.global_scope()
params = {n: np.array(scope.find_var(n).get_tensor()).tolist() for n in ("emb", "fc_w", "fc_b")}
with open(os.path.join(HERE, "dataset_train.json"), "w") as f:
    json.dump({"lines": lines, "split": 25, "E": E.tolist(), "W": W.tolist(), "losses": losses,
               "params": params}, f)
print("wrote", len(losses), "losses")
