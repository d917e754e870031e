#!/usr/bin/env python3
"""`infertune serve`'s llama.cpp-specific API against llama-server's (built from llama-cpp-python's source by
scripts/build-llama-cpp), on the same model and flags (a llama-server command line: -np 2 -c 1024 -kvu -cb
--no-webui -a NAME --chat-template-file F --metrics): GET /slots, GET /props and POST /completion.

1. /props: every key llama-server writes that infertune claims (monitoring_routes.h) is there with the same JSON
   kind, and the values that describe the server are equal: total_slots, model_alias, model_path, chat_template,
   bos_token, eos_token, endpoint_slots, endpoint_metrics, modalities, is_sleeping, the default n_ctx, and every
   default sampling parameter both print.
2. Idle /slots: as many slots, each with llama-server's keys and values (id, n_ctx, speculative, is_processing).
3. Busy /slots: while a long request runs on each server, its slot has llama-server's keys with the same kinds
   (id_task, n_prompt_tokens, n_prompt_tokens_processed, n_prompt_tokens_cache, next_token as an array, params),
   and the request's own sampling (temperature, seed, n_predict, ignore_eos) on both.
4. --no-slots: both answer /slots with 501.
5. POST /completion (and /completions, llama-server's alias of it), greedy: the same content, tokens_predicted,
   tokens_evaluated, prompt, stop_type and tokens_cached, whole and streamed (the streamed pieces joined; an event
   per token, but for a token that ends inside a character, with the same last id; the last event stop: true with
   the slot that ran it); a stop string ends both at the same text with stopping_word; the same request again
   finds the same prompt tokens cached (timings.cache_n), and none with cache_prompt: false; return_tokens gives the
   same ids; n_probs gives completion_probabilities with the same ids; several prompts in one request get the same
   completions in the same order (/completion's array, /v1/completions' choices, /completion's stream joined per
   index).
6. Constrained replies, greedy: a GBNF `grammar` gives the same content on both, and so does the GBNF that
   `infertune grammar -j` converts a JSON schema to (nested rules, bounded repetitions, whitespace); `json_schema`
   gives JSON that satisfies the schema on both (each server converts it its own way, so the texts may differ);
   response_format json_object on /v1/chat/completions gives an object on both; a grammar that does not parse is a
   400 on both.

7. Embeddings (both servers with --embeddings): /v1/embeddings with --pooling mean gives, for each input, a vector
   whose cosine similarity to llama-server's is at least 0.9999, unit length on both, the same usage and indices;
   base64 carries the same floats; /embeddings answers llama-server's shape; with --pooling none both give a row per
   token on /embeddings and refuse /v1/embeddings with 400; a server without --embeddings answers 501 on both; a
   bidirectional copy of the model (attention.causal = false) gives the same vectors on both, and infertune refuses
   its completions (501).

usage: llama_server_api_check.py INFERTUNE FIXTURES_DIR BUILD_LLAMA_CPP_SCRIPT WORKDIR
Exits 77 (skipped) when llama-server is not built."""
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from serve_process import ServeProcess  # noqa: E402
from bidirectional_gguf import bidirectional_copy  # noqa: E402

CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
# The default sampling parameters both servers print, compared by value.
PARAMS = ["seed", "temperature", "top_k", "top_p", "min_p", "repeat_last_n", "repeat_penalty", "presence_penalty",
          "frequency_penalty", "max_tokens", "n_predict", "ignore_eos", "n_probs"]
PROPS_EQUAL = ["total_slots", "model_alias", "model_path", "chat_template", "bos_token", "eos_token",
               "endpoint_slots", "endpoint_metrics", "is_sleeping"]
BUSY_KEYS = ["id", "n_ctx", "speculative", "is_processing", "id_task", "n_prompt_tokens", "n_prompt_tokens_processed",
             "n_prompt_tokens_cache", "next_token", "params"]


