// File loading with transparent gzip decompression, and the small write helpers.
#include "io_common.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace spira::io::detail {

namespace {

constexpr unsigned char gzip_magic0 = 0x1f;
constexpr unsigned char gzip_magic1 = 0x8b;
/// deflate cannot expand better than ~1032:1, so a larger gzip size trailer is not trusted.
constexpr std::uint64_t max_deflate_ratio = 1032;

void check_readable(const std::filesystem::path& path)
{
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) {
    fail(path, "no such file");
  }
  if (std::filesystem::is_directory(st)) {
    fail(path, "is a directory, not a file");
  }
  // Devices, FIFOs and sockets may never end (/dev/zero) or block: only regular files are read.
  if (!std::filesystem::is_regular_file(st)) {
    fail(path, "is not a regular file");
  }
}

std::string gunzip(const std::string& in, const std::filesystem::path& path)
{
  // The ISIZE trailer (size mod 2^32 of the last member) is a good first guess for one member.
  std::size_t guess = in.size() * 4 + 4096;
  if (in.size() >= 18) {
    std::uint32_t isize = 0;
    std::memcpy(&isize, in.data() + in.size() - 4, 4);
    if (isize >= in.size() / 2 && isize <= in.size() * max_deflate_ratio) {
      guess = std::size_t{isize} + 1;
    }
  }
  std::string out;
  out.resize(guess);

  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) {
    fail(path, "cannot initialise zlib");
  }
  struct guard {
    z_stream* z;
    ~guard() { inflateEnd(z); }
  } g{&z};

  std::size_t in_pos = 0;
  std::size_t out_pos = 0;
  for (;;) {
    if (out_pos == out.size()) {
      out.resize(out.size() * 2);
    }
    const std::size_t in_chunk = std::min<std::size_t>(in.size() - in_pos, 1u << 30);
    const std::size_t out_chunk = std::min<std::size_t>(out.size() - out_pos, 1u << 30);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_pos));
    z.avail_in = static_cast<uInt>(in_chunk);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
    z.avail_out = static_cast<uInt>(out_chunk);
    const int rc = inflate(&z, Z_NO_FLUSH);
    in_pos += in_chunk - z.avail_in;
    out_pos += out_chunk - z.avail_out;
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members form one stream (gzip(1) semantics); zero padding is ignored.
      const auto rest = std::string_view(in).substr(in_pos);
      if (rest.size() >= 2 && static_cast<unsigned char>(rest[0]) == gzip_magic0 &&
          static_cast<unsigned char>(rest[1]) == gzip_magic1) {
        inflateReset(&z);
        continue;
      }
      if (rest.find_first_not_of('\0') != std::string_view::npos) {
        fail(path, "corrupt gzip file: ", rest.size(), " bytes of trailing garbage");
      }
      break;
    }
    if (rc == Z_OK) {
      continue;
    }
    if (rc == Z_BUF_ERROR) {
      if (in_pos == in.size()) {
        fail(path, "truncated gzip file (the compressed stream ends after ", in.size(), " bytes, ",
             out_pos, " bytes decompressed)");
      }
      continue;  // output space exhausted: grow and continue
    }
    fail(path, "corrupt gzip file: ", z.msg != nullptr ? z.msg : "inflate failed", " (after ",
         out_pos, " decompressed bytes)");
  }
  out.resize(out_pos);
  return out;
}

}  // namespace

std::string load_raw(const std::filesystem::path& path)
{
  check_readable(path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    fail(path, "cannot open: ", std::strerror(errno));
  }
  file_closer closer(f);
  std::string data;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > 0) {
    data.reserve(static_cast<std::size_t>(size));
  }
  char chunk[1 << 16];
  for (;;) {
    const std::size_t n = std::fread(chunk, 1, sizeof chunk, f);
    data.append(chunk, n);
    if (n < sizeof chunk) {
      if (std::ferror(f) != 0) {
        fail(path, "read error: ", std::strerror(errno));
      }
      break;
    }
  }
  return data;
}

