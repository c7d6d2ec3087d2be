"""One trainer of a 2-trainer nccl2/collective job on 127.0.0.1, running several configurations in turn.

    python collective_trainer.py --trainer_id 0 --endpoints 127.0.0.1:p0,127.0.0.1:p1 --out DIR \
        --configs pe,compiled,grad_allreduce,local_sgd,fleet_nccl2,fleet_collective --steps 5

Each configuration builds the reference MLP (784-200-200-10, SGD lr 0.1, fixed initial weights), trains
`steps` steps feeding this trainer's own batch (batch index 2*step + trainer_id) and writes
DIR/<config>_<trainer_id>.npz with the losses and the final parameters. conv_grad_allreduce: the collective
grad_allreduce mode on a small convolutional net (build_conv) instead of the MLP.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # tests/ (reference_data)

import numpy as np  # noqa: E402

import paddle_compat as fluid  # noqa: E402
import reference_data as R  # noqa: E402

_, _, MNIST_X, MNIST_Y = R.make_data()
_, MLP_INIT = R.make_init()
PARAMS = ["fc_%d.%s_0" % (i, k) for i in range(3) for k in ("w", "b")]


def build(perturb=False):
    """perturb: start from other weights; trainer 0's must reach every trainer (broadcast)."""
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        img = fluid.layers.data(name="img", shape=[784], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        h = img
        for i, ((w, b), act) in enumerate(zip(MLP_INIT, ["relu", "relu", "softmax"])):
            if perturb:
                w, b = w + np.float32(0.01), b - np.float32(0.01)
            h = fluid.layers.fc(h, w.shape[1], act=act,
                                param_attr=fluid.ParamAttr("fc_%d.w_0" % i, fluid.initializer.NumpyArrayInitializer(w)),
                                bias_attr=fluid.ParamAttr("fc_%d.b_0" % i, fluid.initializer.NumpyArrayInitializer(b)))
        loss = fluid.layers.mean(fluid.layers.cross_entropy(h, label))
    return main, start, loss


CONV_PARAMS = ["conv_a.w", "conv_b.w", "conv_fc.w", "conv_fc.b"]


def build_conv(perturb=False):
    """Two 3x3 convolutions (1 -> 4 -> 8 channels) over the MNIST image, max pool, softmax fc: the filter
    gradients come from channels-last activations on the CPU (FLAGS_conv_channels_last) and are allreduced."""
    rng = np.random.RandomState(7)
    init = [rng.uniform(-0.3, 0.3, s).astype("float32") for s in ([4, 1, 3, 3], [8, 4, 3, 3], [8 * 7 * 7, 10], [10])]
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        img = fluid.layers.data(name="img", shape=[784], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        attrs = [fluid.ParamAttr(n, fluid.initializer.NumpyArrayInitializer(v + np.float32(0.01) if perturb else v))
                 for n, v in zip(CONV_PARAMS, init)]
        h = fluid.layers.reshape(img, [-1, 1, 28, 28])
        h = fluid.layers.conv2d(h, 4, 3, padding=1, act="relu", param_attr=attrs[0], bias_attr=False)
        h = fluid.layers.pool2d(h, 2, pool_stride=2)
        h = fluid.layers.conv2d(h, 8, 3, padding=1, act="relu", param_attr=attrs[1], bias_attr=False)
        h = fluid.layers.pool2d(h, 2, pool_stride=2)
        h = fluid.layers.fc(h, 10, act="softmax", param_attr=attrs[2], bias_attr=attrs[3])
        loss = fluid.layers.mean(fluid.layers.cross_entropy(h, label))
    return main, start, loss


def feed(step, tid):
    return {"img": R.batch(MNIST_X, 2 * step + tid), "label": R.batch(MNIST_Y, 2 * step + tid)}


def transpile(mode, tid, eps, main, start, collective_mode=None, spell_workers=False):
    config = fluid.DistributeTranspilerConfig()
    config.mode = mode
    config.collective_mode = collective_mode
    t = fluid.DistributeTranspiler(config=config)
    if spell_workers:   # the seed documents' nccl2 example, default programs and all
        t.transpile(tid, workers=",".join(eps), current_endpoint=eps[tid])
    else:
        t.transpile(tid, program=main, startup_program=start, trainers=",".join(eps), current_endpoint=eps[tid])


def run_config(name, tid, eps, steps, out, use_cuda=False, die_at=-1, perturb=False, sleep=0.0):
    conv = name.startswith("conv_")
    if conv:
        name = name[len("conv_"):]
    main, start, loss = build_conv(perturb) if conv else build(perturb)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CUDAPlace(tid) if use_cuda else fluid.CPUPlace())
    with fluid.scope_guard(scope), fluid.program_guard(main, start):
        if name.startswith("fleet"):
            from paddle_compat.fluid.incubate.fleet.base import role_maker
            from paddle_compat.fluid.incubate.fleet.collective import DistributedStrategy, fleet
            if not fleet._is_initialized:
                fleet.init(role_maker.PaddleCloudRoleMaker(is_collective=True))
            assert fleet.worker_index() == tid and fleet.worker_num() == 2 and fleet.worker_endpoints() == eps
            strategy = DistributedStrategy()
            if name == "fleet_collective":
                strategy.mode, strategy.collective_mode = "collective", "grad_allreduce"
            fleet.distributed_optimizer(fluid.optimizer.SGD(0.1), strategy).minimize(loss)
            exe.run(fleet.startup_program)
            prog = fleet.main_program
            expect = fluid.Program if name == "fleet_collective" else fluid.CompiledProgram
            assert isinstance(prog, expect), type(prog)
            step = lambda s: exe.run(prog, feed=feed(s, tid), fetch_list=[loss.name])[0]  # noqa: E731
        else:
            fluid.optimizer.SGD(0.1).minimize(loss)
            if name in ("pe", "compiled"):
                transpile("nccl2", tid, eps, main, start, spell_workers=name == "pe")
            else:
                transpile("collective", tid, eps, main, start, collective_mode=name)
            exe.run(start)
            if name == "pe":
                pe = fluid.ParallelExecutor(use_cuda, loss_name=loss.name, num_trainers=len(eps), trainer_id=tid)
                step = lambda s: pe.run(fetch_list=[loss.name], feed=feed(s, tid))[0]  # noqa: E731
            elif name == "compiled":
                bs = fluid.BuildStrategy()
                bs.num_trainers, bs.trainer_id, bs.trainers_endpoints = len(eps), tid, eps
                prog = fluid.CompiledProgram(main).with_data_parallel(loss_name=loss.name, build_strategy=bs)
                step = lambda s: exe.run(prog, feed=feed(s, tid), fetch_list=[loss])[0]  # noqa: E731
            else:
                step = lambda s: exe.run(main, feed=feed(s, tid), fetch_list=[loss])[0]  # noqa: E731
        losses = []
        for s in range(steps):
            if s == die_at:
                print("trainer %d stops at step %d" % (tid, s), flush=True)
                os._exit(3)
            losses.append(float(np.asarray(step(s)).reshape(-1)[0]))
            if sleep:
                print("step %d" % s, flush=True)
                time.sleep(sleep)
        params = {p: np.array(scope.find_var(p).value.detach().cpu().numpy())
                  for p in (CONV_PARAMS if conv else PARAMS)}
        if name.startswith("fleet"):
            fleet.save_persistables(exe, os.path.join(out, "%s_saved_%d" % (name, tid)))
            fleet.barrier_worker()
            fleet.save_inference_model(exe, os.path.join(out, "%s_model_%d" % (name, tid)), ["img", "label"], [loss])
    np.savez(os.path.join(out, "%s%s_%d.npz" % ("conv_" if conv else "", name, tid)), losses=np.array(losses), **params)
    print("%s trainer %d losses %s" % (name, tid, losses), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainer_id", type=int, default=None, help="default: PADDLE_TRAINER_ID, else torchrun's RANK")
    ap.add_argument("--endpoints", default=None, help="default: as the role maker derives them under torchrun")
    ap.add_argument("--configs", required=True)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--out", required=True)
    ap.add_argument("--use_cuda", action="store_true", help="trainer i on GPU i (NCCL); set FLAGS_selected_gpus=i")
    ap.add_argument("--die_at", type=int, default=-1, help="exit abruptly before this step (failure tests)")
    ap.add_argument("--perturb_init", action="store_true", help="start from weights other than trainer 0's")
    ap.add_argument("--sleep", type=float, default=0.0, help="seconds after each step (prints 'step N')")
    a = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    if a.trainer_id is None and "PADDLE_TRAINER_ID" in os.environ:   # under paddle_compat.distributed.launch
        a.trainer_id = int(os.environ["PADDLE_TRAINER_ID"])
        a.endpoints = os.environ["PADDLE_TRAINER_ENDPOINTS"]
    if a.trainer_id is None:   # under torchrun
        a.trainer_id = int(os.environ["RANK"])
        port, world = int(os.environ["MASTER_PORT"]), int(os.environ["WORLD_SIZE"])
        a.endpoints = ",".join("%s:%d" % (os.environ["MASTER_ADDR"], port + 1 + r) for r in range(world))
    eps = a.endpoints.split(",")
    for name in a.configs.split(","):
        run_config(name, a.trainer_id, eps, a.steps, a.out, a.use_cuda, a.die_at, a.perturb_init, a.sleep)


if __name__ == "__main__":
    main()
