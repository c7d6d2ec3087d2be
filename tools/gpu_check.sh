#!/usr/bin/env bash
# The device-machine check (not CI): the GPU tests, the unit sweep with every executor on cuda:0
# (tools/gpu_sweep.sh), the Hogwild tests six times on the GPU, executor_overhead and step_speed (ResNet-20
# batch 32 and 128, the MLPs: kernels per step, eager torch, torch in one CUDA graph, ours without a fetch) on
# cuda, and executor_overhead and step_speed again with capture on (FLAGS_cuda_graph_capture=1), and ResNet-20
# with contrib.mixed_precision (float16) against torch eager float32 and torch autocast. Logs under $OUT.
# Each step is bounded; the bounds add up to 9 minutes (120+100+75+40+60+40+60+45 s), so one device call holds it.
cd "$(dirname "$0")/.."; OUT="${OUT:-/tmp/gpu_check}"; mkdir -p "$OUT"; export OUT
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
python3 -c "import torch;print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))"
PYTHONPATH=$PWD timeout 120 python3 -m pytest -p no:cacheprovider -q -rfEs --timeout 60 tests/gpu > $OUT/gpu_log.txt 2>&1; echo "gpu rc=$?"; tail -4 $OUT/gpu_log.txt
timeout 100 bash tools/gpu_sweep.sh; cat $OUT/sweep_summary.txt | grep "^=="
for i in 1 2 3; do PYTHONPATH=$PWD:$PWD/tests/gpu timeout 25 python3 -m pytest -p cuda_everywhere -p no:cacheprovider -q tests/unit/test_dataset_hogwild.py 2>&1 | tail -1; done > $OUT/hogwild.txt; sort $OUT/hogwild.txt | uniq -c
PYTHONPATH=$PWD timeout 40 python3 benchmarks/executor_overhead.py --device cuda --rounds 5 2>&1 | tee $OUT/bench.txt
PYTHONPATH=$PWD timeout 60 python3 benchmarks/step_speed.py --device cuda --model resnet20,mlp --rounds 3 --nofetch 2>&1 | tee -a $OUT/bench.txt
# the same with whole-step CUDA graphs (off by default until tests/gpu/test_cuda_graphs.py passes on a GPU)
FLAGS_cuda_graph_capture=1 PYTHONPATH=$PWD timeout 40 python3 benchmarks/executor_overhead.py --device cuda --rounds 5 2>&1 | sed "s/^/capture: /" | tee -a $OUT/bench.txt
FLAGS_cuda_graph_capture=1 PYTHONPATH=$PWD timeout 60 python3 benchmarks/step_speed.py --device cuda --model resnet20,mlp --rounds 3 2>&1 | sed "s/^/capture: /" | tee -a $OUT/bench.txt
# AMP: ResNet-20 batch 32 and 128 through mixed_precision.decorate (target <= 0.5x torch eager float32)
PYTHONPATH=$PWD timeout 45 python3 benchmarks/step_speed.py --device cuda --amp --rounds 3 2>&1 | sed "s/^/amp: /" | tee -a $OUT/bench.txt
