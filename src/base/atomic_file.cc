#include "base/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

namespace onnx_prepack::base {
namespace {

std::string parent_dir(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status errno_status(const std::string& what, const std::string& path) {
  return io_error(what + " '" + path + "': " + std::strerror(errno));
}

}  // namespace

Result<AtomicFileWriter> AtomicFileWriter::create(const std::string& final_path) {
  AtomicFileWriter w;
  w.final_path_ = final_path;
  std::random_device rd;
  for (int attempt = 0; attempt < 16; ++attempt) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp.%d.%08x", int(::getpid()), unsigned(rd()));
    w.temp_path_ = final_path + suffix;
    w.fd_ = ::open(w.temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (w.fd_ >= 0) return w;
    if (errno != EEXIST) return errno_status("cannot create", w.temp_path_);
  }
  return io_error("cannot create a temporary file beside '" + final_path + "'");
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& o) noexcept
    : fd_(o.fd_),
      offset_(o.offset_),
      final_path_(std::move(o.final_path_)),
      temp_path_(std::move(o.temp_path_)),
      committed_(o.committed_) {
  o.fd_ = -1;
  o.committed_ = true;
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
}

Status AtomicFileWriter::write(std::span<const uint8_t> bytes) {
  const uint8_t* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, std::min<size_t>(left, size_t(1) << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status("cannot write", temp_path_);
    }
    p += n;
    left -= size_t(n);
    offset_ += uint64_t(n);
  }
  return ok_status();
}

Status AtomicFileWriter::write_zeros(uint64_t count) {
  static const uint8_t kZeros[4096] = {};
  while (count > 0) {
    size_t n = size_t(std::min<uint64_t>(count, sizeof kZeros));
    OP_RETURN_IF_ERROR(write({kZeros, n}));
    count -= n;
  }
  return ok_status();
}

Status AtomicFileWriter::commit_as(const std::string& final_path) {
  final_path_ = final_path;
  return commit();
}

int remove_stale_temporaries(const std::string& final_path) {
  const std::string dir = parent_dir(final_path);
  const auto slash = final_path.find_last_of('/');
  const std::string name = slash == std::string::npos ? final_path : final_path.substr(slash + 1);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  int removed = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string f = e->d_name;
    if (f.rfind(name, 0) != 0) continue;
    const auto tmp = f.find(".tmp.", name.size());
    if (tmp == std::string::npos) continue;
    char* end = nullptr;
    const long pid = std::strtol(f.c_str() + tmp + 5, &end, 10);
    if (pid <= 0 || end == nullptr || *end != '.') continue;
    if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;  // its writer may still run
    if (::unlinkat(::dirfd(d), f.c_str(), 0) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

Status AtomicFileWriter::commit(Durability durability) {
  const bool durable = durability == Durability::kDurable;
  if (durable && ::fsync(fd_) != 0) return errno_status("cannot fsync", temp_path_);
  if (::close(fd_) != 0) {
    fd_ = -1;
    return errno_status("cannot close", temp_path_);
  }
  fd_ = -1;
  if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    return errno_status("cannot rename onto", final_path_);
  }
  committed_ = true;
  if (!durable) return ok_status();
  int dfd = ::open(parent_dir(final_path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return ok_status();
}

Status write_file_atomically(const std::string& path, std::span<const uint8_t> bytes,
                             Durability durability) {
  OP_ASSIGN_OR_RETURN(AtomicFileWriter w, AtomicFileWriter::create(path));
  OP_RETURN_IF_ERROR(w.write(bytes));
  return w.commit(durability);
}

Result<std::vector<uint8_t>> read_file(const std::string& path, uint64_t max_bytes) {
  // O_NONBLOCK + a type check: a FIFO or device must not block or stream forever.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    // A missing file is the caller's input, like a missing model (docs/cli.md: exit 2).
    if (errno == ENOENT || errno == ENOTDIR) {
      return not_found("cannot open '" + path + "': " + std::strerror(errno));
    }
    return errno_status("cannot open", path);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return errno_status("cannot stat", path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return invalid_argument("'" + path + "' is not a regular file");
  }
  if (uint64_t(st.st_size) > max_bytes) {
    ::close(fd);
    return resource_exhausted("'" + path + "' is " + std::to_string(st.st_size) +
                              " bytes, more than the limit of " + std::to_string(max_bytes));
  }
  std::vector<uint8_t> out(size_t(st.st_size));
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

}  // namespace onnx_prepack::base
