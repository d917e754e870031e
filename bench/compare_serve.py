#!/usr/bin/env python3
"""infertune serve against llama.cpp's llama-server on the same GGUF file, threads, parallel slots and context,
under the same load: `infertune loadgen` (closed loop at each concurrency, distinct synthetic prompts of
--prompt-tokens tokens, --max-tokens generated with ignore_eos) drives each server in turn, over several rounds
with the order alternating, and the script prints per concurrency the median over rounds of TTFT p50/p99,
ITL p50/p99 and aggregate output tokens/s for both, with the ratios.

llama-server comes from scripts/build-llama-cpp (llama.cpp's source as the llama-cpp-python package ships it,
built for this CPU and cached), or --llama-server PATH.

usage: bench/compare_serve.py -m MODEL [-t 2] [-np 4] [-c 4096] [--concurrency 1,4,8] [-n 16]
                              [--prompt-tokens 90] [--max-tokens 32] [--rounds 3] [--json OUT]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from server_process import ServerProcess, add_comparison_arguments, prepare  # noqa: E402


def server_command(side, args):
    common = ["-m", args.model, "-t", str(args.threads), "-np", str(args.parallel), "-c", str(args.ctx),
              "--host", "127.0.0.1"]
    if side == "infertune":
        return [args.infertune, "serve", *common, "-tb", str(args.threads)]
    return [args.llama_server, *common, "-tb", str(args.threads), "--no-webui"] if args.llama_webui_flag else \
        [args.llama_server, *common, "-tb", str(args.threads)]


def run_side(side, args):
    command = server_command(side, args)
    with ServerProcess(command, os.path.join(args.workdir, f"{side}.log")) as server:
        out = subprocess.run([args.infertune, "loadgen", "--url", server.url, "-c", args.concurrency, "-n",
                              str(args.requests), "--prompt-tokens", args.prompt_tokens, "--max-tokens",
                              str(args.max_tokens), "--warmup", "2", "--seed", str(args.seed), "-o", "json"],
                             capture_output=True, text=True, timeout=3600)
        if out.returncode != 0:
            raise RuntimeError(f"loadgen against {side} failed: {out.stderr}")
        levels = json.loads(out.stdout)
        # Figures over the successful requests only would flatter the side that failed some.
        for level in levels:
            if level.get("errors", 0):
                raise RuntimeError(f"{side}: {level['errors']} requests failed at {level['level']}: "
                                   f"{level.get('first_error', '')}")
        return levels


FIELDS = [("ttft_ms", "p50"), ("ttft_ms", "p99"), ("itl_ms", "p50"), ("itl_ms", "p99"), ("output_tokens_per_s", None)]


def value(level, field, stat):
    return level[field][stat] if stat else level[field]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_comparison_arguments(p, "/tmp/compare-serve")
    p.add_argument("--concurrency", default="1,4,8")
    p.add_argument("-n", "--requests", type=int, default=16)
    p.add_argument("--prompt-tokens", default="90")
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    prepare(args, "compare_serve")
    helptext = subprocess.run([args.llama_server, "--help"], capture_output=True, text=True).stdout
    args.llama_webui_flag = "--no-webui" in helptext

    rounds = []
    for r in range(args.rounds):
        order = ["infertune", "llama.cpp"] if r % 2 == 0 else ["llama.cpp", "infertune"]
        result = {side: run_side(side, args) for side in order}
        rounds.append(result)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    levels = [lvl["level"] for lvl in rounds[0]["infertune"]]
    print(f"| concurrency | metric | infertune (median [min-max]) | llama.cpp (median [min-max]) | ratio |")
    print("|---|---|--:|--:|--:|")
    for i, name in enumerate(levels):
        for field, stat in FIELDS:
            ours = [value(rd["infertune"][i], field, stat) for rd in rounds]
            theirs = [value(rd["llama.cpp"][i], field, stat) for rd in rounds]
            mo, mt = statistics.median(ours), statistics.median(theirs)
            label = f"{field.replace('_ms', '')} {stat} ms" if stat else "output t/s"
            print(f"| {name} | {label} | {mo:.1f} [{min(ours):.1f}-{max(ours):.1f}] | "
                  f"{mt:.1f} [{min(theirs):.1f}-{max(theirs):.1f}] | {mo / mt if mt else float('nan'):.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(args).items()}, "rounds": rounds}, f, indent=1)


if __name__ == "__main__":
    main()