file_bytes load_file(const std::filesystem::path& path)
{
  file_bytes fb;
  fb.data = load_raw(path);
  if (fb.data.size() >= 2 && static_cast<unsigned char>(fb.data[0]) == gzip_magic0 &&
      static_cast<unsigned char>(fb.data[1]) == gzip_magic1) {
    fb.data = gunzip(fb.data, path);
    fb.gzip = true;
  }
  return fb;
}

std::uintmax_t file_size_or_fail(const std::filesystem::path& path)
{
  check_readable(path);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    fail(path, "cannot determine the file size: ", ec.message());
  }
  return size;
}

void write_all(std::FILE* f, const void* data, std::size_t n, const std::filesystem::path& path)
{
  if (n > 0 && std::fwrite(data, 1, n, f) != n) {
    fail(path, "write error: ", std::strerror(errno));
  }
}

namespace {

/// The temporaries being written, for remove_unfinished_outputs() (a signal handler may call it:
/// fixed storage, one atomic claim flag per slot, no allocation).
struct unfinished_slot {
  std::atomic<int> state{0};  // 0 free, 1 being filled or cleared, 2 holds a path
  char path[4096] = {};
};
unfinished_slot unfinished[16];

int register_unfinished(const std::string& path)
{
  if (path.size() >= sizeof(unfinished[0].path)) {
    return -1;
  }
  for (int i = 0; i < 16; ++i) {
    int expected = 0;
    if (unfinished[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(unfinished[i].path, path.c_str(), path.size() + 1);
      unfinished[i].state.store(2);
      return i;
    }
  }
  return -1;  // more than 16 outputs at once: not removed on a signal (still on an exception)
}

void unregister_unfinished(int slot) noexcept
{
  if (slot >= 0) {
    unfinished[slot].state.store(1);
    unfinished[slot].path[0] = '\0';
    unfinished[slot].state.store(0);
  }
}

}  // namespace

output_file::output_file(const std::filesystem::path& target) : target_(target)
{
  if (target.filename().empty()) {
    fail(target, "cannot write: the name of the output file is empty");
  }
  std::error_code ec;
  const auto st = std::filesystem::status(target, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    // A device or a pipe (/dev/stdout, /dev/null): written in place, there is nothing to rename.
    f_ = std::fopen(target.c_str(), "wb");
    if (f_ == nullptr) {
      fail(target, "cannot open for writing: ", std::strerror(errno));
    }
    return;
  }
  const std::filesystem::path dir = target.parent_path();
  std::string name(1, '.');
  name.append(target.filename().string()).append(".spira-XXXXXX");
  std::string pattern = (dir / name).string();
  const int fd = mkstemp(pattern.data());
  if (fd < 0) {
    fail(target, "cannot create a file in ", dir.empty() ? std::string(".") : dir.string(), ": ",
         std::strerror(errno));
  }
  temp_ = pattern;
  slot_ = register_unfinished(pattern);
  // mkstemp creates the file 0600; give it the permissions a plain fopen would have.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  f_ = fdopen(fd, "wb");
  if (f_ == nullptr) {
    const int err = errno;
    close(fd);
    std::filesystem::remove(temp_);
    fail(target, "cannot open for writing: ", std::strerror(err));
  }
}

output_file::~output_file()
{
  if (f_ != nullptr) {
    std::fclose(f_);
  }
  if (!temp_.empty()) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
  unregister_unfinished(slot_);
}

void output_file::commit()
{
  std::FILE* f = f_;
  f_ = nullptr;
  // fsync only for the temporary (a regular file): devices and pipes may not support it.
  const bool flushed = std::fflush(f) == 0 && (temp_.empty() || fsync(fileno(f)) == 0);
  const int err = errno;
  if (std::fclose(f) != 0 || !flushed) {
    fail(target_, "write error: ", std::strerror(flushed ? errno : err));
  }
  if (temp_.empty()) {
    return;
  }
  if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
    fail(target_, "cannot rename the finished temporary file onto it: ", std::strerror(errno));
  }
  temp_.clear();
  unregister_unfinished(slot_);
  slot_ = -1;
}

}  // namespace spira::io::detail

namespace spira::io {

void remove_unfinished_outputs() noexcept
{
  for (auto& slot : detail::unfinished) {
    if (slot.state.load() == 2) {
      unlink(slot.path);
    }
  }
}

}  // namespace spira::io
