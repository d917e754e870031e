#!/usr/bin/env python3
"""`infertune imatrix` on the F32 llama fixture and a text of this repository: the GGUF file has llama-imatrix's keys
and tensors (general.type, imatrix.datasets / chunk_count / chunk_size, "<weight>.in_sum2" [n_cols, 1] and
"<weight>.counts" for every weight of the blocks, in name order); the sums of blk.0's attention input equal an
independent numpy computation from the file's own weights (the token embeddings, RMS-normed, times attn_norm), within
1e-4; q, k and v, which read one input, have equal sums; and the legacy .dat file holds sum / count * ncall.
When llama.cpp's llama-imatrix has been built (scripts/build-llama-cpp llama-imatrix, cached), the matrices of both
tools are compared too (each value within 1%).
On a synthesized qwen3moe (16 experts, 4 per token) the expert stacks get one row of sums and one count per expert:
every token counted n_used times over an expert stack's rows, once in the router's, and, against llama-imatrix,
the same count per expert and each expert's sums within 1%.

usage: imatrix_check.py INFERTUNE FIXTURES_DIR TEXT_FILE BUILD_LLAMA_CPP_SCRIPT
Exits 77 (skipped) when gguf or numpy cannot be imported."""
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from gguf import GGUFReader
except ImportError as e:
    print(f"skipped: {e} (scripts/setup installs gguf)")
    sys.exit(77)

N_CTX, N_CHUNKS = 128, 2
ROLES = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"]


def field(reader, key):
    f = reader.fields[key]
    return f.parts[f.data[0]]


def tensors(path):
    return {t.name: np.asarray(t.data, dtype=np.float64).reshape(-1) for t in GGUFReader(path).tensors}


def reference_attn_input_sums(model_path, tokens):
    r = GGUFReader(model_path)
    w = {t.name: np.asarray(t.data, dtype=np.float64) for t in r.tensors}
    eps = float(field(r, "llama.attention.layer_norm_rms_epsilon")[0])
    bos = int(field(r, "tokenizer.ggml.bos_token_id")[0])
    emb, gain = w["token_embd.weight"], w["blk.0.attn_norm.weight"]
    sums = np.zeros(emb.shape[1])
    for c in range(N_CHUNKS):
        chunk = list(tokens[c * N_CTX:(c + 1) * N_CTX])
        chunk[0] = bos
        x = emb[chunk]
        x = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * gain
        sums += (x * x).sum(axis=0)
    return sums


def read_dat(path):
    with open(path, "rb") as f:
        data = f.read()
    pos, out = 4, {}
    (n,) = struct.unpack_from("<i", data, 0)
    for _ in range(n):
        (length,) = struct.unpack_from("<i", data, pos)
        name = data[pos + 4:pos + 4 + length].decode()
        pos += 4 + length
        ncall, nval = struct.unpack_from("<ii", data, pos)
        pos += 8
        out[name] = (ncall, np.frombuffer(data, dtype="<f4", count=nval, offset=pos).astype(np.float64))
        pos += 4 * nval
    return out


N_EXPERT, N_USED = 16, 4


def check_experts(infertune, text_file, llama_imatrix, work):
    model = os.path.join(work, "qwen3moe.gguf")
    subprocess.run([infertune, "synth", "--arch", "qwen3moe", "--preset", "tiny", "--type", "f32", "-o", model],
                   check=True, capture_output=True)
    common = ["-m", model, "-f", text_file, "-c", str(N_CTX), "--chunks", str(N_CHUNKS), "-t", "2"]
    out = os.path.join(work, "moe-imatrix.gguf")
    subprocess.run([infertune, "imatrix", *common, "-o", out], check=True, capture_output=True)
    ours, failures = tensors(out), []
    tokens = N_CHUNKS * N_CTX
    for i in range(4):
        for role in ["ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"]:
            counts = ours[f"blk.{i}.{role}.weight.counts"]
            if len(counts) != N_EXPERT or counts.sum() != tokens * N_USED:
                failures.append(f"blk.{i}.{role}.weight.counts: {len(counts)} experts, {counts.sum()} tokens")
        if ours[f"blk.{i}.ffn_gate_inp.weight.counts"][0] != tokens:
            failures.append(f"blk.{i}.ffn_gate_inp.weight.counts")
    if llama_imatrix and os.access(llama_imatrix, os.X_OK):
        theirs_path = os.path.join(work, "moe-llama.gguf")
        subprocess.run([llama_imatrix, *common, "-o", theirs_path, "-b", str(N_CTX), "--no-ppl"], check=True,
                       capture_output=True)
        theirs = tensors(theirs_path)
        if sorted(theirs) != sorted(ours):
            failures.append("the MoE matrix's entries differ from llama-imatrix's")
            return failures
        worst_count = max(np.max(np.abs(ours[n] - theirs[n])) for n in ours if n.endswith(".counts"))
        # Relative to each value, but not below a thousandth of the entry's mean: an expert that saw one token may
        # hold a sum of squares near 0, whose rounding says nothing.
        worst = max(np.max(np.abs(ours[n] - theirs[n]) / np.maximum(theirs[n], 1e-3 * theirs[n].mean())) for n in ours
                    if n.endswith(".in_sum2"))
        print(f"MoE against llama-imatrix: counts differ by at most {worst_count:g} tokens, sums by {worst:.2e}")
        if worst_count != 0 or worst > 1e-2:
            failures.append(f"the MoE matrix differs from llama-imatrix's: counts by {worst_count}, sums by {worst:.2e}")
    return failures


