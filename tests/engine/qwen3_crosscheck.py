#!/usr/bin/env python3
"""The qwen3 architecture against llama.cpp itself (through the llama-cpp-python package), on synthesized models
(`infertune synth`; no Qwen3 GGUF is installable from the package archives these machines reach).

1. The tiny preset in f32 (dim 256, 8 heads of 32): the logits of a 100-token prompt agree with llama.cpp's
   (rms(d)/std(ref) <= F32_RMS, max|d|/std(ref) <= F32_MAX). f32 weights and cache: only summation order separates
   the two.
2. Qwen3-0.6B's attention shape cut to 2 layers and a 512-token vocabulary (dim 1024, 16 query and 8 KV heads of 128,
   so the query projection is twice n_embd wide and the head size comes from attention.key_length), in f32 and in
   Q4_K_M: logits as above, the quantized file within QUANT_RMS (both sides round every product's input to 8 bits,
   but sum in other orders).
3. Greedy continuations of the f32 files: `infertune run --temp 0` gives llama.cpp's first GREEDY_TOKENS tokens, or
   parts from them only where llama.cpp's own logits are a near tie.

usage: qwen3_crosscheck.py INFERTUNE OUT_DIR
Exits 77 (ctest's SKIP_RETURN_CODE) when llama-cpp-python is not installed."""
import os
import sys

try:
    import numpy as np
    import llama_cpp
    from llama_cpp import Llama
except ImportError:
    print("SKIP: Python package 'llama-cpp-python' is not installed (scripts/setup installs it)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from logits_compare import infertune_greedy, infertune_logits, relative_diff, run  # noqa: E402

F32_RMS = 1e-4
F32_MAX = 1e-3
QUANT_RMS = 5e-2
TIE_GAP = 0.05
GREEDY_TOKENS = 24
N_TOKENS = 100
N_CTX = 256
END_OF_GENERATION = 2

# (file name, infertune synth arguments, whether the logits compare at f32's tolerance)
MODELS = [
    ("qwen3-tiny-f32", ["--arch", "qwen3", "--preset", "tiny", "--type", "f32"], True),
    ("qwen3-0.6b-heads-f32", ["--preset", "qwen3-0.6b", "--layers", "2", "--vocab", "512", "--type", "f32"], True),
    ("qwen3-0.6b-heads-q4_k_m", ["--preset", "qwen3-0.6b", "--layers", "2", "--vocab", "512", "--type", "q4_k_m"],
     False),
]


def prompt_ids(n: int) -> list:
    # BOS, then ordinary tokens of the synthetic vocabulary (ids 3.. are bytes and merges).
    return [1] + [3 + (i * 97 + 13) % 509 for i in range(n - 1)]


def llama(model: str) -> Llama:
    return Llama(model_path=model, n_ctx=N_CTX, n_batch=N_CTX, n_ubatch=N_CTX, n_threads=2, logits_all=True,
                 type_k=llama_cpp.GGML_TYPE_F32, type_v=llama_cpp.GGML_TYPE_F32, flash_attn=False, verbose=False)


def llama_logits(model: str, ids: list) -> np.ndarray:
    llm = llama(model)
    llm.eval(ids)
    return np.array(llm.scores[: llm.n_tokens], dtype=np.float64)


def check_logits(infertune: str, name: str, model: str, exact: bool, out_dir: str) -> int:
    ids = prompt_ids(N_TOKENS)
    ours = infertune_logits(infertune, model, ids, os.path.join(out_dir, f"{name}.logits"), "f32", N_CTX)
    ref = llama_logits(model, ids)
    rms, worst = relative_diff(ours, ref)
    ok = rms <= F32_RMS and worst <= F32_MAX if exact else rms <= QUANT_RMS
    same_top = float((ours.argmax(axis=1) == ref.argmax(axis=1)).mean())
    print(f"{'ok  ' if ok else 'FAIL'} logits of {name} ({N_TOKENS} tokens): rms/std {rms:.2e}, max/std {worst:.2e}, "
          f"same argmax {100 * same_top:.0f}%")
    return 0 if ok else 1


def llama_greedy(model: str, ids: list) -> list:
    out = []
    for token in llama(model).generate(ids, temp=0.0, top_k=1, reset=True):
        out.append(int(token))
        if len(out) == GREEDY_TOKENS:
            break
    return out


def check_greedy(infertune: str, name: str, model: str) -> int:
    ids = prompt_ids(12)
    ref, got = llama_greedy(model, ids), infertune_greedy(infertune, model, ids, GREEDY_TOKENS, N_CTX)
    agree = next((j for j, (a, b) in enumerate(zip(got, ref)) if a != b), min(len(got), len(ref)))
    gap = 0.0
    if agree < min(len(got), len(ref)):
        row = llama_logits(model, ids + got[:agree])[-1]
        gap = float((row.max() - row[got[agree]]) / row.std())
    # run stops at the end-of-generation token (the synthetic vocabulary's 2), where llama.cpp's generator goes on.
    stopped_with_it = agree == len(got) < len(ref) and ref[agree] == END_OF_GENERATION
    ok = agree == GREEDY_TOKENS or stopped_with_it or gap <= TIE_GAP
    print(f"{'ok  ' if ok else 'FAIL'} greedy continuation of {name}: first {agree} of {GREEDY_TOKENS} tokens as "
          f"llama.cpp's" + (f" (then our token {gap:.3f} std below llama.cpp's best)" if agree < GREEDY_TOKENS else ""))
    return 0 if ok else 1


def main() -> int:
    infertune, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    failures = 0
    for name, synth_args, exact in MODELS:
        model = os.path.join(out_dir, f"{name}.gguf")
        run([infertune, "synth", *synth_args, "--seed", "5", "-t", "2", "-o", model])
        failures += check_logits(infertune, name, model, exact, out_dir)
        if exact:
            failures += check_greedy(infertune, name, model)
    print(f"{'FAIL' if failures else 'ok'}: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
