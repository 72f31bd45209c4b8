#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace onnx_prepack::base {
namespace {

FileIdentity identity_of(const struct stat& st) {
  FileIdentity id;
  id.device = static_cast<uint64_t>(st.st_dev);
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.ctime_ns = int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  return id;
}

}  // namespace

Result<FileIdentity> stat_identity(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return io_error("'" + path + "': " + std::strerror(errno));
  }
  return identity_of(st);
}

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer
  // forever; the file type is checked right after, on the descriptor.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    // A missing file is the caller's mistake (exit 2); other refusals are I/O failures.
    const int e = errno;
    const std::string msg = "cannot open '" + path + "': " + std::strerror(e);
    return e == ENOENT || e == ENOTDIR ? not_found(msg) : io_error(msg);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return io_error("cannot stat '" + path + "': " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return invalid_argument("'" + path + "' is not a regular file");
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->identity_ = identity_of(st);
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      return io_error("cannot map '" + path + "': " + std::strerror(e));
    }
    file->data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return file;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

void MappedFile::prefetch(size_t offset, size_t length) const {
  if (data_ == nullptr || offset >= size_) return;
  const size_t page = 4096;
  size_t begin = offset & ~(page - 1);
  size_t end = std::min(size_, offset + length);
  ::madvise(const_cast<uint8_t*>(data_) + begin, end - begin, MADV_WILLNEED);
}

void populate_read(const void* p, size_t n) {
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14
#endif
  if (p == nullptr || n == 0) return;
  const uintptr_t page = 4096;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + n;
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);
}

}  // namespace onnx_prepack::base
