#!/usr/bin/env python3
"""bench's csv/json/jsonl/sql rows against llama-bench's, on the same model and flags, and read by llama.cpp's own
scripts/compare-llama-bench.py.

1. Fields: every field llama-bench writes (json) is in ours, in llama-bench's order and with the same JSON kind
   (string, integer, boolean, number); ours follow after them.
2. Values: the fields that describe the machine, the file and the settings are equal (cpu_info, backends,
   model_filename, model_size, model_n_params, n_batch, n_ubatch, n_threads with -t absent, cpu_mask, ...,
   n_prompt, n_gen, n_depth, model_type); only the build, the time and the measured figures may differ.
3. llama.cpp's compare-llama-bench.py (from the same source tree) reads our sql, json, jsonl and csv output of two
   runs (the second relabelled as another build) and prints one row per test for each; given llama-bench's rows
   and ours, it puts the two engines side by side in one table.
4. `infertune compare --bin llama-bench --bin infertune` pairs every test when both get the same flags, and when a
   default differs (-ngl) its note names the parameter.

usage: llama_bench_fields_check.py INFERTUNE FIXTURES_DIR BUILD_LLAMA_CPP_SCRIPT WORKDIR
Exits 77 (skipped) with the reason when llama-bench is not built or compare-llama-bench.py cannot run."""
import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys

# -nkvo and -lm as today's llama-bench spells them (bench translates them into --kv-offload and -mmp values), and
# the flags of features infertune does not have at llama-bench's defaults (bench takes those values only).
FLAGS = ["-p", "16", "-n", "4", "-r", "2", "-ngl", "0", "-nkvo", "0,1", "-lm", "none",
         "-ncmoe", "0", "-dev", "auto", "-lzm", "auto", "-embd", "0", "-nopo", "0", "--no-host", "0"]
# Fields whose values may differ between the two engines: who built it, when it ran, and the measurements.
MAY_DIFFER = {"build_commit", "build_number", "test_time", "avg_ns", "stddev_ns", "avg_ts",
              "stddev_ts", "samples_ns", "samples_ts"}


def skip(why: str):
    print(f"SKIP: {why}")
    sys.exit(77)


def kind(value) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "null" if value is None else type(value).__name__


def run(argv: list) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(argv)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return done.stdout


def compare_fields(theirs: list, ours: list) -> list:
    failures = []
    if len(theirs) != len(ours):
        return [f"llama-bench wrote {len(theirs)} rows, bench {len(ours)}"]
    for t, o in zip(theirs, ours):
        names = [k for k in t if not k.startswith("samples_")]
        if list(o)[:len(names)] != names:
            missing = [k for k in names if k not in o]
            failures.append(f"ours do not start with llama-bench's fields in its order; missing: {missing}; "
                            f"ours: {list(o)[:len(names)]}")
            continue
        for k in t:
            if kind(t[k]) != kind(o[k]) and not (kind(t[k]) == "integer" and kind(o[k]) == "number"):
                failures.append(f"{k}: llama-bench writes a {kind(t[k])} ({t[k]!r}), bench a {kind(o[k])} ({o[k]!r})")
            elif k not in MAY_DIFFER and t[k] != o[k]:
                failures.append(f"{k}: llama-bench {t[k]!r}, bench {o[k]!r} (test n_prompt={t['n_prompt']} "
                                f"n_gen={t['n_gen']})")
    return failures


def other_build(our_commit: str) -> str:
    """Another build's label, as long as ours: compare-llama-bench.py cuts every commit to the shortest."""
    label = "f" * len(our_commit)
    return label if label != our_commit else "e" * len(our_commit)


def relabelled_csv(text: str, build: str) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    column = rows[0].index("build_commit")
    for row in rows[1:]:
        row[column] = build
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return out.getvalue()


