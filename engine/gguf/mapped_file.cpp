#include "engine/gguf/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "engine/gguf/mapped_file_guard.h"

namespace infertune {
namespace {

std::string errno_text() { return std::strerror(errno); }

std::string temporary_name(const std::string& path) { return path + ".tmp"; }

}  // namespace

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail("cannot open '{}': {}", path, errno_text());
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const std::string reason = errno_text();
    ::close(fd);
    return fail("cannot stat '{}': {}", path, reason);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return fail("'{}' is not a regular file", path);
  }
  const auto size = static_cast<size_t>(info.st_size);
  void* base = nullptr;
  if (size > 0) {  // mmap refuses a zero length; an empty file is simply an empty span
    base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) {
      const std::string reason = errno_text();
      ::close(fd);
      return fail("cannot map '{}' ({} bytes): {}", path, size, reason);
    }
  }
  ::close(fd);  // the mapping keeps the file alive
  if (base != nullptr) register_mapped_file(base, size, path);
  return std::shared_ptr<const MappedFile>(new MappedFile(base, size));
}

MappedFile::~MappedFile() {
  if (base_ == nullptr) return;
  unregister_mapped_file(base_);
  ::munmap(base_, size_);
}

Result<WritableMappedFile> WritableMappedFile::create(const std::string& path, uint64_t size) {
  const std::string tmp = temporary_name(path);
  const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot create '{}': {}", tmp, errno_text());
  // Reserve the blocks now: a store into a mapped page that the disk cannot back is a SIGBUS, not an
  // error, so a full disk must be found here. Filesystems without fallocate fall back to a sparse file.
  int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (rc == EINVAL || rc == EOPNOTSUPP) rc = ::ftruncate(fd, static_cast<off_t>(size)) == 0 ? 0 : errno;
  void* base = nullptr;
  if (rc == 0 && size > 0) {
    base = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
      rc = errno;
      base = nullptr;
    }
  }
  if (rc != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return fail("cannot allocate {} bytes for '{}': {}", size, tmp, std::strerror(rc));
  }
  return WritableMappedFile(path, fd, base, static_cast<size_t>(size));
}

WritableMappedFile::WritableMappedFile(WritableMappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      committed_(std::exchange(other.committed_, true)) {}

WritableMappedFile& WritableMappedFile::operator=(WritableMappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    committed_ = std::exchange(other.committed_, true);
  }
  return *this;
}

WritableMappedFile::~WritableMappedFile() { release(); }

void WritableMappedFile::release() {
  if (base_ != nullptr) ::munmap(base_, size_);
  if (fd_ >= 0) {
    ::close(fd_);
    if (!committed_) ::unlink(temporary_name(path_).c_str());
  }
  base_ = nullptr;
  fd_ = -1;
}

Status WritableMappedFile::commit() {
  if (fd_ < 0 || committed_) return fail("'{}': nothing to commit", path_);
  if (base_ != nullptr && ::msync(base_, size_, MS_SYNC) != 0)
    return fail("cannot flush '{}': {}", path_, errno_text());
  if (::fsync(fd_) != 0) return fail("cannot flush '{}': {}", path_, errno_text());
  const std::string tmp = temporary_name(path_);
  if (::rename(tmp.c_str(), path_.c_str()) != 0)
    return fail("cannot rename '{}' to '{}': {}", tmp, path_, errno_text());
  committed_ = true;
  release();
  return Status::success();
}

}  // namespace infertune
