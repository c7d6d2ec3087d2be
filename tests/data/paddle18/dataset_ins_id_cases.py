"""InMemoryDataset cases shared by make_dataset_ins_id.py (real Paddle 1.8.5) and the unit tests: ins id
and content columns (set_parse_ins_id / set_parse_content), the download command for "afs:" files,
slots_shuffle, and core.Dataset's settings.

Each case takes `fluid` (Paddle's or ours) and a scratch directory, and returns what the dataset feeds
(every batch, slot by slot: values and LoD) or what the getters say. Kept Python 3.7 compatible: Paddle
1.8.5 runs it.
"""

import os

import numpy as np

INT4 = ["int64"] * 4
MIXED = ["int64", "int64", "float32", "float32"]


def _slots(fluid, dtypes, lod=1):
    prog, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(prog, start):
        vs = [fluid.layers.data(name="slot%d" % (i + 1), shape=[1], dtype=d, lod_level=lod)
              for i, d in enumerate(dtypes)]
    return vs


def _collect(fluid, ds, vs):
    out = []
    loader = fluid.io.DataLoader.from_dataset(ds, fluid.cpu_places(1), False)
    for data in loader():
        d = data[0]
        out.append({v.name: {"vals": [float(x) for x in np.array(d[v.name]).ravel()],
                             "lod": [list(map(int, l)) for l in d[v.name].lod()]} for v in vs})
    return out


def _dataset(fluid, tmp, texts, vs, names=None):
    files = []
    for i, t in enumerate(texts):
        name = os.path.join(tmp, names[i] if names else "part%d.txt" % i)
        with open(name, "w") as f:
            f.write(t)
        files.append(name)
    ds = fluid.DatasetFactory().create_dataset("InMemoryDataset")
    ds.set_batch_size(32)
    ds.set_thread(1)
    ds.set_filelist(files)
    ds.set_pipe_command("cat")
    ds.set_use_var(vs)
    return ds


def ins_id_and_content(fluid, tmp):
    vs = _slots(fluid, INT4)
    ds = _dataset(fluid, tmp, ["1 a 1 a 1 1 2 3 3 4 5 5 5 5 1 1\n1 b 1 xyz 1 2 2 3 4 4 6 6 6 6 1 2\n",
                               "1 d 1 d 1 4 2 3 3 4 5 5 5 5 1 4\n"], vs)
    ds.set_parse_ins_id(True)
    ds.set_parse_content(True)
    ds.load_into_memory()
    return {"size": int(ds.get_memory_data_size()), "batches": _collect(fluid, ds, vs)}


def ins_id_only(fluid, tmp):
    vs = _slots(fluid, MIXED)
    ds = _dataset(fluid, tmp, ["1 id1 1 1 2 3 3 4 5 5 5 5 1 1\n1 id2 1 1 1 1 1 0.5 1 2.5\n"], vs)
    ds.set_parse_ins_id(True)
    ds.load_into_memory()
    return {"size": int(ds.get_memory_data_size()), "batches": _collect(fluid, ds, vs)}


def download_cmd(fluid, tmp):
    """"afs:" files go through the download command (`tac`: their lines come reversed), local ones not."""
    vs = _slots(fluid, INT4)
    text = "1 1 2 3 3 4 5 5 5 5 1 1\n1 2 2 3 4 4 6 6 6 6 1 2\n"
    cwd = os.getcwd()
    os.chdir(tmp)   # a relative "afs:" name, as Paddle's test uses
    try:
        ds = _dataset(fluid, tmp, [text, text], vs, names=["afs:remote.txt", "local.txt"])
        ds.set_filelist(["afs:remote.txt", "local.txt"])
        ds.set_download_cmd("tac")
        ds.load_into_memory()
        got = {"cmd": ds.dataset.get_download_cmd(), "batches": _collect(fluid, ds, vs)}
        ds.set_download_cmd("")
        return got
    finally:
        os.chdir(cwd)


def slots_shuffle_without_fea_eval(fluid, tmp):
    vs = _slots(fluid, INT4)
    text = "".join("1 %d 1 %d 1 %d 1 %d\n" % (i, 100 + i, 200 + i, 300 + i) for i in range(1, 9))
    ds = _dataset(fluid, tmp, [text], vs)
    ds.load_into_memory()
    ds.set_fea_eval(10000, False)
    ds.slots_shuffle(["slot1"])
    return {"size": int(ds.get_memory_data_size()), "batches": _collect(fluid, ds, vs)}


