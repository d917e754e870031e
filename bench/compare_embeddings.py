#!/usr/bin/env python3
"""infertune serve --embeddings against llama.cpp's llama-server --embeddings on the same GGUF file, threads,
slots, context and pooling: each round starts both servers (the order alternating) and times, on each,

  batch   one /v1/embeddings request of --inputs distinct texts of about --words words (a RAG indexing job)
  single  --singles requests of one text each, sent one after another (a query's latency)

and checks that the two servers' vectors agree (the least cosine similarity over the batch's inputs). It prints per
case the median over rounds and the spread [min-max] of input tokens per second (batch) and milliseconds per request
(single) for both, with the ratio.

llama-server comes from scripts/build-llama-cpp, or --llama-server PATH.

usage: bench/compare_embeddings.py -m MODEL [-t 2] [-np 4] [-c 4096] [-b 2048] [--pooling mean] [--inputs 64]
                                   [--words 40] [--singles 16] [--rounds 3] [--json OUT]
"""
import argparse
import json
import os
import random
import statistics
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from server_process import ServerProcess, add_comparison_arguments, prepare  # noqa: E402
WORDS = ("the a model cache token server thread batch layer vector query search index document memory speed "
         "answer river mountain city music light window garden paper stone water fire winter summer").split()


def post(url, path, body):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=3600) as r:
        return json.loads(r.read())


def server_command(side, args):
    common = ["-m", args.model, "-t", str(args.threads), "-tb", str(args.threads), "-np", str(args.parallel),
              "-c", str(args.ctx), "-b", str(args.batch), "-ub", str(args.batch), "--embeddings",
              "--pooling", args.pooling, "--host", "127.0.0.1"]
    return [args.infertune, "serve", *common] if side == "infertune" else [args.llama_server, *common]


def texts(args, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(args.words)) for _ in range(args.inputs)]


def run_side(side, args, batch_texts, single_texts):
    with ServerProcess(server_command(side, args), os.path.join(args.workdir, f"{side}.log")) as server:
        post(server.url, "/v1/embeddings", {"input": single_texts[:2]})  # warm-up
        start = time.perf_counter()
        reply = post(server.url, "/v1/embeddings", {"input": batch_texts})
        batch_s = time.perf_counter() - start
        single_ms = []
        for text in single_texts:
            start = time.perf_counter()
            post(server.url, "/v1/embeddings", {"input": text})
            single_ms.append((time.perf_counter() - start) * 1000)
        return {"batch_tps": reply["usage"]["prompt_tokens"] / batch_s, "tokens": reply["usage"]["prompt_tokens"],
                "single_ms": statistics.median(single_ms), "vectors": [d["embedding"] for d in reply["data"]]}


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / ((sum(x * x for x in a) ** 0.5) * (sum(y * y for y in b) ** 0.5))


def spread(values):
    return f"{statistics.median(values):.1f} [{min(values):.1f}-{max(values):.1f}]"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_comparison_arguments(p, "/tmp/compare-embeddings")
    p.add_argument("-b", "--batch", type=int, default=2048)
    p.add_argument("--pooling", default="mean")
    p.add_argument("--inputs", type=int, default=64)
    p.add_argument("--words", type=int, default=40)
    p.add_argument("--singles", type=int, default=16)
    args = p.parse_args()
    prepare(args, "compare_embeddings")
    rounds = {"infertune": [], "llama-server": []}
    least_cosine = 1.0
    for r in range(args.rounds):
        batch_texts = texts(args, 1000 + r)
        single_texts = texts(args, 2000 + r)[:args.singles]
        order = ["infertune", "llama-server"] if r % 2 == 0 else ["llama-server", "infertune"]
        got = {side: run_side(side, args, batch_texts, single_texts) for side in order}
        if got["infertune"]["tokens"] != got["llama-server"]["tokens"]:
            sys.exit(f"the servers counted different tokens: {got['infertune']['tokens']} and "
                     f"{got['llama-server']['tokens']}")
        for a, b in zip(got["infertune"]["vectors"], got["llama-server"]["vectors"]):
            least_cosine = min(least_cosine, cosine(a, b))
        for side in order:
            rounds[side].append({k: v for k, v in got[side].items() if k != "vectors"})
            print(f"round {r + 1} {side}: batch {got[side]['batch_tps']:.1f} tokens/s, single "
                  f"{got[side]['single_ms']:.1f} ms", flush=True)
    ours, theirs = rounds["infertune"], rounds["llama-server"]
    tokens = ours[0]["tokens"]
    print(f"\n{os.path.basename(args.model)}, -t {args.threads} -np {args.parallel} -c {args.ctx} -b {args.batch} "
          f"--pooling {args.pooling}, {args.rounds} rounds, medians [min-max]; least cosine between the servers' "
          f"vectors {least_cosine:.6f}\n")
    print("| case | llama-server | infertune | ratio |")
    print("|---|--:|--:|--:|")
    for key, label, higher in [("batch_tps", f"batch of {args.inputs} inputs ({tokens} tokens), tokens/s", True),
                               ("single_ms", "one input per request, ms (median of the requests)", False)]:
        t = [x[key] for x in theirs]
        o = [x[key] for x in ours]
        ratio = statistics.median(o) / statistics.median(t) if higher else statistics.median(t) / statistics.median(o)
        print(f"| {label} | {spread(t)} | {spread(o)} | {ratio:.2f}x |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"infertune": ours, "llama-server": theirs, "least_cosine": least_cosine}, f, indent=1)


if __name__ == "__main__":
    main()
