#!/usr/bin/env python3
"""infertune quantize against llama.cpp's quantizer (llama_model_quantize, through llama-cpp-python) on the same F16/
BF16/F32 file and threads: for each type, both tools in turn (the order alternating), over several rounds; prints
the median and [min-max] wall seconds of each and the ratio llama.cpp / infertune (above 1: infertune is faster).

usage: bench/compare_quantize.py -m MODEL-F16.gguf [-t 2] [--types Q8_0,Q4_0,Q4_K_M] [--rounds 3]"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLAMA_FTYPES = {"F16": 1, "BF16": 32, "Q8_0": 7, "Q4_0": 2, "Q4_1": 3, "Q5_0": 8, "Q5_1": 9, "IQ4_NL": 25,
                "IQ4_XS": 30, "Q2_K": 10, "Q3_K_S": 11, "Q3_K_M": 12, "Q3_K_L": 13, "Q4_K_S": 14, "Q4_K_M": 15,
                "Q5_K_S": 16, "Q5_K_M": 17, "Q6_K": 18, "MXFP4_MOE": 38}
LLAMA_QUANTIZE = """import ctypes, sys, llama_cpp
llama_cpp.llama_backend_init()
p = llama_cpp.llama_model_quantize_default_params()
p.ftype = int(sys.argv[3])
p.nthread = int(sys.argv[4])
sys.exit(llama_cpp.llama_model_quantize(sys.argv[1].encode(), sys.argv[2].encode(), ctypes.byref(p)))"""


def timed(cmd):
    start = time.time()
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])}... exited {run.returncode}: {run.stderr[-500:]}")
    return time.time() - start


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--model", required=True)
    p.add_argument("-t", "--threads", type=int, default=2)
    p.add_argument("--types", default="Q8_0,Q4_0,Q4_K_M")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--infertune", default=os.path.join(ROOT, "build", "release", "sweeps", "infertune"))
    args = p.parse_args()
    types = args.types.split(",")
    times = {(t, side): [] for t in types for side in ("infertune", "llama.cpp")}
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "out.gguf")
        for r in range(args.rounds):
            for i, t in enumerate(types):
                sides = ["infertune", "llama.cpp"] if (r + i) % 2 == 0 else ["llama.cpp", "infertune"]
                for side in sides:
                    cmd = ([args.infertune, "quantize", args.model, out, t, str(args.threads)] if side == "infertune"
                           else [sys.executable, "-c", LLAMA_QUANTIZE, args.model, out, str(LLAMA_FTYPES[t]),
                                 str(args.threads)])
                    times[(t, side)].append(timed(cmd))
                    os.remove(out)
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print("| type | infertune s | llama.cpp s | llama.cpp / infertune |")
    print("|---|--:|--:|--:|")
    for t in types:
        a, b = times[(t, "infertune")], times[(t, "llama.cpp")]
        print(f"| {t} | {statistics.median(a):.2f} [{min(a):.2f}-{max(a):.2f}] | "
              f"{statistics.median(b):.2f} [{min(b):.2f}-{max(b):.2f}] | {statistics.median(b) / statistics.median(a):.2f} |")


if __name__ == "__main__":
    main()