def slots_shuffle(fluid, tmp):
    """Random (Paddle's engine is not numpy's): the record, not the values, is compared."""
    vs = _slots(fluid, INT4)
    text = "".join("1 %d 1 %d 1 %d 1 %d\n" % (i, 100 + i, 200 + i, 300 + i) for i in range(1, 9))
    ds = _dataset(fluid, tmp, [text], vs)
    ds.load_into_memory()
    ds.set_fea_eval(10000, True)
    ds.slots_shuffle(["slot1"])
    return {"size": int(ds.get_memory_data_size()), "batches": _collect(fluid, ds, vs)}


def core_dataset(fluid, tmp):
    d = fluid.core.Dataset("MultiSlotDataset")

    def state():
        return {"thread": d.get_thread_num(), "files": list(d.get_filelist()), "trainers": d.get_trainer_num(),
                "hdfs": list(d.get_hdfs_config()), "download": d.get_download_cmd(),
                "send_batch": d.get_fleet_send_batch_size()}
    before = state()
    d.set_thread_num(12)
    d.set_filelist(["a.txt", "b.txt", "c.txt"])
    d.set_trainer_num(4)
    d.set_hdfs_config("my_fs_name", "my_fs_ugi")
    after = state()
    fleet = fluid.core.Fleet()
    return {"before": before, "after": after, "c2c": fleet.set_client2client_config(1, 1, 1),
            "cache_threshold": fleet.get_cache_threshold(0)}


def dense_slot_counts(fluid, tmp):
    """lod_level 0 slots: 'b' holds 2, 1 and 3 values on its lines (Paddle feeds them all, [6, 1], with the
    lines' offsets as LoD); the others hold what their shapes say (the LoD Paddle gives them too is not
    compared: here they are plain arrays)."""
    prog, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(prog, start):
        vs = [fluid.layers.data(name=n, shape=[k], dtype=d, lod_level=0)
              for n, k, d in (("a", 1, "int64"), ("b", 1, "int64"), ("c", 1, "float32"), ("d", 4, "float32"))]
    text = "1 1 2 3 3 1 5 4 1 2 3 4\n1 2 1 4 1 6 4 5 6 7 8\n1 3 3 5 5 5 1 7 4 9 9 9 9\n"
    out = {}
    for kind in ("InMemoryDataset", "QueueDataset"):
        ds = _dataset(fluid, tmp, [text], vs)
        if kind == "QueueDataset":
            files = ds.filelist
            ds = fluid.DatasetFactory().create_dataset(kind)
            ds.set_batch_size(8)
            ds.set_filelist(files)
            ds.set_use_var(vs)
        else:
            ds.load_into_memory()
        for data in fluid.io.DataLoader.from_dataset(ds, fluid.cpu_places(1), False)():
            d = data[0]
            got = {v.name: {"shape": list(np.array(d[v.name]).shape),
                            "vals": [float(x) for x in np.array(d[v.name]).ravel()]} for v in vs}
            got["b"]["lod"] = [list(map(int, l)) for l in d["b"].lod()]
            out[kind] = got
    return out


def zero_feasigns(fluid, tmp):
    """InMemoryDataset drops the zero ids and the float values under 1e-6 of lod slots (a slot left empty
    is fed as one 0); QueueDataset and dense slots keep them."""
    prog, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(prog, start):
        vs = [fluid.layers.data(name="c", shape=[1], dtype="float32", lod_level=1),
              fluid.layers.data(name="a", shape=[1], dtype="int64", lod_level=1),
              fluid.layers.data(name="e", shape=[2], dtype="int64", lod_level=0)]
    text = ("4 0.0000001 0.000001 -0.0000009 0.00001 3 0 0 0 2 0 0\n1 -0.0 2 7 0 2 0 3\n"
            "2 0 2.5 3 0 4 0 2 5 0\n")
    out = {}
    for kind in ("InMemoryDataset", "QueueDataset"):
        ds = _dataset(fluid, tmp, [text], vs)
        if kind == "QueueDataset":
            files = ds.filelist
            ds = fluid.DatasetFactory().create_dataset(kind)
            ds.set_batch_size(8)
            ds.set_filelist(files)
            ds.set_use_var(vs)
        else:
            ds.load_into_memory()
        for data in fluid.io.DataLoader.from_dataset(ds, fluid.cpu_places(1), False)():
            d = data[0]
            got = {v.name: {"vals": [float(x) for x in np.array(d[v.name]).ravel()]} for v in vs}
            for n in ("c", "a"):
                got[n]["lod"] = [list(map(int, l)) for l in d[n].lod()]
            out[kind] = got
    return out


CASES = [zero_feasigns, dense_slot_counts, ins_id_and_content, ins_id_only, download_cmd,
         slots_shuffle_without_fea_eval, slots_shuffle, core_dataset]
