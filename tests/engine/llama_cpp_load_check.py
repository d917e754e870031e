#!/usr/bin/env python3
"""Loads GGUF files with llama.cpp itself (through the llama-cpp-python package) as full models: the
architecture must be recognized, the vocabulary must tokenize text, and a forward pass must give finite
logits of the vocabulary's width. This is how the synthesized models are shown to be valid llama.cpp models.

usage: llama_cpp_load_check.py FILE...
Exits 77 (ctest's SKIP_RETURN_CODE) when llama-cpp-python is not installed."""
import sys

try:
    import numpy as np
    from llama_cpp import Llama
except ImportError:
    print("SKIP: Python package 'llama-cpp-python' is not installed (scripts/setup installs it)")
    sys.exit(77)


def check(path: str) -> list:
    try:
        llm = Llama(model_path=path, n_ctx=64, n_batch=64, n_threads=2, logits_all=True, verbose=False)
    except Exception as e:  # llama.cpp refused the file
        return [f"llama.cpp could not load it: {e}"]
    errors = []
    arch = llm.metadata.get("general.architecture")
    tokens = llm.tokenize(b"The quick brown fox jumps over the lazy dog.", add_bos=True)
    if len(tokens) < 2:
        errors.append(f"text tokenized to {tokens}")
    llm.eval(tokens)
    logits = np.array(llm.scores[: llm.n_tokens])
    if logits.shape != (len(tokens), llm.n_vocab()):
        errors.append(f"logits shape {logits.shape}, expected ({len(tokens)}, {llm.n_vocab()})")
    if not np.isfinite(logits).all():
        errors.append("non-finite logits")
    elif float(logits.std()) == 0.0:
        errors.append("constant logits")
    print(f"     arch {arch}, vocab {llm.n_vocab()}, {len(tokens)} tokens, logits std {float(logits.std()):.4g}")
    return errors


def main() -> int:
    failed = 0
    for path in sys.argv[1:]:
        errors = check(path)
        print(f"{'ok  ' if not errors else 'FAIL'} {path}")
        for e in errors:
            print(f"     {e}")
        failed += bool(errors)
    print(f"{len(sys.argv) - 1 - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