def main():
    infertune, fixtures, text_file, build_script = sys.argv[1:5]
    model = os.path.join(fixtures, "models", "fixture-llama-f32.gguf")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "imatrix.gguf")
        common = ["-m", model, "-f", text_file, "-c", str(N_CTX), "--chunks", str(N_CHUNKS), "-t", "2"]
        subprocess.run([infertune, "imatrix", *common, "-o", out], check=True, capture_output=True)
        r = GGUFReader(out)
        if bytes(field(r, "general.type")).decode() != "imatrix":
            failures.append("general.type is not imatrix")
        if int(field(r, "imatrix.chunk_count")[0]) != N_CHUNKS or int(field(r, "imatrix.chunk_size")[0]) != N_CTX:
            failures.append("imatrix.chunk_count / chunk_size")
        names = [t.name for t in r.tensors]
        want = sorted(f"blk.{i}.{role}.weight" for i in range(4) for role in ROLES)
        if names != [n for w in want for n in (w + ".in_sum2", w + ".counts")]:
            failures.append(f"tensor names/order: {names[:6]}...")
        ours = tensors(out)
        for w in want:
            if ours[w + ".counts"][0] != N_CHUNKS * N_CTX:
                failures.append(f"{w}.counts = {ours[w + '.counts'][0]}")
        tokens = [int(t) for t in subprocess.run([infertune, "tokenize", "-m", model, "--ids"],
                                                 input=open(text_file, encoding="utf-8").read(), text=True,
                                                 capture_output=True, check=True).stdout.replace(",", " ").split()]
        ref = reference_attn_input_sums(model, tokens)
        got = ours["blk.0.attn_q.weight.in_sum2"]
        worst = np.max(np.abs(got - ref) / np.maximum(ref, 1e-12))
        print(f"blk.0 attention input sums against numpy: worst relative difference {worst:.2e}")
        if worst > 1e-4:
            failures.append(f"blk.0.attn_q.weight.in_sum2 differs from numpy by {worst:.2e}")
        for role in ["attn_k", "attn_v"]:
            if not np.array_equal(ours[f"blk.0.{role}.weight.in_sum2"], got):
                failures.append(f"blk.0.{role} sums differ from attn_q's")
        dat = os.path.join(work, "imatrix.dat")
        subprocess.run([infertune, "imatrix", *common, "-o", dat], check=True, capture_output=True)
        legacy = read_dat(dat)
        ncall, values = legacy["blk.0.attn_q.weight"]
        if ncall != N_CHUNKS or not np.allclose(values, got / (N_CHUNKS * N_CTX) * ncall, rtol=1e-6):
            failures.append("the .dat file's blk.0.attn_q.weight is not sum / count * ncall")
        llama_dir = subprocess.run([build_script, "--cached", "llama-imatrix"], capture_output=True, text=True)
        llama_imatrix = os.path.join(llama_dir.stdout.strip().splitlines()[-1], "llama-imatrix") \
            if llama_dir.returncode == 0 and llama_dir.stdout.strip() else ""
        if llama_imatrix and os.access(llama_imatrix, os.X_OK):
            theirs_path = os.path.join(work, "llama.gguf")
            subprocess.run([llama_imatrix, *common, "-o", theirs_path, "-b", str(N_CTX), "--no-ppl"], check=True,
                           capture_output=True)
            theirs = tensors(theirs_path)
            worst = max(np.max(np.abs(ours[w + ".in_sum2"] - theirs[w + ".in_sum2"]) /
                               np.maximum(theirs[w + ".in_sum2"], 1e-6)) for w in want)
            print(f"against llama-imatrix: worst relative difference {worst:.2e} over {len(want)} weights")
            if worst > 1e-2:
                failures.append(f"llama-imatrix's sums differ by up to {worst:.2e}")
        else:
            print("llama-imatrix is not built (scripts/build-llama-cpp llama-imatrix): that comparison is skipped")
        failures += check_experts(infertune, text_file, llama_imatrix, work)
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
