#!/usr/bin/env python3
"""Cross-checks infertune's GGUF reading against gguf-py, llama.cpp's own reader (an independent
implementation). For each file: `infertune inspect --json` must report the same version, alignment, data
offset, metadata (keys, types, values) and tensor table (names, types, shapes, sizes, offsets) as gguf-py.

usage: gguf_py_crosscheck.py INFERTUNE_BINARY FILE...
Exits 77 (ctest's SKIP_RETURN_CODE) when gguf-py is not installed."""
import json
import math
import subprocess
import sys

try:
    import gguf
    from gguf import GGUFReader, GGUFValueType
except ImportError:
    print("SKIP: Python package 'gguf' is not installed (scripts/setup installs it)")
    sys.exit(77)

ARRAY_LIMIT = 10_000_000  # show every element, so values compare completely


def type_name(t: GGUFValueType) -> str:
    return {0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 6: "f32", 7: "bool",
            8: "string", 9: "array", 10: "u64", 11: "i64", 12: "f64"}[int(t)]


def same_number(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b or math.isclose(a, b, rel_tol=1e-6)
    return a == b


def compare_value(key, ours, field, errors):
    types = field.types
    if types[0] != GGUFValueType.ARRAY:
        theirs = field.contents()
        if isinstance(theirs, str) or isinstance(ours, str):
            if ours != theirs:
                errors.append(f"{key}: value {ours!r} != {theirs!r}")
        elif not same_number(ours, theirs):
            errors.append(f"{key}: value {ours!r} != {theirs!r}")
        return
    if ours.get("element_type") != type_name(types[1]):
        errors.append(f"{key}: element type {ours.get('element_type')} != {type_name(types[1])}")
    theirs = field.contents()
    if ours["count"] != len(theirs):
        errors.append(f"{key}: count {ours['count']} != {len(theirs)}")
        return
    if len(types) > 2:
        return  # arrays of arrays: counts and element type checked
    head = ours["head"]
    for i, (a, b) in enumerate(zip(head, theirs)):
        ok = (a == b) if isinstance(b, str) else same_number(a, b)
        if not ok:
            errors.append(f"{key}[{i}]: {a!r} != {b!r}")
            return


def check(binary: str, path: str) -> list:
    out = subprocess.run([binary, "inspect", "--json", "--max-array", str(ARRAY_LIMIT), path],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return [f"inspect failed ({out.returncode}): {out.stderr.strip()}"]
    ours = json.loads(out.stdout)
    reader = GGUFReader(path)
    errors = []
    version = reader.fields["GGUF.version"].contents()
    if ours["gguf_version"] != version:
        errors.append(f"version {ours['gguf_version']} != {version}")
    if ours["alignment"] != reader.alignment:
        errors.append(f"alignment {ours['alignment']} != {reader.alignment}")
    if ours["data_offset"] != reader.data_offset:
        errors.append(f"data offset {ours['data_offset']} != {reader.data_offset}")

    their_fields = {k: f for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    our_keys = [kv["key"] for kv in ours["metadata"]]
    if our_keys != list(their_fields):
        errors.append(f"metadata keys differ: {our_keys[:5]}... vs {list(their_fields)[:5]}...")
    for kv in ours["metadata"]:
        field = their_fields.get(kv["key"])
        if field is None:
            continue
        if kv["type"] != type_name(field.types[0]):
            errors.append(f"{kv['key']}: type {kv['type']} != {type_name(field.types[0])}")
            continue
        compare_value(kv["key"], kv["value"], field, errors)

    if len(ours["tensors"]) != len(reader.tensors):
        errors.append(f"tensor count {len(ours['tensors'])} != {len(reader.tensors)}")
    for a, b in zip(ours["tensors"], reader.tensors):
        want = (b.name, b.tensor_type.name.lower(), [int(d) for d in b.shape], int(b.n_elements),
                int(b.n_bytes), int(b.data_offset) - reader.data_offset)
        got = (a["name"], a["type"].lower(), a["shape"], a["elements"], a["bytes"], a["offset"])
        if got != want:
            errors.append(f"tensor {a['name']}: {got} != {want}")
    return errors


def main() -> int:
    binary, files = sys.argv[1], sys.argv[2:]
    failed = 0
    for path in files:
        errors = check(binary, path)
        print(f"{'ok  ' if not errors else 'FAIL'} {path}")
        for e in errors[:20]:
            print(f"     {e}")
        failed += bool(errors)
    print(f"{len(files) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
