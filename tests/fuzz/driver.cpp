// A small mutation-fuzzing driver for LLVMFuzzerTestOneInput targets, for compilers without
// libFuzzer (g++). It runs every seed of the corpus unchanged, then random mutations of them for a
// bounded time or number of runs.
//
//   fuzz_<reader> [--seconds S] [--runs N] [--seed X] [--max-len L] [--artifacts DIR] CORPUS...
//
// Mutations: bit flips, random bytes, byte insertion and deletion, truncation, chunk duplication,
// splicing two inputs, and "interesting" values - binary integers (0, -1, 2^31, 2^32-1, 2^63...)
// written over 2/4/8 bytes, and text tokens (2147483648, -1, 1e308, nan, 99999999999999999999,
// Matrix Market/svmlight/.npy keywords) inserted or replacing a run of digits.
//
// Outcome: the target swallows spira::error (the documented failure). Any other exception that
// escapes, or a crash (SIGSEGV, SIGABRT, SIGFPE, SIGBUS), is a finding: the input is written to
// DIR/crash-<run> and the process exits with status 1. Sanitizer reports abort the same way.
#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using bytes = std::vector<std::uint8_t>;

// The input being run, for the crash handler (which may only use async-signal-safe calls).
const std::uint8_t* g_current = nullptr;
std::size_t g_current_size = 0;
char g_crash_path[4096] = "crash-input";

extern "C" void on_crash(int sig)
{
  const int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (g_current != nullptr && g_current_size > 0) {
      [[maybe_unused]] const auto n = ::write(fd, g_current, g_current_size);
    }
    ::close(fd);
  }
  const char msg[] = "\nfuzz driver: crash (signal) - input saved to the crash file\n";
  [[maybe_unused]] const auto n = ::write(2, msg, sizeof msg - 1);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

struct options {
  double seconds = 10;
  std::uint64_t runs = 0;  // 0: bounded by time only
  std::uint64_t seed = 20240601;
  std::size_t max_len = 1 << 16;
  std::filesystem::path artifacts = ".";
  std::vector<std::filesystem::path> corpus;
};

[[noreturn]] void usage(const char* argv0)
{
  std::fprintf(stderr,
               "usage: %s [--seconds S] [--runs N] [--seed X] [--max-len L] [--artifacts DIR] "
               "CORPUS_DIR_OR_FILE...\n",
               argv0);
  std::exit(2);
}

options parse_args(int argc, char** argv)
{
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage(argv[0]);
      }
      return argv[++i];
    };
    if (a == "--seconds") {
      o.seconds = std::stod(value());
    } else if (a == "--runs") {
      o.runs = std::stoull(value());
    } else if (a == "--seed") {
      o.seed = std::stoull(value());
    } else if (a == "--max-len") {
      o.max_len = std::stoull(value());
    } else if (a == "--artifacts") {
      o.artifacts = value();
    } else if (a.starts_with("--")) {
      usage(argv[0]);
    } else {
      o.corpus.emplace_back(a);
    }
  }
  return o;
}

bytes read_file(const std::filesystem::path& p)
{
  std::ifstream in(p, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(in), {});
}

std::vector<bytes> load_corpus(const options& o)
{
  std::vector<bytes> seeds{bytes{}};  // the empty input is always a seed
  for (const auto& c : o.corpus) {
    if (std::filesystem::is_directory(c)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(c)) {
        if (e.is_regular_file()) {
          files.push_back(e.path());
        }
      }
      std::sort(files.begin(), files.end());  // deterministic order
      for (const auto& f : files) {
        seeds.push_back(read_file(f));
      }
    } else if (std::filesystem::is_regular_file(c)) {
      seeds.push_back(read_file(c));
    } else {
      std::fprintf(stderr, "fuzz driver: corpus %s not found\n", c.c_str());
      std::exit(2);
    }
  }
  return seeds;
}

class mutator {
 public:
  mutator(std::uint64_t seed, const std::vector<bytes>& seeds, std::size_t max_len)
      : gen_(seed), seeds_(seeds), max_len_(max_len)
  {
  }

