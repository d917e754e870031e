#!/usr/bin/env python3
"""A bounded soak of `infertune serve`: 4 x np concurrent clients send requests of mixed prompt lengths and
lengths to generate, streamed or not, and a quarter of them hang up early. Afterwards no slot is busy and no
request waits, the whole cache is usable again (a request as long as the context succeeds, which a leaked
cell would make impossible), a greedy request gives the text it gave before the soak, and the resident
memory did not grow beyond allocator noise.

usage: soak_check.py INFERTUNE FIXTURES_DIR [REQUESTS_PER_CLIENT]
"""
import json
import os
import random
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import ServeProcess  # noqa: E402

BINARY, FIXTURES = sys.argv[1], sys.argv[2]
PER_CLIENT = int(sys.argv[3]) if len(sys.argv) > 3 else 25
MODEL = os.path.join(FIXTURES, "models", "fixture-llama-Q8_0.gguf")
N_PARALLEL, N_CTX = 2, 1024
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def hang_up(port, body):
    """Sends a request and closes the connection after the first bytes of the reply."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    payload = json.dumps(body).encode()
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              + f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
    s.recv(64)
    s.close()


def client(server, seed, outcomes):
    rng = random.Random(seed)
    for _ in range(PER_CLIENT):
        body = {"prompt": [rng.randrange(3, 500) for _ in range(rng.choice([4, 30, 120, 300]))],
                "max_tokens": rng.choice([8, 32, 96]), "temperature": rng.choice([0, 0.8]),
                "stream": rng.random() < 0.5}
        if rng.random() < 0.25:
            body["max_tokens"] = 400
            hang_up(server.port, body)
            outcomes.append("hung up")
            continue
        status, text = server.request("/v1/completions", body)
        if status == 503:
            outcomes.append("busy")  # the queue was full: a valid answer under load
            continue
        ok = status == 200 and ("[DONE]" in text if body["stream"] else "choices" in json.loads(text))
        outcomes.append("ok" if ok else f"error {status}: {text[:200]}")


def wait_idle(server, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        m = server.metrics()
        if m["infertune_slots_busy"] == 0 and m["infertune_requests_waiting"] == 0:
            return m
        time.sleep(0.05)
    return server.metrics()


def greedy(server):
    status, text = server.request("/v1/completions", {"prompt": "Once upon a time", "max_tokens": 24,
                                                      "temperature": 0})
    return json.loads(text)["choices"][0]["text"] if status == 200 else text


def run_clients(server, n, seed):
    outcomes, threads = [], []
    for c in range(n):
        threads.append(threading.Thread(target=client, args=(server, seed * 100 + c, outcomes)))
        threads[-1].start()
    for t in threads:
        t.join()
    return outcomes


def main():
    server = ServeProcess(BINARY, MODEL, "-np", str(N_PARALLEL), "-c", str(N_CTX), "--metrics", "-t", "1",
                          "--queue-size", "16")
    try:
        before = greedy(server)
        run_clients(server, 4 * N_PARALLEL, 1)  # warm-up: the allocator's working set
        wait_idle(server)
        rss_warm = server.rss_kib()
        started = time.time()
        outcomes = run_clients(server, 4 * N_PARALLEL, 2)
        elapsed = time.time() - started
        errors = [o for o in outcomes if o.startswith("error")]
        print(f"soak: {len(outcomes)} requests in {elapsed:.1f} s: {outcomes.count('ok')} ok, "
              f"{outcomes.count('hung up')} hung up, {outcomes.count('busy')} busy, {len(errors)} errors")
        check(not errors, "every request that was not hung up or refused for a full queue succeeded"
              + (f" (first error: {errors[0]})" if errors else ""))
        m = wait_idle(server)
        check(m["infertune_slots_busy"] == 0 and m["infertune_requests_waiting"] == 0, "afterwards no slot is busy")
        # A hung-up request is noticed at the server's next write; one that finishes first is simply done.
        check(m["infertune_requests_cancelled_total"] > 0, "hung-up requests are noticed and cancelled")
        long_prompt = [3 + i % 400 for i in range(N_CTX - 24)]
        status, text = server.request("/v1/completions", {"prompt": long_prompt, "max_tokens": 8, "temperature": 0})
        check(status == 200, "a request as long as the context succeeds: no cell leaked"
              + ("" if status == 200 else f" ({status}: {text[:200]})"))
        check(greedy(server) == before, "a greedy request gives the text it gave before the soak")
        rss_after = server.rss_kib()
        print(f"soak: RSS {rss_warm} KiB after warm-up, {rss_after} KiB after the soak")
        check(rss_after <= rss_warm * 1.10 + 8192, "resident memory is flat")
    finally:
        code, log = server.stop()
        check(code == 0, f"the server exits 0 on SIGTERM (got {code})")
        if failures:
            print(log[-3000:])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
