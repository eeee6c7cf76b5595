// Fuzz target: the zip reader (directory, zip64 fields, inflate, CRC) and the scipy sparse .npz
// reader, plus named-array access.
//
// Two input modes. A raw input is the archive itself: mutations exercise the zip layer, but most
// changes inside a member stop at its CRC check. An input starting with "SPIRA-MEMBERS\n" is a list
// of members separated by "\n@@\n", each "name\ncontent"; the target packs them into a stored zip
// with correct CRCs, so mutations of the .npy members reach the scipy-format checks (shapes,
// indptr against indices, index ranges, dtypes).
#include "fuzz_common.hpp"

#include <spira/io.hpp>

#include <zlib.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

constexpr std::string_view members_magic = "SPIRA-MEMBERS\n";
constexpr std::string_view member_separator = "\n@@\n";

/// A stored (uncompressed) zip of the members, built independently of the library's writer.
std::string stored_zip(const std::vector<std::pair<std::string_view, std::string_view>>& members)
{
  auto put16 = [](std::string& s, std::uint16_t v) {
    s += static_cast<char>(v & 0xff);
    s += static_cast<char>(v >> 8);
  };
  auto put32 = [&](std::string& s, std::uint32_t v) {
    put16(s, static_cast<std::uint16_t>(v & 0xffff));
    put16(s, static_cast<std::uint16_t>(v >> 16));
  };
  std::string body;
  std::string dir;
  for (const auto& [name, content] : members) {
    const auto crc = static_cast<std::uint32_t>(crc32(
        0, reinterpret_cast<const Bytef*>(content.data()), static_cast<uInt>(content.size())));
    std::string common;
    put16(common, 20);  // version needed
    put16(common, 0);   // flags
    put16(common, 0);   // stored
    put16(common, 0);   // time
    put16(common, 0x21);
    put32(common, crc);
    put32(common, static_cast<std::uint32_t>(content.size()));
    put32(common, static_cast<std::uint32_t>(content.size()));
    put16(common, static_cast<std::uint16_t>(name.size()));
    put16(common, 0);  // extra
    put32(dir, 0x02014b50);
    put16(dir, 20);
    dir += common;
    put16(dir, 0);
    put16(dir, 0);
    put16(dir, 0);
    put32(dir, 0);
    put32(dir, static_cast<std::uint32_t>(body.size()));
    dir += name;
    put32(body, 0x04034b50);
    body += common;
    body += name;
    body += content;
  }
  std::string end;
  put32(end, 0x06054b50);
  put16(end, 0);
  put16(end, 0);
  put16(end, static_cast<std::uint16_t>(members.size()));
  put16(end, static_cast<std::uint16_t>(members.size()));
  put32(end, static_cast<std::uint32_t>(dir.size()));
  put32(end, static_cast<std::uint32_t>(body.size()));
  put16(end, 0);
  return body + dir + end;
}

std::string assemble(std::string_view text)
{
  std::vector<std::pair<std::string_view, std::string_view>> members;
  while (!text.empty() && members.size() < 16) {
    const auto sep = text.find(member_separator);
    const std::string_view part = text.substr(0, sep);
    const auto nl = part.find('\n');
    members.emplace_back(part.substr(0, std::min(nl, part.size())),
                         nl == std::string_view::npos ? std::string_view{} : part.substr(nl + 1));
    if (sep == std::string_view::npos) {
      break;
    }
    text.remove_prefix(sep + member_separator.size());
  }
  return stored_zip(members);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  static spira::fuzz::scratch_file scratch(".npz");
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string archive;
  if (input.starts_with(members_magic)) {
    archive = assemble(input.substr(members_magic.size()));
    data = reinterpret_cast<const std::uint8_t*>(archive.data());
    size = archive.size();
  }
  const auto& path = scratch.write(data, size);
  spira::io::read_options opts;
  opts.max_rows = std::int64_t{1} << 16;
  using spira::fuzz::expect_spira_error_or_success;
  expect_spira_error_or_success(
      [&] { (void)spira::io::read_npz<double, std::int32_t>(path, opts); });
  expect_spira_error_or_success(
      [&] { (void)spira::io::read_npz<float, std::int64_t>(path, opts); });
  expect_spira_error_or_success([&] {
    for (const auto& name : spira::io::npz_names(path)) {
      expect_spira_error_or_success([&] { (void)spira::io::read_npz_array<double>(path, name); });
    }
  });
  return 0;
}
