"""append_backward's loss seed (fill_constant 1.0, one element) is passed to autograd as None (torch's ones),
decided from the program: no host read, same gradients; any other seed is passed as the tensor."""
import numpy as np

import paddle_compat as fluid
from paddle_compat.backends.lowering.autograd_region import _unit_seeds


def _program(scale_seed=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [4])
        y = fluid.layers.data("y", [1])
        loss = fluid.layers.mean(fluid.layers.square_error_cost(fluid.layers.fc(x, 1), y))
        fluid.backward.append_backward(loss)
    if scale_seed is not None:
        for op in main.global_block().ops:
            if op.type == "fill_constant" and op.output_arg_names == [loss.name + "@GRAD"]:
                op._set_attr("value", scale_seed)
    return main, startup, loss


def _grads(scale_seed=None):
    main, startup, loss = _program(scale_seed)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        w = main.global_block().all_parameters()[0].name
        rng = np.random.RandomState(0)
        feed = {"x": rng.rand(3, 4).astype("float32"), "y": rng.rand(3, 1).astype("float32")}
        scope.find_var(w).get_tensor().set(np.full((4, 1), 0.5, "float32"), fluid.CPUPlace())
        return exe.run(main, feed=feed, fetch_list=[w + "@GRAD"])[0]


def test_the_loss_seed_is_a_unit_seed_and_others_are_not():
    main, _, loss = _program()
    seed = loss.name + "@GRAD"
    assert _unit_seeds(main.global_block(), [seed]) == {seed}
    main2, _, loss2 = _program(scale_seed=2.0)
    assert _unit_seeds(main2.global_block(), [loss2.name + "@GRAD"]) == set()
    assert _unit_seeds(main.global_block(), ["nobody_writes@GRAD"]) == set()


def test_a_seed_of_two_doubles_the_gradient():
    # the seed the program says is honoured: only 1.0 may be replaced by torch's implicit ones
    g1, g2 = _grads(), _grads(scale_seed=2.0)
    assert np.abs(g1).max() > 0
    np.testing.assert_allclose(g2, 2 * g1, rtol=1e-6)
