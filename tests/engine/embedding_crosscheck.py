#!/usr/bin/env python3
"""`infertune embedding` against llama.cpp's embeddings (llama-cpp-python's Llama.embed, normalize=True).

Models: the f32 and Q8_0 llama fixtures, the Q8_0 qwen2 fixture, a synthesized tiny gemma3 and qwen3 in f32 (`infertune
synth`; qwen3 is the architecture of the Qwen3-Embedding models),
the f32 llama fixture made bidirectional (llama.attention.causal = false, as an embedding model's file says), and
Gemma 3 270M from the model cache when scripts/setup assembled it (skipped with a message otherwise). For each,
with pooling mean, last and cls, the same four prompts (one with newlines inside, so they go in split at
--embd-separator) are embedded by both: every prompt's vector must point the way llama.cpp's does (cosine similarity
>= the model's threshold below) and both must count the same tokens (BOS added; llama-cpp-python parses no special
tokens, and the prompts hold none). With pooling none, one prompt's per-token vectors are compared one for one (one
prompt: llama-cpp-python 0.3.36 reads the per-token vectors of a second prompt in a batch from the wrong offset).

Both evaluate in float with an f16 KV cache. With f32 weights they agree to summation order; with quantized weights
both round every product's input to 8 bits, but a float sum in another order sends a value on a rounding boundary the
other way now and then, and through Gemma's 18 layers of large activations that grows (its logits differ by 4-6% rms,
see gemma3_crosscheck.py). Measured on a 2-core Zen 4 host, llama-cpp-python 0.3.36, as 1 - the lowest cosine
similarity over the prompts (over the tokens for none):
  fixture-llama-f32     mean 1.1e-08  last 1.1e-08  cls 4e-14  none 1.8e-08
  gemma3-tiny-f32       mean 5.1e-08  last 1.8e-07  cls 4e-16  none 2.5e-07
  fixture-llama-Q8_0    mean 1.8e-05  last 3.2e-05  cls 7e-15  none 3.6e-05
  fixture-qwen2-Q8_0    mean 1.4e-05  last 3.5e-05  cls 6e-15  none 4.6e-05
  gemma-3-270m-q4_k_m   mean 2.1e-03  last 3.2e-03  cls 2e-14  none 2.7e-03
(cls is BOS's state, which attends to nothing but itself.) The thresholds leave a margin of 3x and more below those.
The whole check takes about 7 s.

usage: embedding_crosscheck.py INFERTUNE FIXTURES_DIR
Exits 77 (ctest's SKIP_RETURN_CODE) when llama-cpp-python is not installed."""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bidirectional_gguf import bidirectional_copy  # noqa: E402

try:
    import numpy as np
    import llama_cpp
    from llama_cpp import Llama
except ImportError as e:
    print(f"SKIP: {e} (scripts/setup installs llama-cpp-python)")
    sys.exit(77)

THRESHOLDS = {  # the lowest cosine similarity allowed, per model
    "fixture-llama-f32": 0.99999,
    "gemma3-tiny-f32": 0.99999,
    "qwen3-tiny-f32": 0.99999,
    "fixture-llama-f32-bidirectional": 0.99999,
    "fixture-llama-Q8_0": 0.9995,
    "fixture-qwen2-Q8_0": 0.9995,
    "gemma-3-270m-q4_k_m": 0.99,
}
POOLINGS = {
    "mean": llama_cpp.LLAMA_POOLING_TYPE_MEAN,
    "last": llama_cpp.LLAMA_POOLING_TYPE_LAST,
    "cls": llama_cpp.LLAMA_POOLING_TYPE_CLS,
}
PROMPTS = [
    "Once upon a time there was a little cat who liked to sit in the sun.",
    "The capital of France is Paris.",
    "def add(a, b):\n    return a + b\n",
    "hello",
]
SEPARATOR = "<#sep#>"
N_CTX = 512


def gemma_path() -> str:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "infertune", "models", "gemma-3-270m-q4_k_m.gguf")


