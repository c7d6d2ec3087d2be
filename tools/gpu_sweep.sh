#!/usr/bin/env bash
# GPU sweep (device machine only, not CI): every unit and compat test file in its own pytest process with
# every executor on cuda:0 (tests/gpu/cuda_everywhere.py), CUDA_LAUNCH_BLOCKING=1 so that a device-side assert
# is reported where it happens and stays within its file. Then the GPU tests proper. Writes logs under
# ${OUT:-/tmp/gpu_sweep} and prints a summary of every failure.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR="${OUT:-/tmp/gpu_sweep}"
mkdir -p "$OUT_DIR/files"
export PYTHONPATH="$PWD:$PWD/tests/gpu" PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 CUDA_LAUNCH_BLOCKING=1
ls tests/unit/test_*.py tests/compat/test_*.py | xargs -P "${JOBS:-14}" -I{} sh -c \
    'python3 -m pytest -p cuda_everywhere -p no:cacheprovider -q --timeout 120 --tb=short -rf {} \
        > "$0/files/$(basename {}).log" 2>&1' "$OUT_DIR"
for f in "$OUT_DIR"/files/*.log; do
    tail -1 "$f" | grep -q " failed\| error" && { echo "== $(basename "$f" .log): $(tail -1 "$f")"; grep -E "^(E  |FAILED)" "$f" | cut -c1-400 | head -40; }
done > "$OUT_DIR/sweep_summary.txt"
tar czf "$OUT_DIR/sweep_logs.tgz" -C "$OUT_DIR" files && rm -r "$OUT_DIR/files"
echo "sweep: $(grep -c '^== ' "$OUT_DIR/sweep_summary.txt") files with failures (summary in sweep_summary.txt)"
