"""Records how Paddle 1.8.5's MultiSlot feed stores int64 ids of 2**63 and more (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_dataset_uint64.py

Paddle reads an int64 slot's ids with strtoull as uint64 feasigns and hands the bits to an int64 tensor.
One QueueDataset batch of all lines, the id slot fetched and printed by train_from_dataset. Writes
dataset_uint64.json: the lines and the ids Paddle fed.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
IDS = ["0", "5", "9223372036854775807", "9223372036854775808", "12345678901234567890", "18446744073709551615",
       "-5", "000123"]
LINES = ["1 %s\n" % i for i in IDS] + ["2 %s %s\n" % (IDS[5], IDS[1])]

SCRIPT = """
import paddle.fluid as fluid
x = fluid.data('x', [None, 1], 'int64', lod_level=1)
y = fluid.layers.scale(x, 1.0)
ds = fluid.DatasetFactory().create_dataset("QueueDataset")
ds.set_use_var([x]); ds.set_batch_size(%d); ds.set_filelist(["d.txt"]); ds.set_pipe_command("cat")
ds.set_thread(1)
exe = fluid.Executor(fluid.CPUPlace())
exe.run(fluid.default_startup_program())
exe.train_from_dataset(fluid.default_main_program(), ds, fetch_list=[x], fetch_info=["x"], print_period=1,
                       thread=1)
""" % len(LINES)

tmp = tempfile.mkdtemp()
os.chdir(tmp)
open("d.txt", "w").writelines(LINES)
open("run.py", "w").write(SCRIPT)
out = subprocess.run([sys.executable, "run.py"], capture_output=True, text=True).stdout
ids = [int(v) for v in re.search(r"data: \[([-0-9 ,]+)\]", out).group(1).replace(",", " ").split()]
json.dump({"lines": LINES, "ids": ids}, open(os.path.join(HERE, "dataset_uint64.json"), "w"), indent=1)
print(ids)
