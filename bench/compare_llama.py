#!/usr/bin/env python3
"""infertune against llama.cpp on the same GGUF files, threads and flags: prompt (ppP) and generation (tgN)
speed, interleaved over several rounds, with the ratio of medians and a 95% interval per file and thread count.

llama.cpp is the library of the llama-cpp-python package (scripts/setup installs it, built from source for
this CPU), timed the way llama-bench times it: a warmup run, then each repetition clears the KV cache and
decodes P random tokens in one batch (pp) or N random tokens one at a time (tg). infertune is timed by its own
`infertune bench`, which follows the same protocol. Every round runs both sides as fresh processes, in
alternating order (A B, then B A), so that neither side always runs on a warmer or cooler machine.

usage: bench/compare_llama.py -m FILE [-m FILE ...] [-t 1,2] [-p 128] [-n 32] [-r 3] [--rounds 6]
                              [-fa auto|on|off] [--infertune build/release/sweeps/infertune]
                              [--baseline OTHER_INFERTUNE] [--json OUT]
       (INFERTUNE_KERNEL=avx2 and other environment settings reach the infertune side unchanged.)

The figure to read is `ratio`: median infertune t/s over median llama.cpp t/s across rounds (above 1: infertune
is faster). The interval is a percentile bootstrap over the paired rounds (4000 resamples, fixed seed): a
ratio whose interval contains 1 is within this machine's noise. `spread` is each side's min-max over rounds.
With --baseline, a second infertune build runs in every round too (before/after a change, each against the
same llama.cpp rounds): its rows are labelled `baseline`."""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def llama_side(args) -> int:
    """One llama.cpp run (called as a subprocess of this script): prints one JSON line of t/s samples."""
    try:
        import llama_cpp as L
    except ImportError:
        print(json.dumps({"error": "Python package 'llama-cpp-python' is not installed (scripts/setup installs it)"}))
        return 1
    quiet = L.llama_log_callback(lambda level, text, data: None)  # kept referenced while llama.cpp may call it
    L.llama_log_set(quiet, None)
    L.llama_backend_init()
    model_params = L.llama_model_default_params()
    model_params.n_gpu_layers = 0
    model = L.llama_model_load_from_file(args.model.encode(), model_params)
    if not model:
        print(json.dumps({"error": f"llama.cpp could not load {args.model}"}))
        return 1
    ctx_params = L.llama_context_default_params()
    ctx_params.n_ctx = args.prompt + args.gen
    ctx_params.n_batch = max(args.prompt, 1)
    ctx_params.n_ubatch = min(512, max(args.prompt, 1))
    ctx_params.n_threads = args.threads
    ctx_params.n_threads_batch = args.threads
    ctx_params.flash_attn_type = {"auto": -1, "off": 0, "on": 1}[args.flash_attn]
    ctx_params.no_perf = True
    ctx = L.llama_init_from_model(model, ctx_params)
    if not ctx:
        print(json.dumps({"error": f"llama.cpp could not create a context for {args.model}"}))
        return 1
    n_vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    memory = L.llama_get_memory(ctx)
    rng = random.Random(1)

    def decode(tokens):
        array = (L.llama_token * len(tokens))(*tokens)
        if L.llama_decode(ctx, L.llama_batch_get_one(array, len(tokens))) != 0:
            raise RuntimeError("llama_decode failed")

    def prompt_run():
        L.llama_memory_clear(memory, False)
        decode([rng.randrange(n_vocab) for _ in range(args.prompt)])
        L.llama_synchronize(ctx)

    def gen_run(n):
        L.llama_memory_clear(memory, False)
        for _ in range(n):
            decode([rng.randrange(n_vocab)])
        L.llama_synchronize(ctx)

    def timed(run, *a):
        start = time.perf_counter_ns()
        run(*a)
        return time.perf_counter_ns() - start

    result = {}
    if args.prompt > 0:
        prompt_run()  # warmup
        result["pp"] = [args.prompt * 1e9 / timed(prompt_run) for _ in range(args.reps)]
    if args.gen > 0:
        gen_run(1)  # warmup
        result["tg"] = [args.gen * 1e9 / timed(gen_run, args.gen) for _ in range(args.reps)]
    L.llama_free(ctx)
    L.llama_model_free(model)
    print(json.dumps(result))
    return 0


def run_llama(args, model: str, threads: int) -> dict:
    command = [sys.executable, __file__, "--llama-side", "-m", model, "-t", str(threads), "-p", str(args.prompt),
               "-n", str(args.gen), "-r", str(args.reps), "-fa", args.flash_attn]
    out = subprocess.run(command, capture_output=True, text=True)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"llama.cpp side failed on {model} ({out.returncode}): {out.stderr.strip()[-2000:]}")
    result = json.loads(lines[-1])
    if "error" in result:
        raise SystemExit(f"llama.cpp side: {result['error']}")
    return result


def run_infertune(args, model: str, threads: int, binary: str = "") -> dict:
    command = [binary or args.infertune, "bench", "-m", model, "-t", str(threads), "-p", str(args.prompt), "-n",
               str(args.gen), "-r", str(args.reps), "-fa", args.flash_attn, "-o", "jsonl", "--no-probe"]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"infertune bench failed on {model} ({out.returncode}): {out.stderr.strip()[-2000:]}")
    result = {}
    for line in out.stdout.splitlines():
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        if row.get("error"):
            raise SystemExit(f"infertune bench: {row['test']}: {row['error']}")
        key = "pp" if row["n_gen"] == 0 else "tg"
        result[key] = row["samples_ts"]
    return result


