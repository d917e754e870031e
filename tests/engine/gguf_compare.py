"""Two GGUF files compared as llama.cpp's quantizer output and ours: tensor names, types and bytes, and the metadata
keys and values (gguf-py reads both). Shared by quantize_crosscheck.py and quantize_imatrix_check.py."""
import numpy as np
from gguf import GGUFReader


def metadata(reader):
    out = {}
    for field in reader.fields.values():
        if field.name.startswith("GGUF."):
            continue
        out[field.name] = [bytes(np.asarray(field.parts[i]).tobytes()) for i in field.data]
    return out


def differences(ref_path, ours_path):
    ref, ours = GGUFReader(ref_path), GGUFReader(ours_path)
    found = []
    a = {t.name: t for t in ref.tensors}
    b = {t.name: t for t in ours.tensors}
    if set(a) != set(b):
        found.append(f"tensor names differ: only llama.cpp {sorted(set(a) - set(b))}, only ours {sorted(set(b) - set(a))}")
    for name in sorted(set(a) & set(b)):
        t, u = a[name], b[name]
        if t.tensor_type != u.tensor_type:
            found.append(f"{name}: llama.cpp {t.tensor_type.name}, ours {u.tensor_type.name}")
        elif np.asarray(t.data).tobytes() != np.asarray(u.data).tobytes():
            found.append(f"{name} ({t.tensor_type.name}): the bytes differ")
    ma, mb = metadata(ref), metadata(ours)
    for key in sorted(set(ma) | set(mb)):
        if ma.get(key) != mb.get(key):
            found.append(f"metadata {key}: llama.cpp {'set' if key in ma else 'absent'}, ours "
                         f"{'differs' if key in mb else 'absent'}")
    return found