def kind(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


class LlamaServer:
    def __init__(self, binary, model, flags, log_path):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen([binary, "-m", model, "--port", str(self.port), *flags],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"FAIL: llama-server exited {self.proc.returncode}; see {log_path}")
            try:
                with urllib.request.urlopen(self.base + "/health", timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.1)
        raise SystemExit(f"FAIL: llama-server not ready in 120 s; see {log_path}")

    def request(self, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method="POST" if data else "GET")
        req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def get(server, path):
    status, body = server.request(path)
    if status != 200:
        raise SystemExit(f"FAIL: GET {path} answered {status}: {body[:300]}")
    return json.loads(body)


def check_props(theirs, ours):
    failures = []
    for key in PROPS_EQUAL + ["modalities", "default_generation_settings"]:
        if key not in theirs or key not in ours:
            failures.append(f"/props: {key} missing (llama-server: {key in theirs}, infertune: {key in ours})")
    for key in PROPS_EQUAL:
        if key in theirs and key in ours and theirs[key] != ours[key]:
            failures.append(f"/props {key}: llama-server {theirs[key]!r}, infertune {ours[key]!r}")
    for name in theirs.get("modalities", {}):
        if ours.get("modalities", {}).get(name) != theirs["modalities"][name]:
            failures.append(f"/props modalities.{name}: llama-server {theirs['modalities'][name]}, infertune "
                            f"{ours.get('modalities', {}).get(name)}")
    their_defaults, our_defaults = theirs["default_generation_settings"], ours["default_generation_settings"]
    if their_defaults["n_ctx"] != our_defaults["n_ctx"]:
        failures.append(f"/props n_ctx: llama-server {their_defaults['n_ctx']}, infertune {our_defaults['n_ctx']}")
    for key in PARAMS:
        a, b = their_defaults["params"].get(key), our_defaults["params"].get(key)
        if a != b or kind(a) != kind(b):
            failures.append(f"/props default params.{key}: llama-server {a!r}, infertune {b!r}")
    return failures


def check_idle_slots(theirs, ours):
    if len(theirs) != len(ours):
        return [f"/slots: llama-server has {len(theirs)} slots, infertune {len(ours)}"]
    failures = []
    for t, o in zip(theirs, ours):
        for key, value in t.items():
            if o.get(key) != value:
                failures.append(f"idle slot {t['id']} {key}: llama-server {value!r}, infertune {o.get(key)!r}")
    return failures


def busy_slot(server, request, who):
    """Starts `request` (POST /v1/completions) in a thread; returns the first /slots entry seen generating, and the
    thread."""
    thread = threading.Thread(target=server.request, args=("/v1/completions", request), daemon=True)
    thread.start()
    deadline = time.time() + 60
    while time.time() < deadline:
        for slot in get(server, "/slots"):
            token = slot.get("next_token")
            if slot.get("is_processing") and token and token[0].get("n_decoded", 0) > 0:
                return slot, thread
        time.sleep(0.005)
    raise SystemExit(f"FAIL: no slot of {who} was seen generating within 60 s")


def check_busy_slot(theirs, ours, request):
    failures = []
    for key in BUSY_KEYS:
        if key not in theirs or key not in ours:
            failures.append(f"busy slot: {key} missing (llama-server: {key in theirs}, infertune: {key in ours})")
        elif kind(theirs[key]) != kind(ours[key]):
            failures.append(f"busy slot {key}: llama-server's is a {kind(theirs[key])}, infertune's a {kind(ours[key])}")
    for key in ["has_next_token", "n_remain", "n_decoded"]:
        if key not in ours["next_token"][0] or key not in theirs["next_token"][0]:
            failures.append(f"busy slot next_token[0].{key} missing")
    for key, want in [("temperature", request["temperature"]), ("seed", request["seed"]),
                      ("n_predict", request["max_tokens"]), ("ignore_eos", True)]:
        for who, slot in [("llama-server", theirs), ("infertune", ours)]:
            got = slot["params"].get(key)
            if got != want:
                failures.append(f"busy slot params.{key} on {who}: {got!r}, the request asked {want!r}")
    if ours["n_prompt_tokens_processed"] != theirs["n_prompt_tokens_processed"]:
        failures.append(f"busy slot n_prompt_tokens_processed: llama-server {theirs['n_prompt_tokens_processed']}, "
                        f"infertune {ours['n_prompt_tokens_processed']}")
    return failures


def stream_events(server, path, body):
    """The data: events of a streamed POST, parsed."""
    req = urllib.request.Request(server.base + path, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=120) as r:
        text = r.read().decode()
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ") and line != "data: [DONE]"]


def post(server, path, body):
    status, text = server.request(path, body)
    if status != 200:
        raise SystemExit(f"FAIL: POST {path} answered {status}: {text[:300]}")
    return json.loads(text)


NATIVE_EQUAL = ["content", "stop", "tokens_predicted", "tokens_evaluated", "prompt", "stop_type", "stopping_word",
                "tokens_cached"]


def check_native_completion(theirs, ours):
    failures = []
    greedy = {"prompt": "Once upon a time", "n_predict": 12, "temperature": 0}
    for path in ["/completion", "/completions"]:
        a, b = post(theirs, path, greedy), post(ours, path, greedy)
        print(f"POST {path}: llama-server {a['content']!r} ({a['stop_type']}), infertune {b['content']!r} "
              f"({b['stop_type']})")
        for key in NATIVE_EQUAL:
            if a.get(key) != b.get(key):
                failures.append(f"POST {path} {key}: llama-server {a.get(key)!r}, infertune {b.get(key)!r}")
        for key in a["timings"]:
            if key not in b.get("timings", {}):
                failures.append(f"POST {path}: timings.{key} missing")
    a, b = post(theirs, "/completion", greedy), post(ours, "/completion", greedy)
    if a["timings"]["cache_n"] != b["timings"]["cache_n"]:
        failures.append(f"the same request again: timings.cache_n llama-server {a['timings']['cache_n']}, "
                        f"infertune {b['timings']['cache_n']}")
    uncached = dict(greedy, cache_prompt=False, return_tokens=True)
    a, b = post(theirs, "/completion", uncached), post(ours, "/completion", uncached)
    for key in ["cache_n", "prompt_n"]:
        if a["timings"][key] != b["timings"][key]:
            failures.append(f"cache_prompt false: timings.{key} llama-server {a['timings'][key]}, "
                            f"infertune {b['timings'][key]}")
    if a["tokens"] != b["tokens"] or len(a["tokens"]) != greedy["n_predict"]:
        failures.append(f"return_tokens: llama-server {a['tokens']}, infertune {b['tokens']}")
    print(f"cache_prompt false: cache_n llama-server {a['timings']['cache_n']}, infertune {b['timings']['cache_n']}; "
          f"return_tokens: {len(a['tokens'])} and {len(b['tokens'])} ids")
    streams = [stream_events(server, "/completion", dict(greedy, stream=True)) for server in (theirs, ours)]
    for who, events in zip(["llama-server", "infertune"], streams):
        joined = "".join(e["content"] for e in events)
        if not events or events[-1].get("stop") is not True or joined != a["content"]:
            failures.append(f"streamed /completion on {who}: {len(events)} events, text {joined!r}, last stop "
                            f"{events[-1].get('stop') if events else None}; the whole reply was {a['content']!r}")
        elif not 0 <= events[-1].get("id_slot", -1) < 2:
            failures.append(f"streamed /completion on {who}: the final event's id_slot is {events[-1].get('id_slot')}")
    # An event per token, but for a token that ends inside a character: llama-server sends no event for it and
    # drops its id; infertune sends its id with the next event. So the events' last ids are compared.
    per_event = [[(e.get("tokens") or [None])[-1] for e in events[:-1]] for events in streams]
    print(f"streamed /completion: llama-server {len(per_event[0])} token events, infertune {len(per_event[1])}")
    if per_event[0] != per_event[1]:
        failures.append(f"streamed /completion: the events' last token ids differ: llama-server {per_event[0]}, "
                        f"infertune {per_event[1]}")
    stop_word = a["content"][3:6] if len(a["content"]) >= 6 else None
    if stop_word and stop_word.isprintable():
        body = dict(greedy, stop=[stop_word])
        a, b = post(theirs, "/completion", body), post(ours, "/completion", body)
        print(f"stop {stop_word!r}: llama-server {a['content']!r} {a['stop_type']}, infertune {b['content']!r} "
              f"{b['stop_type']}")
        for key in ["content", "stop_type", "stopping_word"]:
            if a.get(key) != b.get(key):
                failures.append(f"stop {stop_word!r} {key}: llama-server {a.get(key)!r}, infertune {b.get(key)!r}")
    probs = dict(greedy, n_predict=4, n_probs=3)
    a, b = post(theirs, "/completion", probs), post(ours, "/completion", probs)
    ids = [[p["id"] for p in r.get("completion_probabilities", [])] for r in (a, b)]
    if ids[0] != ids[1] or len(ids[0]) != 4:
        failures.append(f"n_probs: completion_probabilities ids llama-server {ids[0]}, infertune {ids[1]}")
    several = {"prompt": ["Once upon a time", "The sky is", [1, 300, 301]], "n_predict": 6, "temperature": 0}
    a, b = post(theirs, "/completion", several), post(ours, "/completion", several)
    contents = [[(o.get("index"), o.get("content")) for o in r] if isinstance(r, list) else r for r in (a, b)]
    print(f"several prompts: llama-server {contents[0]}, infertune {contents[1]}")
    if contents[0] != contents[1]:
        failures.append(f"/completion with several prompts: llama-server {contents[0]}, infertune {contents[1]}")
    a, b = post(theirs, "/v1/completions", several), post(ours, "/v1/completions", several)
    choices = [[(c["index"], c["text"]) for c in r["choices"]] for r in (a, b)]
    if choices[0] != choices[1]:
        failures.append(f"/v1/completions with several prompts: llama-server {choices[0]}, infertune {choices[1]}")
    # Streamed, the prompts' events interleave; joined per index, the texts agree (llama-server's stream of several
    # prompts begins with a "data: null" event, left out).
    joined = []
    for server in (theirs, ours):
        texts = {}
        for e in stream_events(server, "/completion", dict(several, stream=True)):
            if e is not None:
                texts[e["index"]] = texts.get(e["index"], "") + e["content"]
        joined.append(texts)
    if joined[0] != joined[1] or len(joined[0]) != 3:
        failures.append(f"streamed /completion with several prompts: llama-server {joined[0]}, infertune {joined[1]}")
    return failures


WORDS = 'root ::= " " [a-z]+ (" " [a-z]+){2} "."\n'
SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}, "age": {"type": "integer"},
                                           "pet": {"enum": ["cat", "dog"]}}, "required": ["name", "age", "pet"]}


