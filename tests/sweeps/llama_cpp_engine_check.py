#!/usr/bin/env python3
"""A sweep whose trials llama.cpp's own tools run (`engine: llama.cpp`): llama-bench, llama-batched-bench and
llama-server built from the source that llama-cpp-python ships (scripts/build-llama-cpp, cached), through our runner,
store and recommender.

1. The sweep (pp, tg, batched and served workloads at two thread counts) records every trial ok, with llama-bench's
   per-repetition rates as samples, the served trials' per-request latencies and per-run rates (llama-server under
   our clients) and the server's measured peak RSS, and its build row names llama.cpp; its recommendation has a
   serving scenario led by the llama-server command line, and says it was measured by llama.cpp.
2. The same spec on infertune has the same trial configurations, so `compare` matches every configuration of the
   two sweeps (one store) side by side.
3. Workloads llama.cpp's tools cannot measure (pp+tg) fail their trial with the reason; the sweep goes on.

usage: llama_cpp_engine_check.py INFERTUNE FIXTURES_DIR WORKDIR
Exits 77 (skipped) with the reason when the tools are not built and cannot be."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# llama-quantize and llama-imatrix are not used here: building them with the rest (seconds each, against the same
# libraries) lets quantize_imatrix_check and imatrix_check, which ctest runs after this one, compare with llama.cpp.
TOOLS = ["llama-bench", "llama-batched-bench", "llama-server", "llama-quantize", "llama-imatrix"]


def skip(why: str):
    print(f"SKIP: {why}")
    sys.exit(77)


def tools_dir() -> str:
    build = subprocess.run([os.path.join(REPO, "scripts", "build-llama-cpp")] + TOOLS, capture_output=True, text=True)
    if build.returncode != 0:
        skip(f"llama.cpp's tools could not be built: {build.stderr.strip()[-400:]}")
    return build.stdout.strip().splitlines()[-1]


def repack_crashes(bin_dir: str, model: str) -> bool:
    """Whether llama.cpp's repacked (extra buffer) kernels crash on this CPU while its plain ones run: its AMX
    kernels die with SIGSEGV on quantized matrices (llama.cpp issue 20824). scripts/setup builds llama-cpp-python
    without them; one installed otherwise may have them. The sweeps then run with --repack 0, on both engines."""
    bench = [os.path.join(bin_dir, "llama-bench"), "-m", model, "-p", "16", "-n", "0", "-r", "1", "-t", "1"]
    default = subprocess.run(bench, capture_output=True, text=True)
    if default.returncode >= 0:
        return False
    plain = subprocess.run(bench + ["--repack", "0"], capture_output=True, text=True)
    return plain.returncode == 0


def query(db: str, sql: str, *args) -> list:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return c.execute(sql, args).fetchall()


def main() -> int:
    infertune, fixtures, work = sys.argv[1], sys.argv[2], sys.argv[3]
    bin_dir = tools_dir()
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    db = os.path.join(work, "r.db")
    model = os.path.join(fixtures, "models", "fixture-llama-Q4_0.gguf")
    spec = ["-m", model, "-t", "1,2", "-p", "64", "-n", "16", "--batched", "2:32,8", "--serve", "2:32,8",
            "--min-reps", "3",
            "--max-reps", "4", "--db", db]
    no_repack = ["--repack", "0"] if repack_crashes(bin_dir, model) else []
    if no_repack:
        print("note: llama.cpp's repacked kernels crash on this CPU (llama-bench with --repack 0 runs): the sweeps "
              "run with --repack 0")
    spec += no_repack
    failures = []
    llama = subprocess.run([infertune, "sweep", *spec, "--engine", "llama.cpp", "--llama-cpp-bin", bin_dir],
                           capture_output=True, text=True)
    print(llama.stdout[-1500:])
    if llama.returncode != 0:
        print(f"FAIL the llama.cpp sweep exited {llama.returncode}: {llama.stderr[-800:]}")
        return 1
    statuses = query(db, "SELECT status, count(*) FROM trials WHERE sweep_id = 1 GROUP BY status")
    if statuses != [("ok", 8)]:
        failures.append(f"llama.cpp trials: {statuses} (expected 8 ok): {llama.stderr[-600:]}")
    build = query(db, "SELECT b.version FROM sweeps AS s JOIN builds AS b ON b.id = s.build_id WHERE s.id = 1")
    if not build or not build[0][0].startswith("llama.cpp"):
        failures.append(f"the sweep's build row does not name llama.cpp: {build}")
    reps = query(db, "SELECT count(*) FROM samples AS x JOIN trials AS t ON t.id = x.trial_id "
                     "WHERE t.sweep_id = 1 AND x.metric = 'pp_tps' AND t.config LIKE '%\"kind\":\"pp\"%'")
    if not reps or reps[0][0] < 6:
        failures.append(f"pp trials kept {reps} pp_tps samples (3 repetitions or more each expected)")
    served = query(db, "SELECT t.id, t.peak_rss_bytes, sum(x.metric = 'ttft_ms' AND NOT x.is_warmup), "
                       "sum(x.metric = 'aggregate_tps' AND NOT x.is_warmup), sum(x.metric = 'goodput_rps') "
                       "FROM trials AS t JOIN samples AS x ON x.trial_id = t.id "
                       "WHERE t.sweep_id = 1 AND t.config LIKE '%\"kind\":\"serve\"%' GROUP BY t.id")
    print(f"served trials (id, peak RSS, TTFTs, runs, goodput rows): {served}")
    # 2 clients x 4 requests per run, 3 runs or more.
    if len(served) != 2 or any(not rss or rss < 1 << 20 or ttft < 24 or runs < 3 or not good
                               for _, rss, ttft, runs, good in served):
        failures.append(f"the served trials lack their measurements: {served}")
    serving = llama.stdout[llama.stdout.find("serving: most mean goodput_rps"):]
    if "serving: most mean goodput_rps" not in llama.stdout or not 0 <= serving.find("llama-server -m") < \
            serving.find("infertune serve -m"):
        failures.append("the llama.cpp sweep's serving recommendation does not lead with its llama-server line")

    ours = subprocess.run([infertune, "sweep", *spec], capture_output=True, text=True)
    if ours.returncode != 0:
        failures.append(f"the infertune sweep exited {ours.returncode}: {ours.stderr[-600:]}")
    hashes = [set(h for (h,) in query(db, "SELECT config_hash FROM trials WHERE sweep_id = ?", s)) for s in (1, 2)]
    if hashes[0] != hashes[1]:
        failures.append("the two engines' sweeps do not have the same trial configurations")
    compare = subprocess.run([infertune, "compare", f"{db}:1", f"{db}:2", "-o", "json", "--threshold", "99%"],
                             capture_output=True, text=True)
    try:
        rows = json.loads(compare.stdout)["comparisons"]
        matched = {r["configuration_key"] for r in rows}
        print(f"compare matched {len(matched)} configurations of the two engines")
        if len(matched) != 8:
            failures.append(f"compare matched {len(matched)} of 8 configurations")
    except (ValueError, KeyError) as e:
        failures.append(f"compare printed no rows ({e}): {compare.stdout[:300]} {compare.stderr[-300:]}")

    for sweep, engine in ((1, "llama.cpp"), (2, "infertune")):
        rec = subprocess.run([infertune, "recommend", "--db", db, "--sweep", str(sweep), "-o", "json"],
                             capture_output=True, text=True)
        measured_by = json.loads(rec.stdout).get("measured_by") if rec.returncode == 0 else rec.stderr[-300:]
        if measured_by != engine:
            failures.append(f"sweep {sweep}'s recommendation says measured_by {measured_by}, not {engine}")

    pg = subprocess.run([infertune, "sweep", "-m", model, "-t", "1", "--pg", "16,4", "-p", "16", "--min-reps", "1",
                         "--max-reps", "1", "--db", os.path.join(work, "pg.db"), "--engine", "llama.cpp",
                         "--llama-cpp-bin", bin_dir, *no_repack], capture_output=True, text=True)
    if "one combined rate" not in pg.stdout + pg.stderr:
        failures.append(f"a pp+tg trial on llama.cpp did not fail with the reason: {pg.stdout[-400:]}")
    if query(os.path.join(work, "pg.db"), "SELECT count(*) FROM trials WHERE status = 'ok'") != [(1,)]:
        failures.append("the pp trial beside the failed pp+tg one was not recorded ok")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
