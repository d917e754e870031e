#!/usr/bin/env python3
"""`infertune quantize --imatrix` against llama.cpp's llama-quantize with the same importance matrix: matrices from
`infertune imatrix` (GGUF and legacy .dat) on the F32 llama fixture and on a synthetic 16-layer model (whose first
ffn_down layers take the matrix-only q4_1 / q5_1 rule), every file type, and --include-weights / --exclude-weights;
every tensor must have llama.cpp's type and exactly its bytes, and the metadata the same keys and values (the
quantize.imatrix.* keys included).

The llama-quantize binary comes from `scripts/build-llama-cpp --cached llama-quantize`; when it is not built, that
comparison is skipped with a message and only our side runs (each file type quantizes with the matrix, and the
matrix changes the bytes).

usage: quantize_imatrix_check.py INFERTUNE FIXTURES_DIR TEXT BUILD_SCRIPT WORKDIR
Exits 77 (skipped) when gguf or numpy cannot be imported."""
import os
import subprocess
import sys

try:
    import numpy as np
    from gguf import GGUFReader
    from gguf_compare import differences
except ImportError as e:
    print(f"skipped: {e} (scripts/setup installs gguf)")
    sys.exit(77)

FILE_TYPES = ["Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "IQ4_NL", "IQ4_XS", "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L",
              "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K"]


def tensor_bytes(path):
    return {t.name: np.asarray(t.data).tobytes() for t in GGUFReader(path).tensors}


def llama_quantize_binary(build_script):
    run = subprocess.run([build_script, "--cached", "llama-quantize"], capture_output=True, text=True)
    if run.returncode != 0 or not run.stdout.strip():
        return None
    path = os.path.join(run.stdout.strip().splitlines()[-1], "llama-quantize")
    return path if os.access(path, os.X_OK) else None


def main():
    infertune, fixtures, text, build_script, work = sys.argv[1:6]
    os.makedirs(work, exist_ok=True)
    llama = os.path.join(fixtures, "models", "fixture-llama-f32.gguf")
    deep = os.path.join(work, "deep-f16.gguf")
    subprocess.run([infertune, "synth", "--preset", "tiny", "--layers", "16", "--type", "f16", "-o", deep],
                   check=True, capture_output=True)
    matrices = {}
    for model, tag in [(llama, "llama"), (deep, "deep")]:
        for ext in ("gguf", "dat"):
            path = os.path.join(work, f"imatrix-{tag}.{ext}")
            subprocess.run([infertune, "imatrix", "-m", model, "-f", text, "-c", "64", "--chunks", "3", "-t", "2",
                            "-o", path], check=True, capture_output=True)
            matrices[(tag, ext)] = path

    cases = [(llama, t, ["--imatrix", matrices[("llama", "gguf")]]) for t in FILE_TYPES]
    cases += [(deep, t, ["--imatrix", matrices[("deep", "gguf")]]) for t in ("Q4_0", "Q5_0", "IQ4_NL", "Q4_K_M")]
    cases += [
        (llama, "Q4_K_M", ["--imatrix", matrices[("llama", "dat")]]),
        (llama, "IQ4_XS", ["--imatrix", matrices[("llama", "dat")]]),
        (llama, "Q4_K_M", ["--imatrix", matrices[("llama", "gguf")], "--include-weights", "attn_",
                           "--include-weights", "blk.3."]),
        (llama, "Q3_K_M", ["--imatrix", matrices[("llama", "gguf")], "--exclude-weights", "ffn_down"]),
        (deep, "Q4_0", ["--imatrix", matrices[("deep", "dat")], "--exclude-weights", "blk."]),
    ]

    llama_quantize = llama_quantize_binary(build_script)
    if not llama_quantize:
        print("llama-quantize is not built (scripts/build-llama-cpp llama-quantize): the byte comparison with "
              "llama.cpp is skipped; checking our side only")
    failures = 0
    for i, (src, name, flags) in enumerate(cases):
        label = f"{os.path.basename(src)} {name} {' '.join(os.path.basename(f) for f in flags)}"
        ours = os.path.join(work, f"ours-{i}.gguf")
        run = subprocess.run([infertune, "quantize", *flags, src, ours, name, "2"], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL {label}: infertune quantize exited {run.returncode}: {run.stderr.strip()[-400:]}")
            failures += 1
            continue
        if llama_quantize:
            ref = os.path.join(work, f"ref-{i}.gguf")
            theirs = subprocess.run([llama_quantize, *flags, src, ref, name, "2"], capture_output=True, text=True)
            if theirs.returncode != 0:
                print(f"FAIL {label}: llama-quantize exited {theirs.returncode}: {theirs.stderr.strip()[-400:]}")
                failures += 1
                continue
            found = differences(ref, ours)
            os.remove(ref)
        else:
            plain = os.path.join(work, f"plain-{i}.gguf")
            subprocess.run([infertune, "quantize", src, plain, name, "2"], check=True, capture_output=True)
            # Q8_0 ignores the matrix; excluding every "blk." entry leaves none, which is no matrix at all.
            expect_change = name != "Q8_0" and "blk." not in flags
            changed = tensor_bytes(plain) != tensor_bytes(ours)
            found = [] if changed == expect_change else [f"the importance matrix {'changed' if changed else 'changed no'} bytes"]
            os.remove(plain)
        print(f"{'FAIL' if found else 'ok  '} {label}" + "".join(f"\n       {d}" for d in found[:6]))
        failures += bool(found)
        os.remove(ours)
    what = "equal llama-quantize's" if llama_quantize else "ran (llama-quantize not built)"
    print(f"{len(cases) - failures}/{len(cases)} quantizations with an importance matrix {what}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
