"""Every module path of Paddle 1.8.5's paddle.fluid (each of its module files) imports here, as paddle_compat.fluid.X
and through the `paddle` namespace, and holds the public names 1.8.5's module holds (its __all__), except the
gaps listed below, each with its reason.

The module list is data recorded from Paddle 1.8.5 by tests/data/paddle18/make_fluid_modules.py.
"""

import importlib
import json
import os

import pytest

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18", "fluid_modules.json")
with open(DATA) as _fh:
    _RECORD = json.load(_fh)
MODULES = _RECORD["modules"]

_SLIM = "PaddleSlim compression, NAS and quantization are out of scope"
_PSLIB = "PSLib (Baidu's closed parameter server) only"
_DYGRAPH = "imperative mode is out of scope (static Fluid programs only); fluid.dygraph's names raise on use"

# Module paths not offered (a path ending in "." stands for every module under it)
MODULE_GAPS = {
    "paddle.fluid.contrib.slim.": _SLIM,
    "paddle.fluid.contrib.slim": _SLIM,
    "paddle.fluid.contrib.quantize.": _SLIM,
    "paddle.fluid.contrib.quantize": _SLIM,
    "paddle.fluid.contrib.model_stat": "PaddleSlim's model statistics: out of scope",
    "paddle.fluid.contrib.decoder.": "contrib.decoder (InitState/StateCell/TrainingDecoder) is not built; "
                                     "fluid.layers' decoders are",
    "paddle.fluid.contrib.decoder": "as contrib.decoder's modules",
    "paddle.fluid.contrib.utils.lookup_table_utils": _PSLIB,
    "paddle.fluid.distributed.": _PSLIB,
    "paddle.fluid.distributed": _PSLIB,
    "paddle.fluid.distribute_lookup_table": "Paddle's internal helper of its pserver transpiler",
    "paddle.fluid.incubate.fleet.parameter_server.pslib.": _PSLIB,
    "paddle.fluid.incubate.fleet.parameter_server.pslib": _PSLIB,
    "paddle.fluid.incubate.fleet.parameter_server.version": "PSLib's build version record",
    "paddle.fluid.incubate.fleet.utils.http_server": "Python 2 only (Paddle 1.8.5 itself cannot import it on "
                                                     "Python 3)",
    "paddle.fluid.incubate.data_generator.test_data_generator": "a test script of Paddle's, not a module",
    "paddle.fluid.dataloader.": "Paddle 2.0's DataLoader preview is not built; fluid.io.DataLoader is",
    "paddle.fluid.dataloader": "as fluid.dataloader's modules",
    "paddle.fluid.dygraph.": _DYGRAPH,
    "paddle.fluid.dygraph_utils": _DYGRAPH,
    "paddle.fluid.trainer_factory": "Paddle's factory of C++ trainers; train_from_dataset takes its settings as "
                                    "arguments (fluid.trainer_desc's descriptions are offered)",
    "paddle.fluid.debugger": "program drawing (graphviz) is not built",
    "paddle.fluid.graphviz": "program drawing (graphviz) is not built",
    "paddle.fluid.net_drawer": "program drawing (graphviz) is not built",
    "paddle.fluid.annotations": "Paddle's internal `deprecated` decorator",
    "paddle.fluid.multiprocess_utils": "Paddle's internal helpers of its multiprocess DataLoader",
    "paddle.fluid.layer_helper_base": "Paddle's internal base of LayerHelper (fluid.layer_helper is offered)",
    "paddle.fluid.layers.collective": "Paddle's private collective op builders; the collective transpiler "
                                      "inserts the ops itself",
    "paddle.fluid.layers.distributions": "probability distributions (Uniform, Normal, ...) are not built",
    "paddle.fluid.transpiler.memory_optimization_transpiler": "fluid.transpiler.memory_optimize and "
                                                              "release_memory are offered (no-ops, as in 1.8)",
    "paddle.fluid.transpiler.details.checkport": "Paddle's internal helper of its transpiler",
    "paddle.fluid.transpiler.details.ufind": "Paddle's internal helper of its transpiler",
}
# the dygraph modules that scripts import at top level are offered (their names raise on use)
OFFERED_UNDER_GAPS = {"paddle.fluid.dygraph.base", "paddle.fluid.dygraph.jit", "paddle.fluid.dygraph.layers",
                      "paddle.fluid.dygraph.learning_rate_scheduler", "paddle.fluid.dygraph.nn",
                      "paddle.fluid.dygraph.parallel"}

