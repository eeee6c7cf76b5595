// svmlight / libsvm and edge-list readers.
#include "io_common.hpp"

#include <algorithm>

namespace spira::io {

namespace detail {
namespace {

std::int64_t parse_id(const std::filesystem::path& path, std::int64_t line, std::string_view tok,
                      const char* what)
{
  if (tok.empty()) {
    fail_line(path, line, "missing ", what);
  }
  std::int64_t v = 0;
  switch (parse_int(tok, v)) {
    case parse_status::invalid:
      fail_line(path, line, what, " ", show_token(tok), " is not an integer");
    case parse_status::out_of_range:
      fail_line(path, line, what, " ", show_token(tok), " overflows a 64-bit integer");
    case parse_status::ok:
      break;
  }
  if (v < 0) {
    fail_line(path, line, what, " must be >= 0, got ", v);
  }
  return v;
}

/// Raw svmlight content before the index base is known.
template <class ValueT>
struct svmlight_raw {
  std::vector<offset_t> row_ptr{0};
  std::vector<std::int64_t> cols;
  std::vector<ValueT> values;
  std::vector<double> labels;
  std::int64_t min_index = std::numeric_limits<std::int64_t>::max();
  std::int64_t min_index_line = 0;
  std::int64_t max_index = -1;
  std::int64_t max_index_line = 0;
};

template <class ValueT>
svmlight_raw<ValueT> parse_svmlight(std::string_view text, const std::filesystem::path& path,
                                    const read_options& opts)
{
  svmlight_raw<ValueT> r;
  // "1:1 " is the shortest pair, so the text bounds the entry count; grow from a capped guess.
  const std::size_t guess = std::min<std::size_t>(text.size() / 4 + 1, std::size_t{1} << 22);
  r.cols.reserve(guess);
  r.values.reserve(guess);
  line_cursor cur(text);
  std::string_view line;
  while (cur.next(line)) {
    const std::int64_t ln = cur.line_no();
    if (const auto hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    token_cursor tc(line);
    if (tc.at_end()) {
      continue;
    }
    const auto label_tok = tc.next();
    if (label_tok.find(':') != std::string_view::npos) {
      fail_line(path, ln, "the line must start with a label, got ", show_token(label_tok));
    }
    double label = 0;
    if (parse_real(label_tok, label) != parse_status::ok) {
      if (label_tok.find(',') != std::string_view::npos) {
        fail_line(path, ln, "multi-label rows (", show_token(label_tok), ") are not supported");
      }
      fail_line(path, ln, "label ", show_token(label_tok), " is not a number");
    }
    for (auto tok = tc.next(); !tok.empty(); tok = tc.next()) {
      const auto colon = tok.find(':');
      if (colon == std::string_view::npos) {
        fail_line(path, ln, "expected index:value, got ", show_token(tok));
      }
      const auto key = tok.substr(0, colon);
      const auto val = tok.substr(colon + 1);
      if (key == "qid") {
        std::int64_t q = 0;
        if (parse_int(val, q) != parse_status::ok) {
          fail_line(path, ln, "qid ", show_token(val), " is not an integer");
        }
        continue;
      }
      const std::int64_t idx = parse_id(path, ln, key, "feature index");
      ValueT v{};
      if (parse_real(val, v) != parse_status::ok) {
        fail_line(path, ln, "value ", show_token(val), " of feature ", idx, " is not a number");
      }
      if (idx < r.min_index) {
        r.min_index = idx;
        r.min_index_line = ln;
      }
      if (idx > r.max_index) {
        r.max_index = idx;
        r.max_index_line = ln;
      }
      r.cols.push_back(idx);
      r.values.push_back(v);
    }
    if (static_cast<std::int64_t>(r.labels.size()) >= opts.max_rows) {
      fail_line(path, ln, "more than read_options::max_rows = ", opts.max_rows,
                " rows (raise it to read this file)");
    }
    r.labels.push_back(label);
    r.row_ptr.push_back(static_cast<offset_t>(r.cols.size()));
  }
  return r;
}

}  // namespace
}  // namespace detail

template <class ValueT, class IndexT>
svmlight_data<ValueT, IndexT> read_svmlight(const std::filesystem::path& path,
                                            const read_options& opts)
{
  const auto file = detail::load_file(path);
  auto raw = detail::parse_svmlight<ValueT>(file.data, path, opts);
  const bool any_entry = raw.max_index >= 0;
  std::int64_t base = 0;
  switch (opts.svmlight_index_base) {
    case index_base::zero:
      base = 0;
      break;
    case index_base::one:
      base = 1;
      if (any_entry && raw.min_index == 0) {
        detail::fail_line(path, raw.min_index_line,
                          "feature index 0 in a file read as one-based (index_base::one)");
      }
      break;
    case index_base::automatic:
      base = any_entry && raw.min_index == 0 ? 0 : 1;
      break;
  }
  const std::int64_t rows = static_cast<std::int64_t>(raw.labels.size());
  if (any_entry && raw.max_index - base == std::numeric_limits<std::int64_t>::max()) {
    detail::fail_line(path, raw.max_index_line, "feature index ", raw.max_index, " is too large");
  }
  std::int64_t cols = any_entry ? raw.max_index - base + 1 : 0;
  if (opts.svmlight_features > 0) {
    if (cols > opts.svmlight_features) {
      detail::fail_line(path, raw.max_index_line, "feature index ", raw.max_index,
                        " is outside the ", opts.svmlight_features,
                        " features given in read_options::svmlight_features");
    }
    cols = opts.svmlight_features;
  }
  detail::check_extents<IndexT>(path, any_entry ? raw.max_index_line : 0, rows, cols, opts);

  const auto nnz = static_cast<std::int64_t>(raw.values.size());
  csr_matrix<ValueT, IndexT> m(host_resources{}, rows, cols, nnz);
  std::copy(raw.row_ptr.begin(), raw.row_ptr.end(), m.row_ptr());
  raw.row_ptr = {};  // freed before canonicalize makes its copy of the row pointers
  for (std::int64_t k = 0; k < nnz; ++k) {
    m.col_idx()[k] = IndexT(raw.cols[k] - base);
  }
  std::copy(raw.values.begin(), raw.values.end(), m.values());
  raw.cols = {};
  raw.values = {};
  svmlight_data<ValueT, IndexT> out;
  out.x = canonicalize(detail::convert_resources(nnz), m.view());
  out.labels = std::move(raw.labels);
  return out;
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> read_edge_list(const std::filesystem::path& path,
                                          const read_options& opts)
{
  const auto file = detail::load_file(path);
  std::vector<std::int64_t> src;
  std::vector<std::int64_t> dst;
  std::vector<ValueT> w;
  const std::size_t guess = std::min<std::size_t>(file.data.size() / 4 + 1, std::size_t{1} << 22);
  src.reserve(guess);
  dst.reserve(guess);
  w.reserve(guess);
  std::int64_t max_id = -1;
  std::int64_t max_id_line = 0;
  detail::line_cursor cur(file.data);
  std::string_view line;
  while (cur.next(line)) {
    const std::int64_t ln = cur.line_no();
    detail::token_cursor tc(line);
    if (tc.at_end()) {
      continue;
    }
    const auto first = tc.next();
    if (first.front() == '#' || first.front() == '%') {
      continue;
    }
    const std::int64_t s = detail::parse_id(path, ln, first, "source node id");
    const std::int64_t d = detail::parse_id(path, ln, tc.next(), "target node id");
    ValueT v(1);
    if (const auto wt = tc.next(); !wt.empty()) {
      if (detail::parse_real(wt, v) != detail::parse_status::ok) {
        detail::fail_line(path, ln, "edge weight ", detail::show_token(wt), " is not a number");
      }
    }
    if (!tc.at_end()) {
      detail::fail_line(path, ln, "expected 'src dst [weight]', got more");
    }
    if (std::max(s, d) > max_id) {
      max_id = std::max(s, d);
      max_id_line = ln;
    }
    src.push_back(s);
    dst.push_back(d);
    w.push_back(v);
  }
  if (max_id >= opts.max_rows) {
    detail::fail_line(path, max_id_line, "node id ", max_id,
                      " needs more than read_options::max_rows = ", opts.max_rows,
                      " rows (raise it to read this graph)");
  }
  const std::int64_t n = max_id + 1;
  detail::check_extents<IndexT>(path, max_id_line, n, n, opts);
  detail::triplets<ValueT, IndexT> t;
  t.rows.assign(src.begin(), src.end());
  src = {};
  t.cols.assign(dst.begin(), dst.end());
  dst = {};
  t.values = std::move(w);
  return t.to_csr(n, n);
}

template svmlight_data<float, std::int32_t> read_svmlight<float, std::int32_t>(
    const std::filesystem::path&, const read_options&);
template svmlight_data<float, std::int64_t> read_svmlight<float, std::int64_t>(
    const std::filesystem::path&, const read_options&);
template svmlight_data<double, std::int32_t> read_svmlight<double, std::int32_t>(
    const std::filesystem::path&, const read_options&);
template svmlight_data<double, std::int64_t> read_svmlight<double, std::int64_t>(
    const std::filesystem::path&, const read_options&);
template csr_matrix<float, std::int32_t> read_edge_list<float, std::int32_t>(
    const std::filesystem::path&, const read_options&);
template csr_matrix<float, std::int64_t> read_edge_list<float, std::int64_t>(
    const std::filesystem::path&, const read_options&);
template csr_matrix<double, std::int32_t> read_edge_list<double, std::int32_t>(
    const std::filesystem::path&, const read_options&);
template csr_matrix<double, std::int64_t> read_edge_list<double, std::int64_t>(
    const std::filesystem::path&, const read_options&);

}  // namespace spira::io
