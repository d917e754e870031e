#!/usr/bin/env bash
# The GPU checks, on a machine with a CUDA device: the probe's GPU figures, the CUDA kernel tests, the
# whole-model tests with layers offloaded (logits against llama.cpp's on the fixtures), `infertune bench` at
# -ngl 0 / half / all on synthetic llama-1b and llama-8b Q4_K_M files, a sweep over -ngl (auto included)
# with its recommendation, and `batched-bench` fully offloaded.
#   bench/gpu_check.sh BUILD_DIR WORK_DIR     (WORK_DIR receives the synthetic models; ~6 GB)
# Prints everything; exits non-zero when a test fails.
set -uo pipefail
build=${1:?usage: bench/gpu_check.sh BUILD_DIR WORK_DIR}
work=${2:?usage: bench/gpu_check.sh BUILD_DIR WORK_DIR}
bin=$build/sweeps/infertune
mkdir -p "$work"
status=0
skip=${GPU_CHECK_SKIP:+-$GPU_CHECK_SKIP}  # gtest patterns to leave out (e.g. fixtures not at hand)

section() { echo; echo "=== $* ($(date +%T))"; }

section "device"
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version --format=csv || true
"$bin" --version

section "probe"
"$bin" probe --refresh || status=1

section "CUDA kernel tests"
"$build/tests/kernels_tests" --gtest_filter="*Cuda*:*BlockDecode*:Nvml*$skip" --gtest_brief=1 || status=1

section "offload tests (fixture logits with -ngl 2 / 99 against llama.cpp's)"
"$build/tests/engine_tests" --gtest_filter="GpuOffload*:OffloadSplit*:GpuMemory*:GpuWeightCache*$skip" --gtest_brief=1 >"$work/offload_tests.log" 2>&1 ||
  status=1
grep -E '^\[fixture\]|FAILED|PASSED|SKIPPED|Failure|Expected|Which is|actual|Value of|terminate|what\(\)' \
  "$work/offload_tests.log"
[ "$status" -eq 0 ] || tail -n 15 "$work/offload_tests.log"

section "offload tests with prompt batches on the int8 path (INFERTUNE_CUDA_BATCH=int8)"
INFERTUNE_CUDA_BATCH=int8 "$build/tests/engine_tests" --gtest_filter="GpuOffload*$skip" \
  --gtest_brief=1 >"$work/offload_int8.log" 2>&1 || status=1
grep -E 'FAILED|PASSED|Failure|Expected|Which is' "$work/offload_int8.log" | head -20

section "GPU probe and trial-metric tests"
"$build/tests/bench_tests" --gtest_filter="GpuPeak*:ProbeCommand*:*Roofline*$skip" --gtest_brief=1 || status=1
"$build/tests/sweeps_tests" --gtest_filter="TrialWorkload.Gpu*:*GpuSampler*$skip" --gtest_brief=1 || status=1

# The 8B file runs fewer and shorter tests: at -ngl 0 it is the CPU's speed.
for spec in "llama-1b -p 512 -n 128 -r 3" "llama-8b -p 256 -n 32 -r 2"; do
  read -r preset test_flags <<<"$spec"
  [[ " ${GPU_CHECK_PRESETS:-llama-1b llama-8b} " == *" $preset "* ]] || continue
  model=$work/$preset-q4_k_m.gguf
  section "synth $preset"
  [ -f "$model" ] || "$bin" synth --preset "$preset" --type q4_k_m -o "$model" >/dev/null || { status=1; continue; }
  layers=$("$bin" inspect "$model" 2>/dev/null | awk '/block_count/ {print $NF; exit}')
  half=$((${layers:-16} / 2))
  section "bench $preset -ngl 0,$half,99"
  # shellcheck disable=SC2086
  "$bin" bench -m "$model" -ngl "0,$half,99" $test_flags -t "$(nproc)" 2> >(tee "$work/bench-$preset.err" >&2) ||
    status=1
  # The pp and tg tests of one -ngl share an upload (gpu_weight_cache.h): uploads over 1 GiB print one
  # progress line each, so the 8B file shows one per -ngl above 0 (2), not one per test (4).
  echo "uploads of over 1 GiB: $(grep -c 'of weights to GPU .*100%' "$work/bench-$preset.err")"
  section "bench $preset -ngl 99 prompts: f16 path, then int8 path"
  for path in f16 int8; do
    INFERTUNE_CUDA_BATCH=$path "$bin" bench -m "$model" -ngl 99 -p 512 -n 0 -r 3 -t "$(nproc)" -o csv | tail -n 1 |
      sed "s/^/$path: /" || status=1
  done
done

section "sweep over -ngl on llama-1b, then its recommendation"
model=$work/llama-1b-q4_k_m.gguf
if [ -f "$model" ]; then
  "$bin" sweep -m "$model" -ngl 0,8,16,17,auto -p 512 -n 64 -t "$(nproc)" --min-reps 2 --max-reps 3 \
    --db "$work/sweep.db" || status=1
fi

section "batched-bench llama-8b -ngl 99"
[ -f "$work/llama-8b-q4_k_m.gguf" ] && "$bin" batched-bench -m "$work/llama-8b-q4_k_m.gguf" -ngl 99 -npp 128 -ntg 64 -npl 1,4,16 -t "$(nproc)" || status=1
exit $status
