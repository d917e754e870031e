#!/usr/bin/env python3
"""YaRN rope scaling against llama.cpp itself (through the llama-cpp-python package).

Synthesizes tiny f32 llama and qwen2 models with and without YaRN metadata (`infertune synth --rope-scaling
yarn --rope-scale 4 --rope-orig-ctx N`), evaluates a 100-token prompt, far past the original context, with
`infertune run --logits-out` and with llama.cpp (logits_all), and checks that:
  1. with the metadata (YaRN x4 and x8 with an attn_factor, linear x4), the logits agree:
     rms(d)/std(ref) <= RMS_TOLERANCE and max|d|/std(ref) <= MAX_TOLERANCE;
  2. without it (plain rope), they agree too (the sanity baseline);
  3. `run --rope-scaling yarn --rope-scale 4 --yarn-orig-ctx N` on the plain file gives exactly the logits
     of the file with the metadata, and llama.cpp given the same overrides agrees with both;
  4. YaRN changes the logits (the comparison is not between two unscaled runs).

usage: rope_yarn_crosscheck.py INFERTUNE OUT_DIR
Exits 77 (ctest's SKIP_RETURN_CODE) when llama-cpp-python is not installed."""
import os
import subprocess
import sys

try:
    import numpy as np
    import llama_cpp
    from llama_cpp import Llama
except ImportError:
    print("SKIP: Python package 'llama-cpp-python' is not installed (scripts/setup installs it)")
    sys.exit(77)

RMS_TOLERANCE = 1e-5  # measured ~9e-7: the F32 forward passes differ only in summation order
MAX_TOLERANCE = 1e-4  # the F32 bound of the fixtures README (max |d| / std)
N_TOKENS = 100
YARN = llama_cpp.LLAMA_ROPE_SCALING_TYPE_YARN
LINEAR = llama_cpp.LLAMA_ROPE_SCALING_TYPE_LINEAR

# (name, architecture, synth's rope metadata flags, run's flags that give the same on the plain file and
# llama.cpp's context parameters for them (None: metadata only)).
CASES = [
    ("llama-yarn", "llama", ["--rope-scaling", "yarn", "--rope-scale", "4", "--rope-orig-ctx", "32"],
     (["--rope-scaling", "yarn", "--rope-scale", "4", "--yarn-orig-ctx", "32"],
      dict(rope_scaling_type=YARN, rope_freq_scale=0.25, yarn_orig_ctx=32))),
    ("qwen2-yarn", "qwen2", ["--rope-scaling", "yarn", "--rope-scale", "4", "--rope-orig-ctx", "64"],
     (["--rope-scaling", "yarn", "--rope-scale", "4", "--yarn-orig-ctx", "64"],
      dict(rope_scaling_type=YARN, rope_freq_scale=0.25, yarn_orig_ctx=64))),
    ("llama-yarn-x8-attn", "llama",
     ["--rope-scaling", "yarn", "--rope-scale", "8", "--rope-orig-ctx", "48", "--rope-attn-factor", "0.8"], None),
    ("qwen2-linear", "qwen2", ["--rope-scaling", "linear", "--rope-scale", "4"],
     (["--rope-scaling", "linear", "--rope-scale", "4"], dict(rope_scaling_type=LINEAR, rope_freq_scale=0.25))),
]


def tokens() -> list:
    return [3 + (i * 97 + 13) % 509 for i in range(N_TOKENS)]


def synth(bin_path: str, path: str, arch: str, rope_args: list) -> None:
    subprocess.run([bin_path, "synth", "--arch", arch, "--preset", "tiny", "--type", "f32", "--seed", "11",
                    "-t", "2", "-o", path] + rope_args, check=True, capture_output=True)


def infertune_logits(bin_path: str, model: str, out: str, extra: list) -> np.ndarray:
    ids = ",".join(str(t) for t in tokens())
    result = subprocess.run([bin_path, "run", "-m", model, "--prompt-tokens", ids, "-n", "0", "-t", "2",
                             "-c", "256", "-ctk", "f32", "-ctv", "f32", "--logits-out", out] + extra, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"infertune run failed: {result.stdout}{result.stderr}")
    return np.fromfile(out, dtype="<f4").reshape(N_TOKENS, -1)


def llama_cpp_logits(model: str, **rope) -> np.ndarray:
    # As the fixtures' references were made: F32 KV cache, no flash attention, one batch.
    llm = Llama(model_path=model, n_ctx=256, n_batch=256, n_ubatch=256, n_threads=2, logits_all=True,
                type_k=llama_cpp.GGML_TYPE_F32, type_v=llama_cpp.GGML_TYPE_F32,
                flash_attn=False, verbose=False, **rope)
    llm.eval(tokens())
    return np.array(llm.scores[: llm.n_tokens], dtype=np.float64)


def diff(got: np.ndarray, ref: np.ndarray) -> tuple:
    d = got.astype(np.float64) - ref
    std = float(ref.std())
    return float(np.sqrt(np.mean(d * d)) / std), float(np.abs(d).max() / std)


def check(label: str, got: np.ndarray, ref: np.ndarray, errors: list) -> None:
    rms, mx = diff(got, ref)
    ok = rms <= RMS_TOLERANCE and mx <= MAX_TOLERANCE
    print(f"{'ok  ' if ok else 'FAIL'} {label}: rms/std {rms:.3g}, max/std {mx:.3g}")
    if not ok:
        errors.append(f"{label}: rms/std {rms:.3g} (bound {RMS_TOLERANCE}), max/std {mx:.3g} (bound {MAX_TOLERANCE})")


def main() -> int:
    bin_path, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    errors = []
    plain = {}  # arch -> (file, our logits, llama.cpp's logits)
    for arch in ("llama", "qwen2"):
        path = os.path.join(out_dir, f"{arch}-plain.gguf")
        synth(bin_path, path, arch, [])
        ours = infertune_logits(bin_path, path, os.path.join(out_dir, f"{arch}-plain.f32"), [])
        ref = llama_cpp_logits(path)
        check(f"{arch} plain rope vs llama.cpp", ours, ref, errors)
        plain[arch] = (path, ref)
    for name, arch, metadata, overrides in CASES:
        path = os.path.join(out_dir, f"{name}.gguf")
        synth(bin_path, path, arch, metadata)
        ours = infertune_logits(bin_path, path, os.path.join(out_dir, f"{name}.f32"), [])
        ref = llama_cpp_logits(path)
        check(f"{name} ({' '.join(metadata)}) vs llama.cpp", ours, ref, errors)
        effect, _ = diff(plain[arch][1], ref)
        print(f"     {name} vs plain rope in llama.cpp: rms/std {effect:.3g}")
        if effect < 100 * RMS_TOLERANCE:
            errors.append(f"{name}: the scaling barely changes llama.cpp's logits ({effect:.3g}): the check shows nothing")
        if overrides is None:
            continue
        flags, params = overrides
        ours_flags = infertune_logits(bin_path, plain[arch][0], os.path.join(out_dir, f"{name}-flags.f32"), flags)
        check(f"{name}: plain file + {' '.join(flags)} vs llama.cpp with the same overrides", ours_flags,
              llama_cpp_logits(plain[arch][0], **params), errors)
        if np.array_equal(ours_flags, ours):
            print(f"ok   {name}: plain file + flags == the file with the metadata, bit for bit")
        else:
            errors.append(f"{name}: {' '.join(flags)} on the plain file differs from the file with the metadata")
    for e in errors:
        print(f"FAIL {e}")
    print(f"{'FAILED' if errors else 'passed'}: {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
