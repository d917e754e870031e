#pragma once
// What a SIGBUS in a mapped model file becomes. A file truncated (or rewritten shorter in place) while it is mapped
// turns every read of a page past its new end into a SIGBUS, which would kill the process without a word of why.
// Read-only mappings (MappedFile) register their ranges here; a SIGBUS whose address lies in one writes one line
// naming the file and the offset and ends the process with kMappedFileChangedExitCode. It cannot be turned into an
// error value in place: the read that faults may be inside any kernel's loop, on any thread, with locks held. (A
// file replaced by a rename is safe: the mapping keeps the old inode.) A SIGBUS elsewhere keeps its earlier action.
#include <cstddef>
#include <string>

namespace infertune {

inline constexpr int kMappedFileChangedExitCode = 74;  // EX_IOERR

// Registers [base, base + size) as a mapping of `path` (installing the handler on first use); at most 256 live
// mappings are named, later ones fault as before.
void register_mapped_file(const void* base, size_t size, const std::string& path);
void unregister_mapped_file(const void* base);

}  // namespace infertune