  bytes next()
  {
    bytes b = seeds_[pick(seeds_.size())];
    const int steps = 1 + static_cast<int>(pick(4));
    for (int s = 0; s < steps; ++s) {
      mutate(b);
    }
    if (b.size() > max_len_) {
      b.resize(max_len_);
    }
    return b;
  }

 private:
  std::size_t pick(std::size_t n)
  {
    return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(gen_);
  }

  void mutate(bytes& b)
  {
    static const std::vector<std::string> tokens{"2147483648",
                                                 "2147483647",
                                                 "-2147483649",
                                                 "4294967296",
                                                 "-1",
                                                 "0",
                                                 "1",
                                                 "1e308",
                                                 "-1e308",
                                                 "1e-320",
                                                 "1e400",
                                                 "nan",
                                                 "inf",
                                                 "-inf",
                                                 "9223372036854775807",
                                                 "9223372036854775808",
                                                 "99999999999999999999",
                                                 "18446744073709551616",
                                                 " ",
                                                 "\t",
                                                 "\n",
                                                 "\r\n",
                                                 "%",
                                                 "#",
                                                 ":",
                                                 "qid:",
                                                 "0:",
                                                 "1:",
                                                 "%%MatrixMarket matrix coordinate real general\n",
                                                 "%%MatrixMarket matrix array real symmetric\n",
                                                 "pattern",
                                                 "integer",
                                                 "skew-symmetric",
                                                 "symmetric",
                                                 "complex",
                                                 "hermitian",
                                                 "'shape': (",
                                                 "), ",
                                                 "(65536, 65536)",
                                                 "True",
                                                 "False",
                                                 "'<f8'",
                                                 "'>i2'",
                                                 "'|b1'",
                                                 "'<U3'",
                                                 "[",
                                                 "{",
                                                 "}",
                                                 std::string("\0", 1),
                                                 "\xff\xff\xff\xff",
                                                 "PK\x03\x04",
                                                 "PK\x01\x02",
                                                 "PK\x05\x06",
                                                 "\x1f\x8b",
                                                 "\x93NUMPY"};
    static const std::vector<std::uint64_t> ints{0,
                                                 1,
                                                 0x7f,
                                                 0x80,
                                                 0xff,
                                                 0x7fff,
                                                 0x8000,
                                                 0xffff,
                                                 0x7fffffff,
                                                 0x80000000,
                                                 0xffffffff,
                                                 0x100000000,
                                                 0x7fffffffffffffff,
                                                 0x8000000000000000,
                                                 0xffffffffffffffff};
    const std::size_t n = b.size();
    switch (pick(11)) {
      case 0:  // flip a bit
        if (n > 0) {
          b[pick(n)] ^= static_cast<std::uint8_t>(1u << pick(8));
        }
        break;
      case 1:  // random byte
        if (n > 0) {
          b[pick(n)] = static_cast<std::uint8_t>(pick(256));
        }
        break;
      case 2: {  // insert random bytes
        const std::size_t at = pick(n + 1);
        const std::size_t k = 1 + pick(8);
        bytes ins(k);
        for (auto& c : ins) {
          c = static_cast<std::uint8_t>(pick(256));
        }
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), ins.begin(), ins.end());
        break;
      }
      case 3: {  // delete a range
        if (n == 0) {
          break;
        }
        const std::size_t at = pick(n);
        const std::size_t k = 1 + pick(std::min<std::size_t>(n - at, 16));
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at),
                b.begin() + static_cast<std::ptrdiff_t>(at + k));
        break;
      }
      case 4:  // truncate
        b.resize(pick(n + 1));
        break;
      case 5: {  // splice with another seed
        const bytes& o = seeds_[pick(seeds_.size())];
        const std::size_t cut = pick(n + 1);
        const std::size_t from = pick(o.size() + 1);
        b.resize(cut);
        b.insert(b.end(), o.begin() + static_cast<std::ptrdiff_t>(from), o.end());
        break;
      }
      case 6: {  // insert a token
        const auto& t = tokens[pick(tokens.size())];
        const std::size_t at = pick(n + 1);
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), t.begin(), t.end());
        break;
      }
      case 7: {  // replace a run of digits with a token
        if (n == 0) {
          break;
        }
        std::size_t at = pick(n);
        while (at < n && (b[at] < '0' || b[at] > '9')) {
          ++at;
        }
        if (at == n) {
          break;
        }
        std::size_t end = at;
        while (end < n && b[end] >= '0' && b[end] <= '9') {
          ++end;
        }
        const auto& t = tokens[pick(20)];  // the numeric tokens
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at),
                b.begin() + static_cast<std::ptrdiff_t>(end));
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), t.begin(), t.end());
        break;
      }
      case 8: {  // overwrite 2/4/8 bytes with an interesting little-endian integer
        const std::size_t w = std::size_t{2} << pick(3);
        if (n < w) {
          break;
        }
        const std::uint64_t v = ints[pick(ints.size())] + (pick(2) == 0 ? 0 : pick(3) - 1);
        std::memcpy(b.data() + pick(n - w + 1), &v, w);
        break;
      }
      case 9: {  // duplicate a chunk elsewhere
        if (n == 0) {
          break;
        }
        const std::size_t from = pick(n);
        const std::size_t k = 1 + pick(std::min<std::size_t>(n - from, 64));
        const bytes chunk(b.begin() + static_cast<std::ptrdiff_t>(from),
                          b.begin() + static_cast<std::ptrdiff_t>(from + k));
        const std::size_t at = pick(n + 1);
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), chunk.begin(), chunk.end());
        break;
      }
      default: {  // swap two bytes
        if (n < 2) {
          break;
        }
        std::swap(b[pick(n)], b[pick(n)]);
        break;
      }
    }
  }

  std::mt19937_64 gen_;
  const std::vector<bytes>& seeds_;
  std::size_t max_len_;
};

