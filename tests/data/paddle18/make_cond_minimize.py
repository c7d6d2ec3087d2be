"""Records training with optimizer.minimize called inside the branches of a cond (Paddle 1.8.5 puts the
grad and sgd ops in a backward block per branch, run by a conditional_block_grad) from real PaddlePaddle
1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_cond_minimize.py

Writes cond_minimize.json beside this script: for each case (the optimizers of the two branches: SGD in
both; Momentum with L2Decay in one and Adam in the other) per step the fed branch flag, the loss and the
parameters after the step, and the program's block structure. tests/unit/test_cond_minimize_paddle18.py
builds the very same programs with paddle_compat (build() and train() below take the fluid module).
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
N = 6
rng = np.random.RandomState(7)
X = rng.uniform(-1, 1, (N, 4)).astype("float32")
Y = rng.uniform(-1, 1, (N, 1)).astype("float32")
W0 = rng.uniform(-0.8, 0.8, (4, 3)).astype("float32")
W1 = rng.uniform(-0.8, 0.8, (3, 1)).astype("float32")
FLAGS = [0, 1, 0, 0, 1, 1, 0]      # 0: the true branch (square loss), else the false one (abs loss)
PARAMS = ["w0", "b0", "w1", "b1"]
LR = 0.1


def _sgd(fluid):
    return fluid.optimizer.SGD(learning_rate=LR)


def _momentum_l2(fluid):
    return fluid.optimizer.Momentum(LR, 0.9, regularization=fluid.regularizer.L2Decay(0.01))


def _adam(fluid):
    return fluid.optimizer.Adam(0.05)


# case -> (optimizer of the true branch, of the false branch)
CASES = {"sgd": (_sgd, _sgd), "momentum_l2_adam": (_momentum_l2, _adam)}


def build(fluid, case="sgd"):
    """h = tanh(fc(x)) in block 0; cond(flag == 0, square loss of a branch-only fc of h, 2 * abs loss of
    sum(h)); each branch minimizes its own loss with its optimizer. Returns the cond's output (the loss)."""
    L = fluid.layers
    x = L.data("x", shape=[N, 4], dtype="float32", append_batch_size=False)
    y = L.data("y", shape=[N, 1], dtype="float32", append_batch_size=False)
    flag = L.data("flag", shape=[1], dtype="int32", append_batch_size=False)
    init = fluid.initializer.NumpyArrayInitializer
    h = L.fc(x, 3, act="tanh", param_attr=fluid.ParamAttr("w0", initializer=init(W0)),
             bias_attr=fluid.ParamAttr("b0", initializer=fluid.initializer.Constant(0.1)))
    opt_true, opt_false = CASES[case]

    def square_loss():
        out = L.fc(h, 1, param_attr=fluid.ParamAttr("w1", initializer=init(W1)),
                   bias_attr=fluid.ParamAttr("b1", initializer=fluid.initializer.Constant(-0.2)))
        loss = L.mean(L.square(L.elementwise_sub(out, y)))
        opt_true(fluid).minimize(loss)
        return loss

    def abs_loss():
        out = L.reduce_sum(h, dim=1, keep_dim=True)
        loss = L.scale(L.mean(L.abs(L.elementwise_sub(out, y))), scale=2.0)
        opt_false(fluid).minimize(loss)
        return loss

    zero = L.fill_constant([1], "int32", 0)
    return L.cond(L.equal(flag, zero), square_loss, abs_loss)


def structure(program):
    return [{"parent": b.parent_idx, "forward": b.forward_block_idx if hasattr(b, "forward_block_idx")
             else b.desc.get_forward_block_idx(), "ops": [op.type for op in b.ops]} for b in program.blocks]


def train(fluid, case="sgd"):
    """(losses per step, {param: [value after each step]}, structure of the program)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = build(fluid, case)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    losses, params = [], {p: [] for p in PARAMS}
    with fluid.scope_guard(scope):
        exe.run(startup)
        for f in FLAGS:
            res = exe.run(main, feed={"x": X, "y": Y, "flag": np.array([f], "int32")},
                          fetch_list=[loss] + PARAMS)
            losses.append(float(np.asarray(res[0]).reshape(-1)[0]))
            for p, v in zip(PARAMS, res[1:]):
                params[p].append(np.asarray(v).tolist())
    return losses, params, structure(main)


def main():
    import paddle.fluid as fluid
    out = {"flags": FLAGS, "cases": {}}
    for case in CASES:
        losses, params, blocks = train(fluid, case)
        out["cases"][case] = {"losses": losses, "params": params, "blocks": blocks}
    with open(os.path.join(HERE, "cond_minimize.json"), "w") as f:
        json.dump(out, f)
    print("wrote", len(CASES), "cases of", len(FLAGS), "steps")


if __name__ == "__main__":
    main()