def satisfies(text):
    """Whether text is JSON that SCHEMA accepts (checked by hand: no jsonschema package needed)."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return (isinstance(value, dict) and set(value) == {"name", "age", "pet"} and isinstance(value["name"], str)
            and len(value["name"]) <= 8 and isinstance(value["age"], int) and value["pet"] in ("cat", "dog"))


def check_constrained(infertune, theirs, ours):
    failures = []
    greedy = {"prompt": "Once upon a time", "n_predict": 48, "temperature": 0}
    converted = subprocess.run([infertune, "grammar", "-j", json.dumps(SCHEMA)], capture_output=True, text=True,
                               check=True).stdout
    for name, grammar, n_predict in [("grammar", WORDS, 48), ("the schema's GBNF as grammar", converted, 120)]:
        body = dict(greedy, grammar=grammar, n_predict=n_predict)
        a, b = post(theirs, "/completion", body), post(ours, "/completion", body)
        print(f"{name}: llama-server {a['content']!r} ({a['stop_type']}), infertune {b['content']!r} "
              f"({b['stop_type']})")
        if a["content"] != b["content"]:
            failures.append(f"{name}: llama-server {a['content']!r}, infertune {b['content']!r}")
    body = dict(greedy, n_predict=120, json_schema=SCHEMA)
    a, b = post(theirs, "/completion", body), post(ours, "/completion", body)
    print(f"json_schema: llama-server {a['content']!r}, infertune {b['content']!r} "
          f"({'the same' if a['content'] == b['content'] else 'different'} text)")
    for who, reply in [("llama-server", a), ("infertune", b)]:
        if not satisfies(reply["content"]):
            failures.append(f"json_schema: {who}'s reply does not satisfy the schema: {reply['content']!r}")
    chat = {"messages": [{"role": "user", "content": "Describe a cat."}], "max_tokens": 80, "temperature": 0,
            "response_format": {"type": "json_object"}}
    for who, server in [("llama-server", theirs), ("infertune", ours)]:
        text = post(server, "/v1/chat/completions", chat)["choices"][0]["message"]["content"]
        print(f"response_format json_object: {who} {text!r}")
        try:
            if not isinstance(json.loads(text), dict):
                failures.append(f"response_format json_object: {who}'s reply is not an object: {text!r}")
        except ValueError:
            failures.append(f"response_format json_object: {who}'s reply is not JSON: {text!r}")
    for who, server in [("llama-server", theirs), ("infertune", ours)]:
        status, text = server.request("/completion", dict(greedy, grammar='root ::= "a'))
        print(f"a grammar that does not parse: {who} answers {status}: {text[:120]}")
        if status != 400:
            failures.append(f"a grammar that does not parse: {who} answered {status}")
    return failures


EMBED_TEXTS = ["Once upon a time", "there was a tiny model", "x"]


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    na = sum(x * x for x in a) ** 0.5
    nb = sum(y * y for y in b) ** 0.5
    return dot / (na * nb) if na and nb else 0.0


def floats_of_base64(text):
    import base64
    import struct
    raw = base64.b64decode(text)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def check_embeddings(theirs, ours):
    """Both servers run --embeddings --pooling mean."""
    failures = []
    body = {"input": EMBED_TEXTS}
    t, o = post(theirs, "/v1/embeddings", body), post(ours, "/v1/embeddings", body)
    if t["usage"] != o["usage"]:
        failures.append(f"/v1/embeddings usage: llama-server {t['usage']}, infertune {o['usage']}")
    for i, (a, b) in enumerate(zip(t["data"], o["data"])):
        sim = cosine(a["embedding"], b["embedding"])
        norm = sum(x * x for x in b["embedding"]) ** 0.5
        print(f"/v1/embeddings input {i}: cosine {sim:.7f}, infertune's length {norm:.6f}")
        if a["index"] != b["index"] or len(a["embedding"]) != len(b["embedding"]) or sim < 0.9999:
            failures.append(f"/v1/embeddings input {i}: index {a['index']}/{b['index']}, "
                            f"{len(a['embedding'])}/{len(b['embedding'])} values, cosine {sim}")
        if abs(norm - 1) > 1e-4:
            failures.append(f"/v1/embeddings input {i}: infertune's vector has length {norm}")
    if len(t["data"]) != len(o["data"]):
        failures.append(f"/v1/embeddings: {len(t['data'])} vectors from llama-server, {len(o['data'])} from infertune")
    b64 = {"input": EMBED_TEXTS[0], "encoding_format": "base64"}
    tb, ob = post(theirs, "/v1/embeddings", b64), post(ours, "/v1/embeddings", b64)
    ours_floats = floats_of_base64(ob["data"][0]["embedding"])
    if ours_floats != o["data"][0]["embedding"] or cosine(floats_of_base64(tb["data"][0]["embedding"]), ours_floats) < 0.9999:
        failures.append("/v1/embeddings base64: not the float vector, or unlike llama-server's")
    native = {"content": EMBED_TEXTS[:2]}
    tn, on = post(theirs, "/embeddings", native), post(ours, "/embeddings", native)
    shape = lambda reply: [(item["index"], len(item["embedding"]), len(item["embedding"][0])) for item in reply]  # noqa: E731
    print("/embeddings (index, rows, values):", shape(tn), shape(on))
    if shape(tn) != shape(on):
        failures.append(f"/embeddings shape: llama-server {shape(tn)}, infertune {shape(on)}")
    return failures


def check_token_embeddings(theirs, ours):
    """Both servers run --embeddings --pooling none."""
    failures = []
    body = {"content": EMBED_TEXTS[0]}
    t, o = post(theirs, "/embeddings", body), post(ours, "/embeddings", body)
    rows_t, rows_o = t[0]["embedding"], o[0]["embedding"]
    sims = [cosine(a, b) for a, b in zip(rows_t, rows_o)]
    print(f"/embeddings --pooling none: {len(rows_t)} / {len(rows_o)} rows, least cosine {min(sims):.7f}")
    if len(rows_t) != len(rows_o) or min(sims) < 0.9999:
        failures.append(f"/embeddings --pooling none: {len(rows_t)} / {len(rows_o)} rows, cosines {sims}")
    statuses = [server.request("/v1/embeddings", {"input": "x"})[0] for server in (theirs, ours)]
    if statuses != [400, 400]:
        failures.append(f"/v1/embeddings with --pooling none: llama-server {statuses[0]}, infertune {statuses[1]}")
    return failures


def main():
    infertune, fixtures, build_script, work = sys.argv[1:5]
    built = subprocess.run([build_script, "--cached", "llama-server"], capture_output=True, text=True)
    if built.returncode != 0 or not built.stdout.strip():
        print("SKIP: llama-server is not built (scripts/build-llama-cpp llama-server; ctest's llama_cpp_engine_check "
              "builds it)")
        return 77
    llama_server = os.path.join(built.stdout.strip().splitlines()[-1], "llama-server")
    os.makedirs(work, exist_ok=True)
    template = os.path.join(work, "chatml.jinja")
    with open(template, "w") as f:
        f.write(CHATML)
    model = os.path.join(fixtures, "models", "fixture-llama-Q8_0.gguf")
    flags = ["-np", "2", "-c", "1024", "-kvu", "-cb", "--no-webui", "-t", "1", "-a", "fixture",
             "--chat-template-file", template, "--metrics"]
    request = {"prompt": "Once upon a time", "max_tokens": 900, "ignore_eos": True, "temperature": 0.5, "seed": 7}
    failures = []

    theirs = LlamaServer(llama_server, model, flags, os.path.join(work, "llama-server.log"))
    ours = ServeProcess(infertune, model, *flags)
    try:
        failures += check_props(get(theirs, "/props"), get(ours, "/props"))
        failures += check_idle_slots(get(theirs, "/slots"), get(ours, "/slots"))
        their_busy, t1 = busy_slot(theirs, request, "llama-server")
        our_busy, t2 = busy_slot(ours, request, "infertune")
        print("llama-server busy slot:", json.dumps({k: v for k, v in their_busy.items() if k != "params"}))
        print("infertune busy slot:   ", json.dumps({k: v for k, v in our_busy.items() if k != "params"}))
        failures += check_busy_slot(their_busy, our_busy, request)
        t1.join(120)
        t2.join(120)
        failures += check_native_completion(theirs, ours)
        failures += check_constrained(infertune, theirs, ours)
        statuses = [server.request("/v1/embeddings", {"input": "x"})[0] for server in (theirs, ours)]
        print("/v1/embeddings without --embeddings:", statuses)
        if statuses != [501, 501]:
            failures.append(f"/v1/embeddings without --embeddings: llama-server {statuses[0]}, infertune {statuses[1]}")
    finally:
        theirs.stop()
        ours.stop()

    for pooling, check in [("mean", check_embeddings), ("none", check_token_embeddings)]:
        embed_flags = flags + ["--embeddings", "--pooling", pooling]
        theirs = LlamaServer(llama_server, model, embed_flags, os.path.join(work, f"llama-server-{pooling}.log"))
        ours = ServeProcess(infertune, model, *embed_flags)
        try:
            failures += check(theirs, ours)
        finally:
            theirs.stop()
            ours.stop()

    theirs = LlamaServer(llama_server, model, flags + ["--no-slots"], os.path.join(work, "llama-server-no-slots.log"))
    ours = ServeProcess(infertune, model, *flags, "--no-slots")
    try:
        for who, server in [("llama-server", theirs), ("infertune", ours)]:
            status, body = server.request("/slots")
            print(f"--no-slots: {who} answers /slots with {status}")
            if status != 501:
                failures.append(f"--no-slots: {who} answered /slots with {status}: {body[:200]}")
    finally:
        theirs.stop()
        ours.stop()

    # A bidirectional model (attention.causal = false): the same vectors; infertune serves embeddings only.
    bidirectional = bidirectional_copy(model, work)
    embed_flags = flags + ["--embeddings", "--pooling", "mean"]
    theirs = LlamaServer(llama_server, bidirectional, embed_flags, os.path.join(work, "llama-server-bidirectional.log"))
    ours = ServeProcess(infertune, bidirectional, *embed_flags)
    try:
        failures += [f"bidirectional: {f}" for f in check_embeddings(theirs, ours)]
        status, body = ours.request("/completion", {"prompt": "hi", "n_predict": 4})
        print(f"bidirectional: infertune answers /completion with {status}")
        if status != 501:
            failures.append(f"bidirectional: infertune answered /completion with {status}: {body[:200]}")
    finally:
        theirs.stop()
        ours.stop()

    for f in failures:
        print("FAIL", f)
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
