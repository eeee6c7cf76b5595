// Small command-line helper for tests/io/test_npz_interop.py: reads files through spira::io and
// prints what it read, or writes files for numpy to check.
//
//   io_roundtrip_tool csr FILE            -> "rows cols nnz checksum" of read_matrix<double,int64>
//   io_roundtrip_tool dense FILE          -> "rows cols checksum" of read_npy<double>
//   io_roundtrip_tool convert IN OUT.mtx  -> reads IN (any format), writes Matrix Market
//   io_roundtrip_tool write-npz OUT.npz [zip64]
//                                         -> arrays indices (int64 3x2), values (float32 3x2),
//                                            labels (float64 1-D, 4), counts (int32 2x3); with
//                                            "zip64", every zip64 record (npz_write_options)
//   io_roundtrip_tool write-npy OUT.npy T -> 3x4 array of type T (f4 f8 i4 i8), a(i,j) = 10i+j-5
//
// The checksum weights every entry by its position: sum of v * (1 + (31 i + 17 j) mod 101).
#include <spira/io.hpp>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {

double weight(std::int64_t i, std::int64_t j)
{
  return 1.0 + double((31 * i + 17 * j) % 101);
}

template <class T>
void write_sample(const char* out)
{
  std::vector<T> a(12);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      a[i * 4 + j] = T(10 * i + j - 5);
    }
  }
  spira::io::write_npy(out, spira::dense_view<const T>{3, 4, 4, a.data()});
}

int run(int argc, char** argv)
{
  if (argc < 3) {
    std::fprintf(stderr, "usage: io_roundtrip_tool csr|dense|convert|write-npz|write-npy ...\n");
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "csr") {
    const auto m = spira::io::read_matrix<double, std::int64_t>(argv[2]);
    double sum = 0;
    for (std::int64_t i = 0; i < m.rows(); ++i) {
      for (auto k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
        sum += m.values()[k] * weight(i, m.col_idx()[k]);
      }
    }
    std::printf("%lld %lld %lld %.17g\n", static_cast<long long>(m.rows()),
                static_cast<long long>(m.cols()), static_cast<long long>(m.nnz()), sum);
  } else if (cmd == "dense") {
    const auto d = spira::io::read_npy<double>(argv[2]);
    double sum = 0;
    for (std::int64_t i = 0; i < d.rows(); ++i) {
      for (std::int64_t j = 0; j < d.cols(); ++j) {
        sum += d.data()[i * d.cols() + j] * weight(i, j);
      }
    }
    std::printf("%lld %lld %.17g\n", static_cast<long long>(d.rows()),
                static_cast<long long>(d.cols()), sum);
  } else if (cmd == "convert" && argc == 4) {
    const auto m = spira::io::read_matrix<double, std::int64_t>(argv[2]);
    spira::io::write_mm(argv[3], m.view());
  } else if (cmd == "write-npz") {
    const std::vector<std::int64_t> indices{0, 2, 1, 0, 2, 1};
    const std::vector<float> values{0.5f, 1.25f, -2.0f, 3.0e-8f, 1.0e30f, 0.0f};
    const std::vector<double> labels{1.0, -1.0, 0.5, 2.0};
    const std::vector<std::int32_t> counts{1, 2, 3, -4, 5, 2147483647};
    const spira::io::npz_entry entries[] = {
        spira::io::npz_entry::of("indices",
                                 spira::dense_view<const std::int64_t>{3, 2, 2, indices.data()}),
        spira::io::npz_entry::of("values", spira::dense_view<const float>{3, 2, 2, values.data()}),
        spira::io::npz_entry::of("labels", std::span<const double>(labels)),
        spira::io::npz_entry::of("counts",
                                 spira::dense_view<const std::int32_t>{2, 3, 3, counts.data()})};
    const bool zip64 = argc == 4 && std::strcmp(argv[3], "zip64") == 0;
    spira::io::write_npz(argv[2], entries, {.zip64 = zip64});
  } else if (cmd == "write-npy" && argc == 4) {
    const std::string t = argv[3];
    if (t == "f4") {
      write_sample<float>(argv[2]);
    } else if (t == "f8") {
      write_sample<double>(argv[2]);
    } else if (t == "i4") {
      write_sample<std::int32_t>(argv[2]);
    } else if (t == "i8") {
      write_sample<std::int64_t>(argv[2]);
    } else {
      std::fprintf(stderr, "unknown type %s\n", t.c_str());
      return 2;
    }
  } else {
    std::fprintf(stderr, "io_roundtrip_tool: bad command line\n");
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv)
{
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