_DETECTION = "SSD/YOLO/Faster R-CNN detection ops are not built (the RetinaNet ones and roi_* are)"
# Public names (module __all__) not offered, by module
NAME_GAPS = {
    "paddle.fluid.device_worker": {n: _PSLIB if n != "Section" else "pipeline parallelism over device sections "
                                   "is not implemented" for n in ("DownpourSGD", "DownpourSGDOPT", "Section")},
    "paddle.fluid.contrib": {
        "InitState": "contrib.decoder is not built", "StateCell": "contrib.decoder is not built",
        "TrainingDecoder": "contrib.decoder is not built", "BeamSearchDecoder": "contrib.decoder is not built",
        "QuantizeTranspiler": _SLIM, "Compressor": _SLIM, "load_persistables_for_increment": _PSLIB,
        "load_persistables_for_inference": _PSLIB, "convert_dist_to_sparse_program": _PSLIB,
        "tdm_sampler": "random negative sampling over a TDM tree: not implemented"},
    "paddle.fluid.contrib.layers": {"tdm_sampler": "random negative sampling over a TDM tree: not implemented"},
    "paddle.fluid.contrib.layers.nn": {"tdm_sampler": "random negative sampling over a TDM tree: not implemented"},
    "paddle.fluid.contrib.utils": {"load_persistables_for_increment": _PSLIB,
                                   "load_persistables_for_inference": _PSLIB,
                                   "convert_dist_to_sparse_program": _PSLIB},
    "paddle.fluid.incubate.fleet.utils.utils": {
        "program_type_trans": "converts between Paddle's binary and text program files; programs here are one "
                              "format", "check_saved_vars_try_dump": "needs Paddle's C++ variable dumps",
        "parse_program": "prints Paddle's C++ program desc", "graphviz": "program drawing is not built"},
    "paddle.fluid.layers": {},          # filled below: the detection gaps
    "paddle.fluid.layers.detection": {},
    "paddle.fluid.layers.layer_function_generator": {
        n: "Paddle's generators of layers and docstrings from C++ op protos; layers here are written out"
        for n in ("deprecated", "generate_layer_fn", "autodoc", "templatedoc")},
    "paddle.fluid.optimizer": {"PipelineOptimizer": "pipeline parallelism over device sections is not "
                                                    "implemented"},
    "paddle.fluid.transpiler.collective": {n: "Paddle's collective transpiler classes; "
                                              "DistributeTranspiler(mode='collective' or 'nccl2') does their work"
                                           for n in ("GradAllReduce", "LocalSGD")},
}
_DETECTION_NAMES = ("prior_box", "density_prior_box", "multi_box_head", "bipartite_match", "target_assign",
                    "detection_output", "ssd_loss", "rpn_target_assign", "anchor_generator",
                    "generate_proposal_labels", "generate_proposals", "generate_mask_labels", "iou_similarity",
                    "box_coder", "polygon_box_transform", "yolov3_loss", "yolo_box", "box_clip", "multiclass_nms",
                    "locality_aware_nms", "matrix_nms", "distribute_fpn_proposals", "box_decoder_and_assign",
                    "collect_fpn_proposals")
for _m in ("paddle.fluid.layers", "paddle.fluid.layers.detection"):
    NAME_GAPS[_m].update({n: _DETECTION for n in _DETECTION_NAMES})
NAME_GAPS["paddle.fluid.layers"].update({n: "probability distributions are not built"
                                         for n in ("Categorical", "MultivariateNormalDiag", "Normal", "Uniform")})


def _module_gap(module):
    if module in OFFERED_UNDER_GAPS:
        return None
    if module in MODULE_GAPS:
        return MODULE_GAPS[module]
    for prefix, reason in MODULE_GAPS.items():
        if prefix.endswith(".") and module.startswith(prefix):
            return reason
    return None


OFFERED = sorted(m for m in MODULES if _module_gap(m) is None)
NOT_OFFERED = sorted(m for m in MODULES if _module_gap(m) is not None)


def _ours(module):
    return "paddle_compat" + module[len("paddle"):]


@pytest.mark.parametrize("module", OFFERED)
def test_module_imports_and_holds_paddles_names(module):
    mod = importlib.import_module(_ours(module))
    assert importlib.import_module(module) is mod       # the `paddle` namespace gives the same module
    gaps = NAME_GAPS.get(module, {})
    missing = [n for n in MODULES[module] or () if n not in gaps and not hasattr(mod, n)]
    assert not missing, "%s lacks Paddle 1.8.5's %s" % (module, missing)


@pytest.mark.parametrize("module", NOT_OFFERED)
def test_module_gaps_are_really_absent(module):
    # keeps the list honest: a module built since must leave MODULE_GAPS
    with pytest.raises(ImportError):
        importlib.import_module(_ours(module))


def test_name_gaps_are_really_absent():
    present = []
    for module, gaps in NAME_GAPS.items():
        mod = importlib.import_module(_ours(module))
        present += ["%s.%s" % (module, n) for n in gaps if hasattr(mod, n)]
        stale = [n for n in gaps if n not in (MODULES[module] or ())]
        assert not stale, "%s: %s are not Paddle 1.8.5 names of this module" % (module, stale)
    assert not present, "listed as gaps but offered (update NAME_GAPS): %s" % present


def test_layers_modules_hold_paddles_names_and_nothing_is_patched_in():
    # fluid.layers.<module> holds its names itself (no module __getattr__ answering for another file)
    for module in OFFERED:
        if module.startswith("paddle.fluid.layers."):
            mod = importlib.import_module(_ours(module))
            assert "__getattr__" not in vars(mod) or module == "paddle.fluid.layers.detection", module
