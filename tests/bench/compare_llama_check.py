#!/usr/bin/env python3
"""bench/compare_llama.py end to end on a fixture model: two interleaved rounds of infertune and llama.cpp
(pp8 and tg4 at one thread) give a row per test with both sides' rounds, a positive ratio and an interval
around it, in the table and in --json; a missing file is refused by name. Exits 77 (ctest's skip) when
llama-cpp-python is not installed.

usage: compare_llama_check.py INFERTUNE MODEL OUT_DIR"""
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent.parent / "bench" / "compare_llama.py"


def main() -> int:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        print("SKIP: Python package 'llama-cpp-python' is not installed (scripts/setup installs it)")
        return 77
    infertune, model, out_dir = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    out_dir.mkdir(parents=True, exist_ok=True)
    out_json = out_dir / "compare.json"
    base = [sys.executable, str(SCRIPT), "--infertune", infertune, "-t", "1", "-p", "8", "-n", "4", "-r", "1"]
    run = subprocess.run(base + ["-m", model, "--rounds", "2", "--json", str(out_json)], capture_output=True,
                         text=True, timeout=600)
    failures = []
    if run.returncode != 0:
        failures.append(f"exit {run.returncode}: {run.stderr[-2000:]}")
    else:
        rows = json.loads(out_json.read_text())
        tests = sorted(r["test"] for r in rows)
        if tests != ["pp8", "tg4"]:
            failures.append(f"tests {tests}, expected pp8 and tg4")
        for r in rows:
            if len(r["infertune"]) != 2 or len(r["llama.cpp"]) != 2:
                failures.append(f"{r['test']}: rounds {len(r['infertune'])}/{len(r['llama.cpp'])}, expected 2/2")
            if not r["ratio"] > 0 or not r["ratio_low"] <= r["ratio"] <= r["ratio_high"]:
                failures.append(f"{r['test']}: ratio {r['ratio']} outside [{r['ratio_low']}, {r['ratio_high']}]")
            if f"| {r['test']} | infertune |" not in run.stdout:
                failures.append(f"{r['test']}: no table row in\n{run.stdout}")
    missing = subprocess.run(base + ["-m", str(out_dir / "no-such.gguf")], capture_output=True, text=True)
    if missing.returncode != 2 or "no-such.gguf: no such file" not in missing.stderr:
        failures.append(f"missing file: exit {missing.returncode}, {missing.stderr.strip()}")
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
