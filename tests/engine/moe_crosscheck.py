#!/usr/bin/env python3
"""Mixture-of-experts models against llama.cpp itself (through the llama-cpp-python package), on synthesized files
(`infertune synth`): qwen3moe, qwen2moe (unnormalized expert weights and a shared expert behind a sigmoid gate), and
llama with experts as Mixtral stores it.

1. The tiny qwen3moe and qwen2moe in f32 (16 experts of 128, 4 per token) and a tiny Mixtral (8 experts, 2 per token): the logits
   of a 100-token prompt agree with llama.cpp's at f32's tolerance, and greedy continuations match (the checks of
   qwen3_crosscheck.py).
2. The tiny qwen3moe and qwen2moe in Q4_K_M, and qwen3moe with Qwen3-30B-A3B's routing (128 experts, 8 per token) in Q8_0: logits within
   the quantized tolerance (both sides round every product's input to 8 bits, but sum in other orders).

usage: moe_crosscheck.py INFERTUNE OUT_DIR
Exits 77 (ctest's SKIP_RETURN_CODE) when llama-cpp-python is not installed."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qwen3_crosscheck as checks  # noqa: E402  (exits 77 without llama-cpp-python)

TINY_QWEN3MOE = ["--arch", "qwen3moe", "--preset", "tiny"]
# (file name, infertune synth arguments, whether the logits compare at f32's tolerance)
MODELS = [
    ("qwen3moe-tiny-f32", [*TINY_QWEN3MOE, "--type", "f32"], True),
    ("mixtral-tiny-f32", ["--preset", "tiny", "--experts", "8", "--experts-used", "2", "--type", "f32"], True),
    ("qwen3moe-tiny-q4_k_m", [*TINY_QWEN3MOE, "--type", "q4_k_m"], False),
    ("qwen3moe-128x8-q8_0", [*TINY_QWEN3MOE, "--layers", "2", "--experts", "128", "--experts-used", "8", "--type",
                             "q8_0"], False),
    ("qwen2moe-tiny-f32", ["--arch", "qwen2moe", "--preset", "tiny", "--type", "f32"], True),
    ("qwen2moe-tiny-q4_k_m", ["--arch", "qwen2moe", "--preset", "tiny", "--type", "q4_k_m"], False),
]

if __name__ == "__main__":
    checks.MODELS = MODELS
    sys.exit(checks.main())
