#!/usr/bin/env python3
"""The gpt-oss architecture against llama.cpp itself (through the llama-cpp-python package), on synthesized files
(`infertune synth --arch gpt-oss --preset tiny`: 4 layers, 16 experts of 128 with 4 per token, the even layers
sliding over 32 positions, YaRN rope, biases everywhere and an attention sink per head).

1. f32: the logits of a 100-token prompt (which crosses the sliding window) agree with llama.cpp's at f32's
   tolerance, and greedy continuations match (the checks of qwen3_crosscheck.py).
2. Q8_0 and MXFP4_MOE (the experts in MXFP4, as gpt-oss ships): logits within the quantized tolerance.

usage: gpt_oss_crosscheck.py INFERTUNE OUT_DIR
Exits 77 (ctest's SKIP_RETURN_CODE) when llama-cpp-python is not installed."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qwen3_crosscheck as checks  # noqa: E402  (exits 77 without llama-cpp-python)

TINY_GPT_OSS = ["--arch", "gpt-oss", "--preset", "tiny"]
# (file name, infertune synth arguments, whether the logits compare at f32's tolerance)
MODELS = [
    ("gpt-oss-tiny-f32", [*TINY_GPT_OSS, "--type", "f32"], True),
    ("gpt-oss-tiny-q8_0", [*TINY_GPT_OSS, "--type", "q8_0"], False),
    ("gpt-oss-tiny-mxfp4_moe", [*TINY_GPT_OSS, "--type", "mxfp4_moe"], False),
]

if __name__ == "__main__":
    checks.MODELS = MODELS
    sys.exit(checks.main())
