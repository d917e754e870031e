#pragma once
// RAII memory maps of whole files. Reading: GGUF tensors stay in the page cache and are used in place.
// Writing: the output is sized up front and filled in place, under a temporary name that becomes the
// real one only when the file is complete, so a failed or interrupted write never leaves a partial file.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "kernels/result.h"

namespace infertune {

// A read-only, private mapping of a regular file. An empty file maps to an empty span. A read of the file after
// it was truncated under the mapping ends the process with a message naming it (mapped_file_guard.h).
class MappedFile {
 public:
  static Result<std::shared_ptr<const MappedFile>> open(const std::string& path);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(base_), size_}; }

 private:
  MappedFile(void* base, size_t size) : base_(base), size_(size) {}
  void* base_;
  size_t size_;
};

// A new file of exactly `size` zero bytes at `path`.tmp, mapped shared and writable. commit() flushes
// it and renames it to `path`; destroying it without a successful commit removes the temporary file.
class WritableMappedFile {
 public:
  static Result<WritableMappedFile> create(const std::string& path, uint64_t size);

  WritableMappedFile(WritableMappedFile&& other) noexcept;
  WritableMappedFile& operator=(WritableMappedFile&& other) noexcept;
  WritableMappedFile(const WritableMappedFile&) = delete;
  WritableMappedFile& operator=(const WritableMappedFile&) = delete;
  ~WritableMappedFile();

  std::span<std::byte> bytes() { return {static_cast<std::byte*>(base_), size_}; }
  Status commit();

 private:
  WritableMappedFile(std::string path, int fd, void* base, size_t size)
      : path_(std::move(path)), fd_(fd), base_(base), size_(size) {}
  void release();  // unmaps and closes; removes the temporary unless committed

  std::string path_;  // the final name; the data lives at path_ + ".tmp" until commit()
  int fd_ = -1;
  void* base_ = nullptr;
  size_t size_ = 0;
  bool committed_ = false;
};

}  // namespace infertune
