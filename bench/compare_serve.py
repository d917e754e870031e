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
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url, proc, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as r:
                if r.status == 200:
                    return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.2)
    raise RuntimeError("the server did not become ready")


def server_command(side, args, port):
    common = ["-m", args.model, "-t", str(args.threads), "-np", str(args.parallel), "-c", str(args.ctx),
              "--host", "127.0.0.1", "--port", str(port)]
    if side == "infertune":
        return [args.infertune, "serve", *common, "-tb", str(args.threads)]
    return [args.llama_server, *common, "-tb", str(args.threads), "--no-webui"] if args.llama_webui_flag else \
        [args.llama_server, *common, "-tb", str(args.threads)]


def run_side(side, args):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(os.path.join(args.workdir, f"{side}.log"), "a")
    proc = subprocess.Popen(server_command(side, args, port), stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(url, proc)
        out = subprocess.run([args.infertune, "loadgen", "--url", url, "-c", args.concurrency, "-n", str(args.requests),
                              "--prompt-tokens", args.prompt_tokens, "--max-tokens", str(args.max_tokens),
                              "--warmup", "2", "--seed", str(args.seed), "-o", "json"],
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
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


FIELDS = [("ttft_ms", "p50"), ("ttft_ms", "p99"), ("itl_ms", "p50"), ("itl_ms", "p99"), ("output_tokens_per_s", None)]


def value(level, field, stat):
    return level[field][stat] if stat else level[field]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--model", required=True)
    p.add_argument("-t", "--threads", type=int, default=2)
    p.add_argument("-np", "--parallel", type=int, default=4)
    p.add_argument("-c", "--ctx", type=int, default=4096)
    p.add_argument("--concurrency", default="1,4,8")
    p.add_argument("-n", "--requests", type=int, default=16)
    p.add_argument("--prompt-tokens", default="90")
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--infertune", default=os.path.join(ROOT, "build", "release", "sweeps", "infertune"))
    p.add_argument("--llama-server")
    p.add_argument("--json")
    p.add_argument("--workdir", default="/tmp/compare-serve")
    args = p.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    if not args.llama_server:
        built = subprocess.run([os.path.join(ROOT, "scripts", "build-llama-cpp"), "llama-server"],
                               capture_output=True, text=True)
        if built.returncode != 0:
            sys.exit(f"compare_serve: cannot build llama-server: {built.stderr}")
        args.llama_server = os.path.join(built.stdout.strip().splitlines()[-1], "llama-server")
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
