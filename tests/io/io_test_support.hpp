// Helpers for the I/O tests: a per-test temporary folder, file writers (plain, gzip, hand-made
// .npy and zip images built independently of the library's writers) and a dense oracle.
#pragma once

#include <spira/io.hpp>

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace spira::test {

/// A fresh folder per test, removed afterwards.
class temp_dir {
 public:
  temp_dir()
  {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("spira_io_") + info->test_suite_name() + "_" + info->name();
    for (auto& c : name) {
      if (c == '/') {
        c = '_';
      }
    }
    dir_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir()
  {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  [[nodiscard]] std::filesystem::path path(const std::string& name) const { return dir_ / name; }

  std::filesystem::path write(const std::string& name, const std::string& bytes) const
  {
    const auto p = path(name);
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

 private:
  std::filesystem::path dir_;
};

/// gzip-compresses bytes with zlib (one member).
inline std::string gzip(const std::string& in)
{
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, in.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

/// Raw deflate (as zip stores it).
inline std::string raw_deflate(const std::string& in)
{
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, in.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

/// An .npy image: magic, version, a header dict padded to 16 bytes, then `data`.
inline std::string npy_image(const std::string& dict, const std::string& data, int major = 1)
{
  std::string h = dict;
  const std::size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 16 != 0) {
    h += ' ';
  }
  h += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const auto len = static_cast<std::uint32_t>(h.size());
  out.append(reinterpret_cast<const char*>(&len), major == 1 ? 2 : 4);
  return out + h + data;
}

template <class T>
std::string bytes_of(const std::vector<T>& v)
{
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

/// A zip archive of (name, content) members, stored or raw-deflated, with correct CRCs. With
/// `zip64`, the central directory saturates sizes and offsets to 0xffffffff and carries the real
/// values in zip64 extra fields, and the end record points to a zip64 end-of-directory record.
inline std::string zip_image(const std::vector<std::pair<std::string, std::string>>& members,
                             bool deflate, bool zip64 = false)
{
  auto put16 = [](std::string& s, std::uint16_t v) { s.append(reinterpret_cast<char*>(&v), 2); };
  auto put32 = [](std::string& s, std::uint32_t v) { s.append(reinterpret_cast<char*>(&v), 4); };
  std::string body;
  std::string cd;
  for (const auto& [name, content] : members) {
    const std::string stored = deflate ? raw_deflate(content) : content;
    const auto crc = static_cast<std::uint32_t>(crc32(
        0, reinterpret_cast<const Bytef*>(content.data()), static_cast<uInt>(content.size())));
    const auto offset = static_cast<std::uint32_t>(body.size());
    std::string fields;
    put16(fields, 20);
    put16(fields, 0);
    put16(fields, deflate ? 8 : 0);
    put16(fields, 0);
    put16(fields, 0x21);
    put32(fields, crc);
    put32(fields, static_cast<std::uint32_t>(stored.size()));
    put32(fields, static_cast<std::uint32_t>(content.size()));
    put16(fields, static_cast<std::uint16_t>(name.size()));
    put16(fields, 0);
    put32(body, 0x04034b50);
    body += fields + name + stored;
    put32(cd, 0x02014b50);
    put16(cd, zip64 ? 45 : 20);
    if (zip64) {
      std::string f = fields;
      const std::uint32_t sat = 0xffffffffu;
      std::memcpy(f.data() + 14, &sat, 4);  // compressed size
      std::memcpy(f.data() + 18, &sat, 4);  // uncompressed size
      const auto extra_len = std::uint16_t{28};
      std::memcpy(f.data() + 24, &extra_len, 2);
      cd += f;
    } else {
      cd += fields;
    }
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put32(cd, 0);
    put32(cd, zip64 ? 0xffffffffu : offset);
    cd += name;
    if (zip64) {  // id 1: uncompressed size, compressed size, local header offset
      put16(cd, 1);
      put16(cd, 24);
      const std::uint64_t vals[3] = {content.size(), stored.size(), offset};
      cd.append(reinterpret_cast<const char*>(vals), sizeof vals);
    }
  }
  if (zip64) {
    std::string rec;
    put32(rec, 0x06064b50);
    const std::uint64_t rec_size = 44;
    rec.append(reinterpret_cast<const char*>(&rec_size), 8);
    put16(rec, 45);
    put16(rec, 45);
    put32(rec, 0);
    put32(rec, 0);
    const std::uint64_t tail[4] = {members.size(), members.size(), cd.size(), body.size()};
    rec.append(reinterpret_cast<const char*>(tail), sizeof tail);
    const std::uint64_t rec_offset = body.size() + cd.size();
    std::string loc;
    put32(loc, 0x07064b50);
    put32(loc, 0);
    loc.append(reinterpret_cast<const char*>(&rec_offset), 8);
    put32(loc, 1);
    std::string eocd;
    put32(eocd, 0x06054b50);
    put16(eocd, 0);
    put16(eocd, 0);
    put16(eocd, 0xffff);
    put16(eocd, 0xffff);
    put32(eocd, 0xffffffffu);
    put32(eocd, 0xffffffffu);
    put16(eocd, 0);
    return body + cd + rec + loc + eocd;
  }
  std::string eocd;
  put32(eocd, 0x06054b50);
  put16(eocd, 0);
  put16(eocd, 0);
  put16(eocd, static_cast<std::uint16_t>(members.size()));
  put16(eocd, static_cast<std::uint16_t>(members.size()));
  put32(eocd, static_cast<std::uint32_t>(cd.size()));
  put32(eocd, static_cast<std::uint32_t>(body.size()));
  put16(eocd, 0);
  return body + cd + eocd;
}

/// A CSR as a map (row, col) -> value, for comparisons.
template <class V, class I>
std::map<std::pair<std::int64_t, std::int64_t>, double> entries_of(const csr_matrix<V, I>& m)
{
  std::map<std::pair<std::int64_t, std::int64_t>, double> out;
  for (std::int64_t i = 0; i < m.rows(); ++i) {
    for (auto k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
      out[{i, std::int64_t(m.col_idx()[k])}] += double(m.values()[k]);
    }
  }
  return out;
}

using entry_map = std::map<std::pair<std::int64_t, std::int64_t>, double>;

/// Checks that the call throws spira::io_error whose message contains every fragment.
template <class F>
void expect_io_error(F&& f, const std::vector<std::string>& fragments)
{
  try {
    f();
    ADD_FAILURE() << "expected spira::io_error containing '" << fragments.front() << "'";
  } catch (const io_error& e) {
    const std::string msg = e.what();
    for (const auto& frag : fragments) {
      EXPECT_NE(msg.find(frag), std::string::npos) << "message: " << msg << "\nmissing: " << frag;
    }
  }
}

}  // namespace spira::test
