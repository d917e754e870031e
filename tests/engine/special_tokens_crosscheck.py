#!/usr/bin/env python3
"""Special-token handling of every fixture vocabulary against llama.cpp's own tokenizer (llama-cpp-python, the
vocabulary loaded with vocab_only): texts that contain the vocabulary's control and user-defined token texts (its
BOS and EOS among them) must give llama.cpp's ids with special-token parsing off (`tokenize`) and on
(`tokenize --parse-special`), with and without BOS.

usage: special_tokens_crosscheck.py INFERTUNE VOCAB_DIR
Exits 77 (ctest's SKIP_RETURN_CODE) when llama-cpp-python or gguf-py is not installed."""
import glob
import json
import os
import subprocess
import sys

try:
    import gguf
    from llama_cpp import Llama
except ImportError as e:
    print(f"SKIP: {e} (scripts/setup installs llama-cpp-python and gguf)")
    sys.exit(77)

CONTROL, USER_DEFINED = 3, 4
TOKENS_PER_VOCAB = 6


def special_texts(path: str) -> list:
    """BOS, EOS and a few other control / user-defined token texts of the vocabulary."""
    reader = gguf.GGUFReader(path)
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()
    types = reader.fields["tokenizer.ggml.token_type"].contents() if "tokenizer.ggml.token_type" in reader.fields \
        else [1] * len(tokens)
    chosen = []
    for key in ("tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"):
        if key in reader.fields:
            chosen.append(tokens[int(reader.fields[key].contents())])
    others = [t for t, ty in zip(tokens, types) if ty in (CONTROL, USER_DEFINED) and t and t not in chosen]
    step = max(1, len(others) // TOKENS_PER_VOCAB)
    chosen += others[::step][:TOKENS_PER_VOCAB]
    return [t for t in chosen if t.strip()]


def texts_with(specials: list) -> list:
    texts = []
    for i, s in enumerate(specials):
        other = specials[(i + 1) % len(specials)]
        texts += [s, f"Hello {s} world", f"{s}Hello{other} world {s}", f" {s}\n\n{other}x  y", f"a{s}{s}b"]
    return texts


def ours(infertune: str, vocab: str, texts: list, special: bool, bos: bool) -> list:
    """Our ids for every text, from one `tokenize --jsonl` process."""
    cmd = [infertune, "tokenize", "-m", vocab, "--jsonl"] + (["--parse-special"] if special else []) + \
        ([] if bos else ["--no-bos"])
    lines = "".join(json.dumps(t) + "\n" for t in texts)
    result = subprocess.run(cmd, input=lines, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"tokenize exited {result.returncode}: {result.stderr[-300:]}")
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    if len(answers) != len(texts):
        raise RuntimeError(f"tokenize --jsonl gave {len(answers)} answers for {len(texts)} texts")
    return answers


def main() -> int:
    infertune, vocab_dir = sys.argv[1], sys.argv[2]
    failures, checked = 0, 0
    for vocab in sorted(glob.glob(os.path.join(vocab_dir, "ggml-vocab-*.gguf"))):
        try:
            llm = Llama(model_path=vocab, vocab_only=True, verbose=False)
        except Exception as e:  # a vocabulary llama.cpp cannot load is not ours to compare
            print(f"skip {os.path.basename(vocab)}: llama.cpp cannot load it ({e})")
            continue
        specials = special_texts(vocab)
        bad = 0
        texts = texts_with(specials)
        for special in (False, True):
            for bos in (True, False):
                for text, got in zip(texts, ours(infertune, vocab, texts, special, bos)):
                    ref = list(llm.tokenize(text.encode(), add_bos=bos, special=special))
                    checked += 1
                    if got != ref:
                        bad += 1
                        if bad <= 3:
                            print(f"FAIL {os.path.basename(vocab)} {text!r} special={special} bos={bos}:\n"
                                  f"     ours  {got}\n     llama {ref}")
        failures += bad
        print(f"{'ok  ' if not bad else 'FAIL'} {os.path.basename(vocab)}: {len(specials)} special texts, "
              f"{bad} mismatches")
    print(f"{checked - failures} of {checked} tokenizations agree")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
