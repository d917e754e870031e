#!/usr/bin/env python3
"""`infertune serve` with real clients: the `openai` Python package (streaming and not, completions and chat,
usage, errors mapped to its exception types, structured outputs from a pydantic model, embeddings in both
encodings) and curl (server-sent events as they arrive); the server's chat
template families against real Jinja templates rendered by jinja2; SIGTERM during a stream drains it and
exits 0.

usage: openai_client_check.py INFERTUNE FIXTURES_DIR
Exit 77 (ctest: skipped) when the openai or jinja2 package or curl is missing (scripts/setup installs them).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import ServeProcess  # noqa: E402

try:
    import jinja2
    import openai
except ImportError as e:
    print(f"skipped: {e.name} is not installed (scripts/setup installs it)")
    sys.exit(77)
if not shutil.which("curl"):
    print("skipped: curl is not installed")
    sys.exit(77)

BINARY, FIXTURES = sys.argv[1], sys.argv[2]
MODEL = os.path.join(FIXTURES, "models", "fixture-llama-Q8_0.gguf")
KEY = "sk-test-key"
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def structured_output_checks(client):
    """The openai package's structured outputs: a pydantic model becomes response_format json_schema (strict), and
    the reply parses into the model; json_object mode gives an object."""
    from typing import Literal

    import pydantic

    class Pet(pydantic.BaseModel):
        name: str = pydantic.Field(max_length=8)
        age: int = pydantic.Field(ge=0, le=30)
        kind: Literal["cat", "dog"]

    messages = [{"role": "user", "content": "Describe a pet."}]
    reply = client.chat.completions.parse(model="fixture", messages=messages, response_format=Pet, max_tokens=80,
                                          temperature=0)
    pet = reply.choices[0].message.parsed
    print(f"     structured output: {reply.choices[0].message.content!r}")
    check(isinstance(pet, Pet) and reply.choices[0].finish_reason == "stop",
          "chat.completions.parse with a pydantic model: the reply parses into the model")
    streamed = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model="fixture", messages=messages, max_tokens=80, temperature=0, stream=True,
        response_format={"type": "json_schema", "json_schema": {"name": "Pet", "schema": Pet.model_json_schema()}}))
    check(Pet.model_validate_json(streamed) is not None, "a streamed reply under the same schema validates too")


def embedding_checks(client):
    """The openai package's embeddings (the server runs --embeddings --pooling mean): it asks for base64 unless told
    otherwise and decodes it; both encodings give the same unit vectors, one per input, in order."""
    texts = ["a cat sat on the mat", "stock prices fell", "a cat sat on the mat"]
    default = client.embeddings.create(model="fixture", input=texts)
    floats = client.embeddings.create(model="fixture", input=texts, encoding_format="float")
    vectors = [d.embedding for d in default.data]
    check([d.index for d in default.data] == [0, 1, 2] and len(vectors[0]) == 256,
          "embeddings.create: a vector of n_embd values per input, in order")
    check(all(abs(a - b) < 1e-6 for u, v in zip(vectors, (d.embedding for d in floats.data)) for a, b in zip(u, v)),
          "embeddings.create: base64 (the package's default) and float give the same vectors")
    check(abs(sum(x * x for x in vectors[1]) - 1) < 1e-4, "embeddings.create: unit vectors")
    check(vectors[0] == vectors[2] and vectors[0] != vectors[1], "embeddings.create: the same text, the same vector")
    check(default.usage.prompt_tokens > 0 and default.usage.total_tokens == default.usage.prompt_tokens,
          f"embeddings.create: usage {default.usage}")


def openai_client_checks(server):
    client = openai.OpenAI(base_url=server.base + "/v1", api_key=KEY, max_retries=0)
    models = client.models.list()
    check([m.id for m in models.data] == ["fixture"], "models.list names the alias")

    whole = client.completions.create(model="fixture", prompt="Once upon a time", max_tokens=12, temperature=0)
    check(whole.choices[0].finish_reason == "length" and whole.usage.completion_tokens == 12,
          "completions.create: 12 tokens, finish_reason length")
    pieces = [c.choices[0].text for c in client.completions.create(
        model="fixture", prompt="Once upon a time", max_tokens=12, temperature=0, stream=True) if c.choices]
    check("".join(pieces) == whole.choices[0].text, "a streamed completion is the whole one, piece by piece")
    several = client.completions.create(model="fixture", prompt=["The sky is", "Once upon a time"], max_tokens=12,
                                        temperature=0)
    check([c.index for c in several.choices] == [0, 1] and several.choices[1].text == whole.choices[0].text
          and several.usage.completion_tokens == 24,
          "completions.create with two prompts: a choice each, in prompt order")

    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hi"}]
    chat = client.chat.completions.create(model="fixture", messages=messages, max_tokens=8, temperature=0, seed=3)
    check(chat.choices[0].message.role == "assistant" and chat.usage.completion_tokens == 8,
          "chat.completions.create: an assistant message of 8 tokens")
    two = client.chat.completions.create(model="fixture", messages=messages, max_tokens=8, temperature=0, n=2)
    check([c.index for c in two.choices] == [0, 1]
          and all(c.message.content == chat.choices[0].message.content for c in two.choices)
          and two.usage.prompt_tokens == chat.usage.prompt_tokens and two.usage.completion_tokens == 16,
          "chat.completions.create with n=2: two choices, the prompt counted once")
    streamed_two = {0: "", 1: ""}
    for chunk in client.chat.completions.create(model="fixture", messages=messages, max_tokens=8, temperature=0,
                                                n=2, stream=True):
        for c in chunk.choices:
            streamed_two[c.index] += c.delta.content or ""
    check(list(streamed_two.values()) == [chat.choices[0].message.content] * 2,
          "a streamed chat with n=2: each choice's deltas make its message")
    stream = client.chat.completions.create(model="fixture", messages=messages, max_tokens=8, temperature=0,
                                            stream=True, stream_options={"include_usage": True})
    deltas, usage, reasons = [], None, []
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            deltas.append(choice.delta.content or "")
            if choice.finish_reason:
                reasons.append(choice.finish_reason)
    check("".join(deltas) == chat.choices[0].message.content, "a streamed chat reply is the whole one")
    check(usage is not None and usage.completion_tokens == 8 and reasons == ["length"],
          "the stream ends with finish_reason and the usage chunk")

    structured_output_checks(client)
    embedding_checks(client)

    seeded = [client.completions.create(model="fixture", prompt="Hello", max_tokens=10, temperature=1.0, seed=42)
              .choices[0].text for _ in range(2)]
    check(seeded[0] == seeded[1], "the same seed samples the same text")

    try:
        client.completions.create(model="fixture", prompt="x", temperature=9)
        check(False, "temperature 9 is refused")
    except openai.BadRequestError as e:
        check("temperature" in str(e), "temperature 9 is a BadRequestError naming the field")
    bad = openai.OpenAI(base_url=server.base + "/v1", api_key="wrong", max_retries=0)
    try:
        bad.models.list()
        check(False, "a wrong key is refused")
    except openai.AuthenticationError:
        check(True, "a wrong key is an AuthenticationError")


def curl_checks(server):
    out = subprocess.run(["curl", "-sN", "-H", "Authorization: Bearer " + KEY, "-H", "Content-Type: application/json",
                          "-d", '{"prompt":"Once","max_tokens":5,"stream":true}', server.base + "/v1/completions"],
                         capture_output=True, text=True, timeout=60).stdout
    events = [line[6:] for line in out.splitlines() if line.startswith("data: ")]
    check(len(events) >= 2 and events[-1] == "[DONE]", "curl -N receives data: events ending in [DONE]")
    health = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", server.base + "/health"],
                            capture_output=True, text=True, timeout=60).stdout
    check(health == "200", "/health needs no key")


# The chat templates of Phi-4 and Phi-4-mini, as their tokenizer_config.json carry them.
PHI4_TEMPLATE = (
    "{% for message in messages %}{% if (message['role'] == 'system') %}{{'<|im_start|>system<|im_sep|>' + "
    "message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'user') %}{{'<|im_start|>user<|im_sep|>' + "
    "message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'assistant') %}{{'<|im_start|>assistant"
    "<|im_sep|>' + message['content'] + '<|im_end|>'}}{% endif %}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant<|im_sep|>' }}{% endif %}")
PHI4_MINI_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'system' and 'tools' in message and message['tools'] is "
    "not none %}{{ '<|' + message['role'] + '|>' + message['content'] + '<|tool|>' + message['tools'] + "
    "'<|/tool|>' + '<|end|>' }}{% else %}{{ '<|' + message['role'] + '|>' + message['content'] + '<|end|>' }}"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% else %}{{ eos_token }}{% endif %}")


def reference_templates():
    """(name, Jinja source, what the reference renders for system messages) of real templates."""
    out = [("phi4", PHI4_TEMPLATE, True), ("phi4-mini", PHI4_MINI_TEMPLATE, True)]
    try:
        import llama_cpp.llama_chat_format as formats
        out += [("chatml", formats.CHATML_CHAT_TEMPLATE, True),
                ("llama3", formats.LLAMA3_INSTRUCT_CHAT_TEMPLATE, True),
                ("mistral", formats.MIXTRAL_INSTRUCT_CHAT_TEMPLATE, False)]
    except ImportError:
        print("note: llama_cpp is not installed; its templates are not checked")
    try:
        from gguf import GGUFReader
        field = GGUFReader(os.path.join(FIXTURES, "vocab", "ggml-vocab-phi-3.gguf")).fields["tokenizer.chat_template"]
        out.append(("phi3", bytes(field.parts[field.data[0]]).decode(), False))
    except Exception as e:  # noqa: BLE001 - a missing reader or file only narrows the check
        print(f"note: the phi-3 fixture's template is not checked ({e})")
    return out


def template_checks(workdir):
    conversations = [
        [{"role": "user", "content": "Hello"}],
        [{"role": "user", "content": " Hi there "}, {"role": "assistant", "content": "Hello."},
         {"role": "user", "content": "2+2?"}],
    ]
    with_system = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    for name, source, takes_system in reference_templates():
        path = os.path.join(workdir, name + ".jinja")
        with open(path, "w") as f:
            f.write(source)
        server = ServeProcess(BINARY, MODEL, "--chat-template-file", path, "-c", "256")
        try:
            env = jinja2.Environment()
            env.globals["raise_exception"] = lambda message: (_ for _ in ()).throw(ValueError(message))
            template = env.from_string(source)
            for messages in conversations + ([with_system] if takes_system else []):
                want = template.render(messages=messages, add_generation_prompt=True, bos_token="",
                                       eos_token="</s>")
                status, body = server.request("/apply-template", {"messages": messages})
                got = __import__("json").loads(body).get("prompt") if status == 200 else body
                check(got == want, f"{name}: {len(messages)} messages render as jinja2 renders the real template")
                if got != want:
                    print(f"  want {want!r}\n  got  {got!r}")
        finally:
            server.stop()


def sigterm_drains(server):
    """A stream in flight when SIGTERM arrives still ends with [DONE]; the process exits 0."""
    result = {}

    def stream():
        client = openai.OpenAI(base_url=server.base + "/v1", api_key=KEY, max_retries=0)
        try:
            chunks = list(client.completions.create(model="fixture", prompt="Once", max_tokens=200, stream=True,
                                                    extra_body={"ignore_eos": True}))
            result["reasons"] = [c.choices[0].finish_reason for c in chunks
                                 if c.choices and c.choices[0].finish_reason]
        except Exception as e:  # noqa: BLE001 - reported by the check below
            result["error"] = repr(e)

    t = threading.Thread(target=stream)
    t.start()
    while server.metrics(KEY).get("infertune_slots_busy", 0) == 0 and t.is_alive():
        pass
    code, log = server.stop()
    t.join(timeout=60)
    check(result.get("reasons") == ["length"], f"a stream running at SIGTERM finishes ({result})")
    check(code == 0, f"SIGTERM: exit status 0 (got {code})")
    check("draining" in log, "SIGTERM: the log says it drains")


def main():
    with tempfile.TemporaryDirectory() as workdir:
        server = ServeProcess(BINARY, MODEL, "--api-key", KEY, "-a", "fixture", "-np", "2", "-c", "512",
                              "--chat-template", "chatml", "--metrics", "-t", "1", "--embeddings", "--pooling", "mean")
        try:
            openai_client_checks(server)
            curl_checks(server)
            sigterm_drains(server)
        finally:
            code, log = server.stop()
            if failures:
                print(log)
        template_checks(workdir)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
