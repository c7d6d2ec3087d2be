"""Paddle 1.8.5's DataFeedDesc text after edits, for tests/unit/test_data_feed_desc.py. Record (outside CI) with

    /path/to/paddle18/bin/python tests/data/paddle18/make_data_feed_desc.py
"""

import json
import os
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

PROTO = '''name: "MultiSlotDataFeed"
batch_size: 2
multi_slot_desc {
    slots {
         name: "words"
         type: "uint64"
         is_dense: false
         is_used: true
     }
     slots {
         name: "label"
         type: "uint64"
         is_dense: false
         is_used: false
    }
    slots { name: "wd" type: "float" shape: 3 shape: 4 }
}
thread_num: 3
'''

# (batch size, dense slots, used slots) applied in order; None leaves it
EDITS = [(None, [], []), (128, ["wd"], ["label", "wd"])]

if __name__ == "__main__":
    import paddle.fluid as fluid
    out = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "data.proto")
        with open(path, "w") as f:
            f.write(PROTO)
        for bs, dense, used in EDITS:
            feed = fluid.DataFeedDesc(path)
            if bs is not None:
                feed.set_batch_size(bs)
            feed.set_dense_slots(dense)
            feed.set_use_slots(used)
            out.append(feed.desc())
    with open(os.path.join(HERE, "data_feed_desc.json"), "w") as f:
        json.dump({"proto": PROTO, "edits": EDITS, "desc": out}, f, indent=1)
    print("wrote data_feed_desc.json")
