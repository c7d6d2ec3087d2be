"""Records the build-time shapes of fluid.layers.lstm's outputs from real PaddlePaddle 1.8.5 (run outside CI):

    /path/to/paddle18/bin/python tests/data/paddle18/make_lstm_shapes.py

Writes lstm_shapes.json beside this script: for each (num_layers, is_bidirec), the shapes Paddle's InferShape
gives out, last_h and last_c when the layer is built (input [5, 4, 6], hidden 8, init states [L * dirs, 4, 8]).
"""

import json
import os

import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))

cases = []
for layers, bidirec in ((1, False), (2, False), (2, True)):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[5, 4, 6], dtype="float32", append_batch_size=False)
        n = layers * (2 if bidirec else 1)
        h0 = fluid.layers.fill_constant([n, 4, 8], "float32", 0.0)
        c0 = fluid.layers.fill_constant([n, 4, 8], "float32", 0.0)
        out, last_h, last_c = fluid.layers.lstm(x, h0, c0, max_len=5, hidden_size=8, num_layers=layers,
                                                is_bidirec=bidirec)
    cases.append({"num_layers": layers, "is_bidirec": bidirec,
                  "shapes": [list(out.shape), list(last_h.shape), list(last_c.shape)]})
with open(os.path.join(HERE, "lstm_shapes.json"), "w") as f:
    json.dump({"paddle": fluid.__version__ if hasattr(fluid, "__version__") else "1.8.5", "cases": cases}, f,
              indent=1)
print(json.dumps(cases))
