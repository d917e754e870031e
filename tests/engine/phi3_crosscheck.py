#!/usr/bin/env python3
"""The phi3 architecture (Phi-3, Phi-3.5, Phi-4, Phi-4-mini) against llama.cpp itself (through the llama-cpp-python
package), on synthesized files (`infertune synth --arch phi3 --preset tiny`: 4 layers, q/k/v and gate/up stored fused,
LongRoPE factors over an original context of 256, 24 of a head's 32 dimensions rotated).

1. f32 at -c 256 (the short factors) and -c 512 (the long ones: the context is past the original 256): the logits of a
   100-token prompt agree with llama.cpp's at f32's tolerance; the two contexts' logits differ from each other (so
   each check saw its own factors); greedy continuations match at -c 256 (the checks of qwen3_crosscheck.py).
2. Q4_K_M (the fused q/k/v under attn_v's rules): logits within the quantized tolerance.

usage: phi3_crosscheck.py INFERTUNE OUT_DIR
Exits 77 (ctest's SKIP_RETURN_CODE) when llama-cpp-python is not installed."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qwen3_crosscheck as checks  # noqa: E402  (exits 77 without llama-cpp-python)
from logits_compare import infertune_logits, relative_diff, run  # noqa: E402

TINY_PHI3 = ["--arch", "phi3", "--preset", "tiny"]
SHORT_CTX = 256  # at most the original context: the short factors
LONG_CTX = 512  # past it: the long factors
# The long and short factors must move the logits by far more than f32's tolerance, or the checks prove nothing.
MIN_FACTOR_EFFECT = 1e-2


def synth(infertune: str, out_dir: str, name: str, file_type: str) -> str:
    model = os.path.join(out_dir, f"{name}.gguf")
    run([infertune, "synth", *TINY_PHI3, "--type", file_type, "--seed", "5", "-t", "2", "-o", model])
    return model


def check_factor_effect(infertune: str, model: str, out_dir: str) -> int:
    ids = checks.prompt_ids(checks.N_TOKENS)
    short = infertune_logits(infertune, model, ids, os.path.join(out_dir, "short.logits"), "f32", SHORT_CTX)
    long = infertune_logits(infertune, model, ids, os.path.join(out_dir, "long.logits"), "f32", LONG_CTX)
    rms, _ = relative_diff(long, short)
    ok = rms >= MIN_FACTOR_EFFECT
    print(f"{'ok  ' if ok else 'FAIL'} -c {LONG_CTX} (long factors) vs -c {SHORT_CTX} (short): rms/std {rms:.2e}")
    return 0 if ok else 1


def main() -> int:
    infertune, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    failures = 0
    f32 = synth(infertune, out_dir, "phi3-tiny-f32", "f32")
    for n_ctx in (SHORT_CTX, LONG_CTX):
        checks.N_CTX = n_ctx
        failures += checks.check_logits(infertune, f"phi3-tiny-f32 -c {n_ctx}", f32, True, out_dir)
    failures += check_factor_effect(infertune, f32, out_dir)
    checks.N_CTX = SHORT_CTX
    failures += checks.check_greedy(infertune, "phi3-tiny-f32", f32)
    quantized = synth(infertune, out_dir, "phi3-tiny-q4_k_m", "q4_k_m")
    failures += checks.check_logits(infertune, "phi3-tiny-q4_k_m", quantized, False, out_dir)
    print(f"{'FAIL' if failures else 'ok'}: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
