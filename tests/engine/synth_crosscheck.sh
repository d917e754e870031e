#!/usr/bin/env bash
# Synthesizes small llama, qwen2, qwen3, gemma2, gemma3, gpt-oss and phi3 models in several types and mixes, then
# has llama.cpp's own code check them: gguf-py (llama.cpp's GGUF reader) against `infertune inspect`
# (gguf_py_crosscheck.py), and llama.cpp itself loading and running each as a model (llama_cpp_load_check.py).
# usage: synth_crosscheck.sh INFERTUNE PYTHON OUT_DIR gguf|llama-cpp
set -euo pipefail
bin=$1 python=$2 out=$3 checker=$4
here=$(dirname "$0")
rm -rf "$out" && mkdir -p "$out"
files=()
for spec in "llama tiny f32" "llama tiny q4_k_m" "llama tiny q8_0" "llama tiny iq4_xs" "qwen2 tiny q6_k" "qwen2 tiny bf16" "qwen3 tiny q4_k_m" "gemma3 tiny q4_k_m" "gpt-oss tiny q8_0" "phi3 tiny q4_k_m" "gemma2 tiny q4_k_m"; do
  read -r arch preset type <<<"$spec"
  f="$out/$arch-$preset-$type.gguf"
  "$bin" synth --arch "$arch" --preset "$preset" --type "$type" --seed 7 -o "$f" >/dev/null
  files+=("$f")
done
case "$checker" in
  gguf) exec "$python" "$here/gguf_py_crosscheck.py" "$bin" "${files[@]}" ;;
  llama-cpp) exec "$python" "$here/llama_cpp_load_check.py" "${files[@]}" ;;
  *) echo "unknown checker $checker" >&2; exit 2 ;;
esac
