#!/usr/bin/env python3
"""The importance-weighted row quantizers (kernels/quant.h quantize_row_weighted) against ggml's own, byte for
byte: ggml_quantize_chunk from the libggml-base that llama-cpp-python ships, called through ctypes with an
importance matrix, on random rows with random positive column weights, for every type whose quantizer reads
one (and Q8_0 and MXFP4, which ignore it), at several row lengths; the same rows without a matrix as well (the
quantizers that IQ4 and Q6_K share with their weighted form). MXFP4 also gets rows aimed at its encoder's
corners: exact ties between codes, magnitudes just below powers of two (where the rounded log2f decides the
exponent), values past the largest code, and block maxima below 2^-125 (ggml's exponent byte wraps).

usage: weighted_quant_crosscheck.py QUANTIZE_ROWS WORKDIR
  QUANTIZE_ROWS: the tests/tools/quantize_rows helper
Exits 77 (skipped) when llama_cpp or numpy cannot be imported."""
import ctypes
import glob
import os
import subprocess
import sys

try:
    import numpy as np
    import llama_cpp
except ImportError as e:
    print(f"skipped: {e} (scripts/setup installs llama-cpp-python)")
    sys.exit(77)

# ggml type numbers; the K-quants and IQ4_XS need rows of whole 256-value super-blocks.
TYPES_32 = {"Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "IQ4_NL": 20, "MXFP4": 39}
TYPES_256 = {"Q2_K": 10, "Q3_K": 11, "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "IQ4_XS": 23}
LENGTHS_32 = [32, 96, 320, 1056]
LENGTHS_256 = [256, 512, 1280, 2816]
N_ROWS = 24


def load_ggml():
    pkg = os.path.dirname(llama_cpp.__file__)
    found = sorted(glob.glob(os.path.join(pkg, "**", "libggml-base.so*"), recursive=True))
    if not found:
        print(f"skipped: no libggml-base.so under {pkg}")
        sys.exit(77)
    lib = ctypes.CDLL(found[0])
    lib.ggml_quantize_chunk.restype = ctypes.c_size_t
    lib.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                        ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    lib.ggml_row_size.restype = ctypes.c_size_t
    lib.ggml_row_size.argtypes = [ctypes.c_int, ctypes.c_int64]
    return lib


def test_rows(rng, n_per_row):
    """Gaussian rows with a few outliers, plus the corner cases: all zero, constant, tiny, one spike."""
    rows = rng.standard_normal((N_ROWS, n_per_row)).astype(np.float32)
    rows[1] *= 0.02
    rows[2] = 0
    rows[3] = 0.75
    rows[4] = 1e-20 * rng.standard_normal(n_per_row)
    rows[5] = 0
    rows[5, n_per_row // 3] = -3.5
    rows[6] = np.abs(rows[6])
    for r in range(7, N_ROWS, 3):
        spikes = rng.integers(0, n_per_row, size=max(1, n_per_row // 64))
        rows[r, spikes] *= 12
    return np.ascontiguousarray(rows, dtype=np.float32)


def mxfp4_corner_rows(rng, n_per_row):
    """Blocks of 32 with a chosen maximum 2^k (or just below it) and the other values at the midpoints
    between codes of that block's scale d = 2^(k-3), or past the top code 12 d."""
    half_codes = np.array([0.5, 1.5, 2.5, 3.5, 5, 7, 10, 13, 15], dtype=np.float32)
    rows = np.zeros((N_ROWS, n_per_row), dtype=np.float32)
    for r in range(N_ROWS):
        for b in range(n_per_row // 32):
            k = int(rng.integers(-140, 120))
            top = np.float32(2.0 ** k)
            if rng.random() < 0.5:
                top = np.nextafter(top, np.float32(0))
            d = np.float32(2.0 ** (k - 3))
            block = rng.choice(half_codes, 32) * d * rng.choice([-1, 1], 32)
            block[rng.integers(0, 32)] = top * rng.choice([-1, 1])
            rows[r, 32 * b:32 * b + 32] = np.clip(block, -top, top)
    return np.ascontiguousarray(rows, dtype=np.float32)


def test_importance(rng, n_per_row, kind):
    if kind == "uniform":
        w = rng.uniform(0.01, 1.0, n_per_row)
    elif kind == "skewed":  # imatrix values span orders of magnitude
        w = np.exp(rng.normal(0, 2.5, n_per_row))
    else:  # some columns never activated
        w = rng.uniform(0.0, 4.0, n_per_row)
        w[rng.random(n_per_row) < 0.3] = 0
    return np.ascontiguousarray(w, dtype=np.float32)


def ggml_bytes(lib, ggml_type, rows, importance):
    n_rows, n_per_row = rows.shape
    out = ctypes.create_string_buffer(lib.ggml_row_size(ggml_type, n_per_row) * n_rows)
    imatrix = None if importance is None else importance.ctypes.data
    lib.ggml_quantize_chunk(ggml_type, rows.ctypes.data, out, 0, n_rows, n_per_row, imatrix)
    return out.raw


def our_bytes(tool, workdir, ggml_type, rows, importance):
    rows_path = os.path.join(workdir, "rows.f32")
    imp_path = os.path.join(workdir, "importance.f32")
    out_path = os.path.join(workdir, "out.bin")
    rows.tofile(rows_path)
    if importance is not None:
        importance.tofile(imp_path)
    subprocess.run([tool, str(ggml_type), str(rows.shape[1]), rows_path,
                    imp_path if importance is not None else "-", out_path], check=True)
    with open(out_path, "rb") as f:
        return f.read()


def first_difference(lib, ggml_type, n_per_row, a, b):
    row_size = lib.ggml_row_size(ggml_type, n_per_row)
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"row {i // row_size}, byte {i % row_size}"
    return f"lengths {len(a)} vs {len(b)}"


def main():
    tool, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    lib = load_ggml()
    rng = np.random.default_rng(20240607)
    failures, checks = [], 0
    cases = [(TYPES_32, LENGTHS_32 + LENGTHS_256), (TYPES_256, LENGTHS_256)]
    for types, lengths in cases:
        for name, ggml_type in types.items():
            # MXFP4 draws from a generator of its own, so that the other types keep their rows.
            type_rng = np.random.default_rng(39) if name == "MXFP4" else rng
            for n_per_row in lengths:
                row_sets = {"random": test_rows(type_rng, n_per_row)}
                if name == "MXFP4":
                    row_sets["corners"] = mxfp4_corner_rows(type_rng, n_per_row)
                for set_name, rows in row_sets.items():
                    for kind in ("none", "uniform", "skewed", "sparse"):
                        importance = None if kind == "none" else test_importance(type_rng, n_per_row, kind)
                        ref = ggml_bytes(lib, ggml_type, rows, importance)
                        ours = our_bytes(tool, workdir, ggml_type, rows, importance)
                        checks += 1
                        if ref != ours:
                            where = first_difference(lib, ggml_type, n_per_row, ref, ours)
                            failures.append(f"{name} {set_name} rows, n_per_row={n_per_row} importance={kind}: "
                                            f"differs at {where}")
    for f in failures:
        print("FAIL", f)
    print(f"{checks - len(failures)}/{checks} (type, row length, importance) cases byte-equal with ggml_quantize_chunk")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