/// Runs one input; returns false (after saving it) when something other than spira::error escaped.
bool run_one(const bytes& input, std::uint64_t run, const options& o)
{
  g_current = input.data();
  g_current_size = input.size();
  const auto crash = (o.artifacts / ("crash-" + std::to_string(run))).string();
  std::snprintf(g_crash_path, sizeof g_crash_path, "%s", crash.c_str());
  try {
    LLVMFuzzerTestOneInput(input.data(), input.size());
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz driver: run %llu: unexpected exception: %s\n",
                 static_cast<unsigned long long>(run), e.what());
  } catch (...) {
    std::fprintf(stderr, "fuzz driver: run %llu: unexpected non-standard exception\n",
                 static_cast<unsigned long long>(run));
  }
  std::ofstream(crash, std::ios::binary)
      .write(reinterpret_cast<const char*>(input.data()),
             static_cast<std::streamsize>(input.size()));
  std::fprintf(stderr, "fuzz driver: input saved to %s\n", crash.c_str());
  return false;
}

}  // namespace

int main(int argc, char** argv)
{
  const options o = parse_args(argc, argv);
  for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) {
    std::signal(sig, on_crash);
  }
  const auto seeds = load_corpus(o);
  std::uint64_t run = 0;
  for (const auto& s : seeds) {
    if (!run_one(s, run++, o)) {
      return 1;
    }
  }
  mutator m(o.seed, seeds, o.max_len);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(o.seconds);
  for (;;) {
    if (o.runs > 0 && run >= o.runs) {
      break;
    }
    if (o.runs == 0 && std::chrono::steady_clock::now() >= deadline) {
      break;
    }
    if (!run_one(m.next(), run++, o)) {
      return 1;
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz driver: %llu runs (%zu seeds) in %.1f s, seed %llu: no findings\n",
              static_cast<unsigned long long>(run), seeds.size(), secs,
              static_cast<unsigned long long>(o.seed));
  return 0;
}
