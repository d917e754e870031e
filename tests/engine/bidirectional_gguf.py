"""A copy of a llama GGUF with llama.attention.causal = false, as an embedding model's file says it (gguf-py's own
metadata copier writes it): the checks of bidirectional attention against llama.cpp build theirs with it."""
import os


def bidirectional_copy(source: str, out_dir: str) -> str:
    import gguf
    from gguf.scripts.gguf_new_metadata import MetadataDetails, copy_with_new_metadata
    name = os.path.basename(source).removesuffix(".gguf")
    model = os.path.join(out_dir, f"{name}-bidirectional.gguf")
    reader = gguf.GGUFReader(source, "r")
    writer = gguf.GGUFWriter(model, arch="llama", endianess=reader.endianess)
    copy_with_new_metadata(reader, writer, {"llama.attention.causal": MetadataDetails(gguf.GGUFValueType.BOOL, False)},
                           [])
    return model