def bootstrap_ratio_interval(a: list, b: list, resamples: int = 4000, seed: int = 7) -> tuple:
    """95% percentile interval of median(a)/median(b) over resampled paired rounds."""
    rng = random.Random(seed)
    n = len(a)
    ratios = []
    for _ in range(resamples):
        pick = [rng.randrange(n) for _ in range(n)]
        ratios.append(statistics.median(a[i] for i in pick) / statistics.median(b[i] for i in pick))
    ratios.sort()
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def summarize(rows: dict) -> list:
    table = []
    for (model, threads, test), sides in rows.items():
        for name in [side for side in sides if side != "llama.cpp"]:
            table.append(summarize_side(model, threads, test, name, sides[name], sides["llama.cpp"]))
    return table


def summarize_side(model, threads, test, name, ours, theirs) -> dict:
    """One build's rounds against llama.cpp's rounds of the same (file, threads, test)."""
    ratio = statistics.median(ours) / statistics.median(theirs)
    low, high = bootstrap_ratio_interval(ours, theirs) if len(ours) > 1 else (float("nan"), float("nan"))
    return {"build": name, "model": model, "threads": threads, "test": test, "rounds": len(ours),
            "infertune_median": statistics.median(ours), "infertune_min": min(ours), "infertune_max": max(ours),
            "llama_median": statistics.median(theirs), "llama_min": min(theirs), "llama_max": max(theirs),
            "ratio": ratio, "ratio_low": low, "ratio_high": high, "infertune": ours, "llama.cpp": theirs}


def print_table(table: list) -> None:
    print("| model | t | test | build | infertune t/s (median, spread) | llama.cpp t/s (median, spread) "
          "| ratio [95% CI] |")
    print("|---|--:|---|---|--:|--:|--:|")
    for r in table:
        verdict = "" if r["ratio_low"] > 1 or r["ratio_high"] < 1 else " (within noise)"
        print(f"| {Path(r['model']).name} | {r['threads']} | {r['test']} | {r['build']} | "
              f"{r['infertune_median']:.2f} ({r['infertune_min']:.2f}-{r['infertune_max']:.2f}) | "
              f"{r['llama_median']:.2f} ({r['llama_min']:.2f}-{r['llama_max']:.2f}) | "
              f"{r['ratio']:.3f} [{r['ratio_low']:.3f}, {r['ratio_high']:.3f}]{verdict} |")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-m", "--model", action="append", required=True, help="GGUF file (repeat for several)")
    parser.add_argument("-t", "--threads", default="1,2", help="thread counts, comma-separated (default 1,2)")
    parser.add_argument("-p", "--prompt", type=int, default=128, help="prompt tokens of the pp test (0: none)")
    parser.add_argument("-n", "--gen", type=int, default=32, help="generated tokens of the tg test (0: none)")
    parser.add_argument("-r", "--reps", type=int, default=3, help="repetitions per side and round (default 3)")
    parser.add_argument("--rounds", type=int, default=6, help="interleaved rounds (default 6)")
    parser.add_argument("-fa", "--flash-attn", default="auto", choices=["auto", "on", "off"])
    parser.add_argument("--infertune", default=str(REPO / "build/release/sweeps/infertune"))
    parser.add_argument("--baseline", help="a second infertune binary to run in every round (before/after)")
    parser.add_argument("--json", help="also write every round's figures here")
    parser.add_argument("--llama-side", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.llama_side:
        args.model, args.threads = args.model[0], int(args.threads)
        return args
    try:
        args.thread_counts = [int(t) for t in args.threads.split(",")]
    except ValueError:
        parser.error(f"-t {args.threads}: expected comma-separated thread counts")
    if any(t < 1 for t in args.thread_counts) or args.reps < 1 or args.rounds < 1:
        parser.error("threads, repetitions and rounds must be at least 1")
    for model in args.model:
        if not Path(model).is_file():
            parser.error(f"-m {model}: no such file")
    if not os.access(args.infertune, os.X_OK):
        parser.error(f"--infertune {args.infertune}: not an executable (build first: cmake --build build/release)")
    if args.baseline and not os.access(args.baseline, os.X_OK):
        parser.error(f"--baseline {args.baseline}: not an executable")
    return args


def main(argv) -> int:
    args = parse_args(argv)
    if args.llama_side:
        return llama_side(args)
    rows = {}
    sides = [("infertune", run_infertune), ("llama.cpp", run_llama)]
    if args.baseline:
        sides.append(("baseline", lambda a, m, t: run_infertune(a, m, t, a.baseline)))
    for round_index in range(args.rounds):
        for model in args.model:
            for threads in args.thread_counts:
                order = sides if round_index % 2 == 0 else sides[::-1]
                for name, run in order:
                    for test, samples in run(args, model, threads).items():
                        label = f"{test}{args.prompt if test == 'pp' else args.gen}"
                        per_side = rows.setdefault((model, threads, label), {})
                        per_side.setdefault(name, []).append(statistics.median(samples))
        print(f"round {round_index + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    table = summarize(rows)
    print_table(table)
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
