#!/usr/bin/env python3
"""The gemma2 architecture (Gemma 2 2B, 9B, 27B) against llama.cpp itself (through the llama-cpp-python package), on
synthesized files (`infertune synth --arch gemma2 --preset tiny`: 4 layers, every other one sliding over 32 positions,
attention scores soft-capped at 2 and the logits at 1, low enough that leaving either cap out moves the logits).

1. f32: the logits of a 100-token prompt (which crosses the window) agree with llama.cpp's at f32's tolerance (GELU's
   half-precision table, which both use, and summation order separate them); greedy continuations match (the checks
   of qwen3_crosscheck.py). The attention kernels' soft cap itself is checked against a double-precision formula
   in tests/kernels (every variant, standard and flash, split or not).
2. Q4_K_M: logits within the quantized tolerance.
3. Gemma-2-2B's attention shape cut to 2 layers and a 512-token vocabulary (8 query and 4 KV heads of 256, the
   caps 50 and 30), in f32.

usage: gemma2_crosscheck.py INFERTUNE OUT_DIR
Exits 77 (ctest's SKIP_RETURN_CODE) when llama-cpp-python is not installed."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qwen3_crosscheck as checks  # noqa: E402  (exits 77 without llama-cpp-python)

TINY_GEMMA2 = ["--arch", "gemma2", "--preset", "tiny"]
# (file name, infertune synth arguments, whether the logits compare at f32's tolerance)
MODELS = [
    ("gemma2-tiny-f32", [*TINY_GEMMA2, "--type", "f32"], True),
    ("gemma2-tiny-q4_k_m", [*TINY_GEMMA2, "--type", "q4_k_m"], False),
    ("gemma2-2b-heads-f32", ["--preset", "gemma2-2b", "--layers", "2", "--vocab", "512", "--type", "f32"], True),
]

if __name__ == "__main__":
    checks.MODELS = MODELS
    sys.exit(checks.main())
