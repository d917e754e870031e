#!/usr/bin/env python3
"""`infertune perplexity` against llama.cpp's logits (llama-cpp-python) with llama-perplexity's method, on
stories260K (a small model with trained weights) and a text of this repository: the tokens must be llama.cpp's, and
the running perplexity after every chunk must agree within 0.25% (both evaluate in float with an f16 KV cache, in
different orders; on this text, far from the model's stories, many tokens are very unlikely and their log-probabilities
are sensitive: the first chunk's estimates differed by 0.09% on a Zen 4 host). Then --kl-divergence-base / --kl-divergence of the Q4_K_M llama fixture against
its F32 original: the mean KL divergence within 5% of the one computed from llama.cpp's logits of the same two files,
the same-top-token share within 1.5 points.

usage: perplexity_crosscheck.py INFERTUNE FIXTURES_DIR TEXT_FILE
Exits 77 (skipped) when llama_cpp cannot be imported."""
import math
import os
import re
import subprocess
import sys
import tempfile

try:
    import llama_cpp
    import numpy as np
except ImportError as e:
    print(f"skipped: {e} (scripts/setup installs llama-cpp-python)")
    sys.exit(77)

N_CTX = 128
N_CHUNKS = 4


def llama_running_ppl(model, text):
    llm = llama_cpp.Llama(model_path=model, n_ctx=N_CTX, n_batch=N_CTX, logits_all=True, verbose=False)
    tokens = llm.tokenize(text.encode(), add_bos=True, special=False)
    bos = llm.token_bos()
    nll, count, running = 0.0, 0, []
    for c in range(N_CHUNKS):
        chunk = list(tokens[c * N_CTX:(c + 1) * N_CTX])
        chunk[0] = bos
        llm.reset()
        llm.eval(chunk)
        logits = np.asarray(llm.scores[:N_CTX], dtype=np.float64)
        for i in range(N_CTX // 2, N_CTX - 1):
            row = logits[i]
            top = row.max()
            nll += math.log(np.exp(row - top).sum()) - (row[tokens[c * N_CTX + i + 1]] - top)
            count += 1
        running.append(math.exp(nll / count))
    return tokens, running


def llama_chunk_logprobs(model, tokens):
    """log-softmax of llama.cpp's logits at the scored positions of each chunk: [chunk][position][vocab]."""
    llm = llama_cpp.Llama(model_path=model, n_ctx=N_CTX, n_batch=N_CTX, logits_all=True, verbose=False)
    out = []
    for c in range(N_CHUNKS):
        chunk = list(tokens[c * N_CTX:(c + 1) * N_CTX])
        chunk[0] = llm.token_bos()
        llm.reset()
        llm.eval(chunk)
        logits = np.asarray(llm.scores[N_CTX // 2:N_CTX - 1], dtype=np.float64)
        top = logits.max(axis=1, keepdims=True)
        out.append(logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True)))
    return out


def check_kl_divergence(infertune, fixtures, text_file, work):
    base_model = f"{fixtures}/models/fixture-llama-f32.gguf"
    quant_model = f"{fixtures}/models/fixture-llama-Q4_K_M.gguf"
    base_file = os.path.join(work, "base-logprobs.bin")
    common = ["-c", str(N_CTX), "--chunks", str(N_CHUNKS), "-t", "2"]
    subprocess.run([infertune, "perplexity", "-m", base_model, "-f", text_file, "--kl-divergence-base", base_file,
                    *common], capture_output=True, text=True, check=True)
    run = subprocess.run([infertune, "perplexity", "-m", quant_model, "--kl-divergence-base", base_file,
                          "--kl-divergence", "-t", "2"], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"FAIL: --kl-divergence exited {run.returncode}: {run.stderr[-400:]}")
        return 1
    ours_kld = float(re.search(r"Mean    KLD:\s+([0-9.]+)", run.stdout).group(1))
    ours_top = float(re.search(r"Same top p:\s+([0-9.]+)", run.stdout).group(1))
    tokens = llama_cpp.Llama(model_path=base_model, n_ctx=N_CTX, verbose=False).tokenize(
        open(text_file, encoding="utf-8").read().encode(), add_bos=True, special=False)
    base = llama_chunk_logprobs(base_model, tokens)
    quant = llama_chunk_logprobs(quant_model, tokens)
    kld = np.concatenate([(np.exp(b) * (b - q)).sum(axis=1) for b, q in zip(base, quant)])
    top = np.concatenate([b.argmax(axis=1) == q.argmax(axis=1) for b, q in zip(base, quant)])
    ref_kld, ref_top = kld.mean(), 100 * top.mean()
    ok_kld = abs(ours_kld - ref_kld) <= 0.05 * ref_kld + 1e-5
    ok_top = abs(ours_top - ref_top) <= 1.5
    print(f"{'ok  ' if ok_kld else 'FAIL'} mean KLD Q4_K_M vs F32: infertune {ours_kld:.6f}, llama.cpp {ref_kld:.6f}")
    print(f"{'ok  ' if ok_top else 'FAIL'} same top token: infertune {ours_top:.3f}%, llama.cpp {ref_top:.3f}%")
    return 0 if ok_kld and ok_top else 1


def main():
    infertune, fixtures, text_file = sys.argv[1], sys.argv[2], sys.argv[3]
    model = f"{fixtures}/models/stories260K.gguf"
    text = open(text_file, encoding="utf-8").read()
    ref_tokens, ref = llama_running_ppl(model, text)
    ours_tokens = subprocess.run([infertune, "tokenize", "-m", model, "--ids"], input=text, capture_output=True,
                                 text=True, check=True).stdout
    ours_tokens = [int(t) for t in re.findall(r"-?\d+", ours_tokens)]
    if ours_tokens[:N_CTX * N_CHUNKS] != list(ref_tokens[:N_CTX * N_CHUNKS]):
        first = next(i for i, (a, b) in enumerate(zip(ours_tokens, ref_tokens)) if a != b)
        print(f"FAIL: the tokens differ from llama.cpp's at {first}")
        return 1
    run = subprocess.run([infertune, "perplexity", "-m", model, "-f", text_file, "-c", str(N_CTX), "--chunks",
                          str(N_CHUNKS), "-t", "2"], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"FAIL: infertune perplexity exited {run.returncode}: {run.stderr[-400:]}")
        return 1
    ours = [float(v) for v in re.findall(r"\[\d+\]([0-9.]+),", run.stdout)]
    final = re.search(r"Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)", run.stdout)
    failures = 0
    if len(ours) != N_CHUNKS or not final:
        print(f"FAIL: expected {N_CHUNKS} running estimates and a final one, got: {run.stdout!r}")
        return 1
    for i, (a, b) in enumerate(zip(ours, ref)):
        ok = abs(a - b) <= 2.5e-3 * b
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} chunk {i + 1}: infertune {a:.4f}, llama.cpp {b:.4f}")
    if abs(float(final.group(1)) - ours[-1]) > 1e-4 * ours[-1]:
        print("FAIL: the final estimate is not the last running one")
        failures += 1
    print(f"final: {final.group(0)}")
    with tempfile.TemporaryDirectory() as work:
        failures += check_kl_divergence(infertune, fixtures, text_file, work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
