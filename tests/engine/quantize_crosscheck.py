#!/usr/bin/env python3
"""`infertune quantize` against llama.cpp's own quantizer (llama_model_quantize, through llama-cpp-python) on the same
input: for every file type, and for --pure, --output-tensor-type, --token-embedding-type, --leave-output-tensor and
--allow-requantize, every tensor must have llama.cpp's type and exactly its bytes, and the metadata must hold the
same keys and values. Inputs: the F32 llama and qwen2 fixtures, and synthetic F16/BF16 models that reach the mixes'
per-layer rules (16 layers) and the fallbacks for rows that do not fit a 256-value block (width 320), a qwen3
(its per-head norms among the tensors), and mixtures of experts (qwen3moe, Mixtral, qwen2moe, gpt-oss),
phi3's fused matrices and gemma2.

usage: quantize_crosscheck.py INFERTUNE FIXTURES_DIR WORKDIR
Exits 77 (skipped) when llama_cpp or gguf cannot be imported."""
import ctypes
import os
import subprocess
import sys

try:
    import llama_cpp
    from gguf_compare import differences
except ImportError as e:  # noqa: F841
    print(f"skipped: {e} (scripts/setup installs llama-cpp-python and gguf)")
    sys.exit(77)

FILE_TYPES = {"F16": 1, "BF16": 32, "Q8_0": 7, "Q4_0": 2, "Q4_1": 3, "Q5_0": 8, "Q5_1": 9, "IQ4_NL": 25,
              "IQ4_XS": 30, "Q2_K": 10, "Q3_K_S": 11, "Q3_K_M": 12, "Q3_K_L": 13, "Q4_K_S": 14, "Q4_K_M": 15,
              "Q5_K_S": 16, "Q5_K_M": 17, "Q6_K": 18, "MXFP4_MOE": 38}
GGML_TYPES = {"q8_0": 8, "q4_0": 2, "f16": 1, "q6_K": 14}


def llama_quantize(src, dst, ftype, **options):
    p = llama_cpp.llama_model_quantize_default_params()
    p.ftype = ftype
    p.nthread = 2
    for key, value in options.items():
        setattr(p, key, value)
    rc = llama_cpp.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(p))
    if rc != 0:
        raise RuntimeError(f"llama_model_quantize {src} -> {dst} (ftype {ftype}) returned {rc}")


def main():
    infertune, fixtures, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    llama_cpp.llama_backend_init()
    models = os.path.join(fixtures, "models")
    sources = [os.path.join(models, "fixture-llama-f32.gguf"), os.path.join(models, "fixture-qwen2-f32.gguf")]
    for name, args in [("deep-f16", ["--preset", "tiny", "--layers", "16", "--type", "f16"]),
                       ("wide-bf16", ["--preset", "tiny", "--dim", "320", "--ffn", "640", "--type", "bf16"]),
                       ("qwen3-f16", ["--arch", "qwen3", "--preset", "tiny", "--type", "f16"]),
                       # Experts: 3-D tensors, the f32 router, and Mixtral's (8 experts) attention rules.
                       ("qwen3moe-f16", ["--arch", "qwen3moe", "--preset", "tiny", "--type", "f16"]),
                       ("mixtral-f16", ["--preset", "tiny", "--experts", "8", "--type", "f16"]),
                       ("qwen2moe-f16", ["--arch", "qwen2moe", "--preset", "tiny", "--type", "f16"]),
                       # gpt-oss: biases (2-D for the experts) and sinks, which stay f32.
                       ("gpt-oss-f16", ["--arch", "gpt-oss", "--preset", "tiny", "--type", "f16"]),
                       # phi3: a fused q/k/v (attn_v's rules), a fused gate/up, LongRoPE factors (stay f32).
                       ("phi3-f16", ["--arch", "phi3", "--preset", "tiny", "--type", "f16"]),
                       # gemma2: post-norms, tied output (its token_embd under the output's rules).
                       ("gemma2-f16", ["--arch", "gemma2", "--preset", "tiny", "--type", "f16"])]:
        path = os.path.join(work, f"{name}.gguf")
        subprocess.run([infertune, "synth", *args, "-o", path], check=True, capture_output=True)
        sources.append(path)

    cases = []  # (source, type name, our flags, llama.cpp params)
    for src in sources:
        for name, ftype in FILE_TYPES.items():
            cases.append((src, name, [], {}))
    llama = sources[0]
    cases += [
        (llama, "Q4_K_M", ["--pure"], {"pure": True}),
        (llama, "Q2_K", ["--pure"], {"pure": True}),
        (llama, "MXFP4_MOE", ["--pure"], {"pure": True}),  # every weight MXFP4
        (llama, "Q4_K_M", ["--output-tensor-type", "q8_0"], {"output_tensor_type": GGML_TYPES["q8_0"]}),
        (llama, "Q5_K_M", ["--token-embedding-type", "q4_0"], {"token_embedding_type": GGML_TYPES["q4_0"]}),
        (llama, "Q4_0", ["--leave-output-tensor"], {"quantize_output_tensor": False}),
        (sources[2], "Q4_K_M", ["--output-tensor-type", "f16"], {"output_tensor_type": GGML_TYPES["f16"]}),
        (os.path.join(models, "fixture-llama-Q8_0.gguf"), "Q4_0", ["--allow-requantize"], {"allow_requantize": True}),
    ]
    failures = 0
    for i, (src, name, flags, params) in enumerate(cases):
        ref = os.path.join(work, f"ref-{i}.gguf")
        ours = os.path.join(work, f"ours-{i}.gguf")
        llama_quantize(src, ref, FILE_TYPES[name], **params)
        run = subprocess.run([infertune, "quantize", *flags, src, ours, name, "2"], capture_output=True, text=True)
        label = f"{os.path.basename(src)} {name} {' '.join(flags)}".strip()
        if run.returncode != 0:
            print(f"FAIL {label}: infertune quantize exited {run.returncode}: {run.stderr.strip()[-400:]}")
            failures += 1
            continue
        found = differences(ref, ours)
        print(f"{'FAIL' if found else 'ok  '} {label}" + "".join(f"\n       {d}" for d in found[:6]))
        failures += bool(found)
        os.remove(ref)
        os.remove(ours)
    print(f"{len(cases) - failures}/{len(cases)} quantizations equal llama.cpp's")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