def write_inputs(work: str, runs: dict, other: str) -> dict:
    """Our two runs in each format compare-llama-bench.py reads, the second relabelled as build `other`;
    returns format -> its -i arguments."""
    first, second = runs["json"]
    both = first + [dict(r, build_commit=other) for r in second]
    inputs = {}
    path = os.path.join(work, "both.json")
    with open(path, "w") as f:
        json.dump(both, f)
    inputs["json"] = [path]
    path = os.path.join(work, "both.jsonl")
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in both)
    inputs["jsonl"] = [path]
    path = os.path.join(work, "both.sqlite")
    with sqlite3.connect(path) as db:
        for text in runs["sql"]:
            db.executescript(text)
        db.execute("UPDATE llama_bench SET build_commit = ? WHERE rowid > ?", (other, len(first)))
    inputs["sql"] = [path]
    inputs["csv"] = []
    for name, text in [("first.csv", runs["csv"][0]), ("second.csv", relabelled_csv(runs["csv"][1], other))]:
        inputs["csv"].append(os.path.join(work, name))
        with open(inputs["csv"][-1], "w") as f:
            f.write(text)
    return inputs


def check_compare_script(script: str, work: str, inputs: dict, builds: tuple, tests: list) -> list:
    failures = []
    # Outside any git repository: the script then takes -b and -c as the builds' names as they are. -t: its json,
    # jsonl and csv readers need the tool named (only its sqlite reader guesses it).
    for fmt, paths in inputs.items():
        files = [arg for path in paths for arg in ("-i", path)]
        done = subprocess.run([sys.executable, script, *files, "-t", "llama-bench", "-b", builds[0], "-c", builds[1]],
                              capture_output=True, text=True, cwd=work, timeout=120)
        table = [line for line in done.stdout.splitlines() if line.startswith("|")]
        print(f"compare-llama-bench.py on our {fmt}: exit {done.returncode}, {max(len(table) - 2, 0)} rows")
        if done.returncode != 0:
            failures.append(f"compare-llama-bench.py refused our {fmt}: {done.stderr.strip()[-600:]}")
            continue
        for test in tests:
            if not any(f"| {test} " in line for line in table):
                failures.append(f"compare-llama-bench.py's table from our {fmt} has no {test} row:\n{done.stdout}")
    return failures


def check_compare_script_across_engines(script: str, work: str, theirs: list, ours: list, tests: list) -> list:
    """compare-llama-bench.py given llama-bench's json and ours pairs each test of the two engines in one row
    (llama-bench's rows relabelled as a build of their own: it writes "unknown" as its commit)."""
    our_commit = ours[0]["build_commit"]
    llama_build = other_build(our_commit)
    files = []
    for name, rows in [("llama-bench.json", [dict(r, build_commit=llama_build) for r in theirs]),
                       ("infertune.json", ours)]:
        files += ["-i", os.path.join(work, name)]
        with open(files[-1], "w") as f:
            json.dump(rows, f)
    done = subprocess.run([sys.executable, script, *files, "-t", "llama-bench", "-b", llama_build, "-c", our_commit],
                          capture_output=True, text=True, cwd=work, timeout=120)
    table = [line for line in done.stdout.splitlines() if line.startswith("|")]
    print(f"compare-llama-bench.py on llama-bench's json and ours: exit {done.returncode}, "
          f"{max(len(table) - 2, 0)} rows")
    print("\n".join(table))
    if done.returncode != 0:
        return [f"compare-llama-bench.py refused llama-bench's rows beside ours: {done.stderr.strip()[-600:]}"]
    missing = [t for t in tests if not any(f"| {t} " in line for line in table)]
    return [f"compare-llama-bench.py paired no {t} row of llama-bench and ours:\n{done.stdout}" for t in missing]