def ours(infertune: str, model: str, pooling: str, prompts: list) -> tuple:
    """Our vectors (json layout) and the token count of the summary on stderr."""
    result = subprocess.run([infertune, "embedding", "-m", model, "--pooling", pooling, "--embd-output-format", "json",
                             "--embd-separator", SEPARATOR, "-p", SEPARATOR.join(prompts), "-c", str(N_CTX),
                             "-t", "2"], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"infertune embedding --pooling {pooling} exited {result.returncode}: {result.stderr}")
    vectors = [item["embedding"] for item in json.loads(result.stdout)["data"]]
    tokens = int(re.search(r"embedding: \d+ prompts?, (\d+) tokens?", result.stderr).group(1))
    return np.array(vectors, dtype=np.float64), tokens


def llama(model: str, pooling: int, prompts: list) -> tuple:
    llm = Llama(model_path=model, embedding=True, pooling_type=pooling, n_ctx=N_CTX, n_batch=N_CTX, n_threads=2,
                verbose=False)
    vectors, tokens = llm.embed(prompts, normalize=True, return_count=True)
    return vectors, tokens


def cosines(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return (got * ref).sum(axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(ref, axis=1))


def check(label: str, got: np.ndarray, ref: np.ndarray, our_tokens: int, ref_tokens: int, threshold: float) -> int:
    if got.shape != ref.shape or our_tokens != ref_tokens:
        print(f"FAIL {label}: infertune gave {got.shape[0]} vectors of {got.shape[1]} from {our_tokens} tokens, "
              f"llama.cpp {ref.shape[0]} of {ref.shape[1]} from {ref_tokens}")
        return 1
    lowest = float(cosines(got, ref).min())
    ok = lowest >= threshold
    print(f"{'ok  ' if ok else 'FAIL'} {label}: {got.shape[0]} vectors, {our_tokens} tokens, lowest cosine similarity "
          f"{lowest:.6f}, 1 - that {1 - lowest:.1e} (threshold {threshold})")
    return 0 if ok else 1


def check_model(infertune: str, model: str, threshold: float) -> int:
    name = os.path.basename(model).removesuffix(".gguf")
    failures = 0
    for pooling, pooling_type in POOLINGS.items():
        got, our_tokens = ours(infertune, model, pooling, PROMPTS)
        ref, ref_tokens = llama(model, pooling_type, PROMPTS)
        failures += check(f"{name} pooling {pooling}", got, np.array(ref, dtype=np.float64), our_tokens, ref_tokens,
                          threshold)
    got, our_tokens = ours(infertune, model, "none", PROMPTS[:1])
    ref, ref_tokens = llama(model, llama_cpp.LLAMA_POOLING_TYPE_NONE, PROMPTS[:1])
    failures += check(f"{name} pooling none (a vector per token)", got, np.array(ref[0], dtype=np.float64),
                      our_tokens, ref_tokens, threshold)
    return failures


def synthesized(infertune: str, arch: str, out_dir: str) -> str:
    model = os.path.join(out_dir, f"{arch}-tiny-f32.gguf")
    subprocess.run([infertune, "synth", "--arch", arch, "--preset", "tiny", "--type", "f32", "--seed", "5", "-t",
                    "2", "-o", model], check=True, capture_output=True)
    return model


def main() -> int:
    infertune, fixtures = sys.argv[1], sys.argv[2]
    failures = 0
    with tempfile.TemporaryDirectory() as out_dir:
        models = [os.path.join(fixtures, "models", f"{name}.gguf")
                  for name in ("fixture-llama-f32", "fixture-llama-Q8_0", "fixture-qwen2-Q8_0")]
        models += [synthesized(infertune, arch, out_dir) for arch in ("gemma3", "qwen3")]
        models.append(bidirectional_copy(os.path.join(fixtures, "models", "fixture-llama-f32.gguf"), out_dir))
        if os.path.exists(gemma_path()):
            models.append(gemma_path())
        else:
            print(f"skipped Gemma 3 270M: {gemma_path()} is absent (scripts/setup assembles it)")
        for model in models:
            failures += check_model(infertune, model, THRESHOLDS[os.path.basename(model).removesuffix(".gguf")])
    print(f"{'FAIL' if failures else 'ok'}: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
