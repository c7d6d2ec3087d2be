"""A small model whose parameters are used inside sub-blocks, for pserver/collective transpiling: an fc
(`w_in`) feeds a While of 3 steps that applies one shared fc (`w_loop`) per step through a LoDTensorArray, then
a cond on the mean of the batch input picks one of two fc heads (`w_pos` / `w_neg`, each inside its conditional_block).
Every function takes the fluid module, so the same code runs on paddle_compat and on Paddle 1.8.5
(tests/data/paddle18/make_transpile_subblocks.py). Python 3.7 compatible."""

import numpy as np

DIM, HID, BATCH, STEPS = 4, 5, 6, 3


def while_cond_model(fluid):
    L = fluid.layers
    x = L.data(name="x", shape=[DIM], dtype="float32")
    y = L.data(name="y", shape=[1], dtype="float32")
    h0 = L.fc(input=x, size=HID, act="tanh", param_attr=fluid.ParamAttr(name="w_in"),
              bias_attr=fluid.ParamAttr(name="b_in"))
    i = L.fill_constant(shape=[1], dtype="int64", value=0)
    n = L.fill_constant(shape=[1], dtype="int64", value=STEPS)
    arr = L.array_write(h0, i=i)
    c = L.less_than(i, n)
    loop = L.While(cond=c)
    with loop.block():
        h = L.array_read(arr, i=i)
        nh = L.fc(input=h, size=HID, act="tanh", param_attr=fluid.ParamAttr(name="w_loop"),
                  bias_attr=fluid.ParamAttr(name="b_loop"))
        L.increment(i, value=1, in_place=True)
        L.array_write(nh, i=i, array=arr)
        L.less_than(i, n, cond=c)
    last = L.array_read(arr, i=n)
    pred = L.greater_than(L.reduce_mean(x), L.fill_constant(shape=[1], dtype="float32", value=0.0))
    out = L.cond(pred,
                 lambda: L.fc(input=last, size=1, param_attr=fluid.ParamAttr(name="w_pos"), bias_attr=False),
                 lambda: L.fc(input=last, size=1, param_attr=fluid.ParamAttr(name="w_neg"), bias_attr=False))
    cost = L.mean(L.square_error_cost(input=out, label=y))
    fluid.optimizer.SGD(learning_rate=0.2).minimize(cost)
    return cost


def switch_lr_model(fluid):
    """A regression whose learning rate is a Switch on the step counter (Paddle's old piecewise_decay form):
    the LR-schedule ops, conditional_blocks included, move to the pservers with their sub-blocks. The cases
    write the rate with fill_constant(out=) as Paddle 1.8.5's piecewise_decay did: its transpiler fails
    (AssertionError in _clone_variable) on a sub-block of the LR schedule that declares variables."""
    L = fluid.layers
    x = L.data(name="x", shape=[DIM], dtype="float32")
    y = L.data(name="y", shape=[1], dtype="float32")
    h = L.fc(input=x, size=HID, act="tanh", param_attr=fluid.ParamAttr(name="w_in"),
             bias_attr=fluid.ParamAttr(name="b_in"))
    cost = L.mean(L.square_error_cost(input=L.fc(input=h, size=1, param_attr=fluid.ParamAttr(name="w_out"),
                                                 bias_attr=False), label=y))
    with fluid.default_main_program()._lr_schedule_guard():
        step = L.cast(L.autoincreased_step_counter(counter_name="@LR_STEP@", begin=0, step=1), "float32")
        lr = L.create_global_var(shape=[1], value=0.0, dtype="float32", persistable=True, name="switch_lr")
        with L.Switch() as switch:
            with switch.case(L.less_than(step, L.fill_constant([1], "float32", 3.0))):
                L.fill_constant([1], "float32", 0.3, out=lr)
            with switch.default():
                L.fill_constant([1], "float32", 0.05, out=lr)
    fluid.optimizer.SGD(learning_rate=lr).minimize(cost)
    return cost


def batches(steps, seed=3):
    r = np.random.RandomState(seed)
    return [{"x": r.uniform(-1, 1, size=(BATCH, DIM)).astype("float32").tolist(),
             "y": r.uniform(-1, 1, size=(BATCH, 1)).astype("float32").tolist()} for _ in range(steps)]


def feed(b):
    return {"x": np.array(b["x"], "float32"), "y": np.array(b["y"], "float32")}


def build(fluid, model="while_cond"):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        cost = {"while_cond": while_cond_model, "switch_lr": switch_lr_model}[model](fluid)
    return main, startup, cost


def init_values(shapes):
    return [np.random.RandomState(300 + i).uniform(-0.6, 0.6, size=s).astype("float32")
            for i, s in enumerate(shapes)]


def _split_program(main):
    """(forward+backward, optimize) clones of `main`: block 0's ops with the Optimize or LRSched role go to
    the second (a pserver runs the LR schedule once per step, before the optimize blocks)."""
    fb, opt = main.clone(), main.clone()
    optimize = lambda op: int(op.attr("op_role")) & (0x0002 | 0x0010)  # noqa: E731
    fb.global_block().ops = [op for op in fb.global_block().ops if not optimize(op)]
    opt.global_block().ops = [op for op in opt.global_block().ops if optimize(op)]
    for p in (fb, opt):
        p._bump()
    return fb, opt


def local_two_trainer_losses(fluid, main, startup, cost, params, inits, data, feed, steps, trainers=2):
    """What each of `trainers` sync pserver-mode trainers should see (trainer t's loss at step s is its batch
    s * trainers + t under the parameters after s updates), computed in one process: the forward+backward part
    of `main` runs on each trainer's batch, the gradients are averaged, and the optimize part applies them."""
    fb, opt = _split_program(main)
    grads = [p.name + "@GRAD" for p in params]
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    out = {t: [] for t in range(trainers)}
    with fluid.scope_guard(scope):
        exe.run(startup)
        for p, v in zip(params, inits):
            scope.find_var(p.name).get_tensor().set(v, fluid.CPUPlace())
        for s in range(steps):
            got = []
            for t in range(trainers):
                r = exe.run(fb, feed=feed(data[s * trainers + t]), fetch_list=[cost.name] + grads)
                out[t].append(float(np.asarray(r[0]).reshape(-1)[0]))
                got.append([np.asarray(g) for g in r[1:]])
            avg = {g: sum(x[k] for x in got) / trainers for k, g in enumerate(grads)}
            exe.run(opt, feed=avg)
    return out