def check_abba_against_llama_bench(infertune: str, llama_bench: str, model: str) -> list:
    """`compare --bin llama-bench --bin infertune` pairs every test of the two engines when the flags are the same
    (no -ngl: llama-bench's default is -1, ours 0, and the note must say so)."""
    failures = []
    common = ["compare", "--bin", llama_bench, "--bin", infertune, "-m", model, "-p", "16", "-n", "4", "-r", "2",
              "--blocks", "2", "-o", "json", "-q"]
    for extra, want_compared in [(["-ngl", "0"], True), ([], False)]:
        done = subprocess.run([infertune, *common, *extra], capture_output=True, text=True, timeout=600)
        try:
            doc = json.loads(done.stdout)
        except json.JSONDecodeError:
            failures.append(f"compare {' '.join(extra)} printed no JSON (exit {done.returncode}): {done.stderr[-600:]}")
            continue
        compared = {c["label"] for c in doc["comparisons"]}
        print(f"compare --bin llama-bench --bin infertune {' '.join(extra)}: {len(compared)} compared, "
              f"{len(doc['unmatched'])} not compared, notes {doc['notes']}")
        if want_compared and (len(compared) != 2 or doc["unmatched"]):
            failures.append(f"with the same flags, compare did not pair both tests: {doc['unmatched']}")
        if not want_compared and not any("n_gpu_layers (-ngl) -1 vs 0" in n for n in doc["notes"]):
            failures.append(f"without -ngl, no note names n_gpu_layers: {doc['notes']}")
    return failures


def main() -> int:
    infertune, fixtures, build_script, work = sys.argv[1:5]
    built = subprocess.run([build_script, "--cached", "llama-bench"], capture_output=True, text=True)
    if built.returncode != 0 or not built.stdout.strip():
        skip("llama-bench is not built (scripts/build-llama-cpp llama-bench; ctest's llama_cpp_engine_check builds "
             "it)")
    llama_bench = os.path.join(built.stdout.strip().splitlines()[-1], "llama-bench")
    cache = os.path.dirname(os.path.dirname(llama_bench))
    script = os.path.join(cache, "src", "scripts", "compare-llama-bench.py")
    try:
        import git  # noqa: F401  (compare-llama-bench.py needs GitPython and tabulate; scripts/setup installs them)
        import tabulate  # noqa: F401
    except ImportError as e:
        skip(f"compare-llama-bench.py needs GitPython and tabulate: {e} (scripts/setup installs them)")
    if not os.path.exists(script):
        skip(f"{script} is missing: the llama.cpp source tree is not where scripts/build-llama-cpp left it")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = os.path.join(fixtures, "models", "stories260K.gguf")

    bench = [infertune, "bench", "-m", model, *FLAGS]
    theirs = json.loads(run([llama_bench, "-m", model, *FLAGS, "-o", "json"]))
    runs = {"json": [json.loads(run(bench + ["-o", "json"])) for _ in range(2)],
            "sql": [run(bench + ["-o", "sql"]) for _ in range(2)],
            "csv": [run(bench + ["-o", "csv"]) for _ in range(2)]}
    ours = runs["json"][0]
    failures = compare_fields(theirs, ours)
    print(f"fields: llama-bench {len(theirs[0])}, bench {len(ours[0])}; "
          f"{len([k for k in theirs[0] if k not in MAY_DIFFER])} compared by value")
    their_header = next(csv.reader(io.StringIO(run([llama_bench, "-m", model, *FLAGS, "-o", "csv"]))))
    our_header = next(csv.reader(io.StringIO(runs["csv"][0])))
    if our_header[:len(their_header)] != their_header:
        failures.append(f"csv header: llama-bench {their_header}, bench {our_header}")

    our_commit = ours[0]["build_commit"]
    other = other_build(our_commit)
    tests = [r["test"] for r in ours]
    failures += check_compare_script(script, work, write_inputs(work, runs, other), (our_commit, other), tests)
    failures += check_compare_script_across_engines(script, work, theirs, ours, tests)
    failures += check_abba_against_llama_bench(infertune, llama_bench, model)
    for f in failures:
        print("FAIL", f)
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
