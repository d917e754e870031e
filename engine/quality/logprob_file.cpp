#include "engine/quality/logprob_file.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

namespace infertune {
namespace {

constexpr char kMagic[8] = {'I', 'T', 'L', 'O', 'G', 'P', '0', '1'};
constexpr uint64_t kHeaderBytes = sizeof(kMagic) + 3 * sizeof(uint32_t);

bool write_all(std::FILE* f, const void* data, size_t bytes) { return std::fwrite(data, 1, bytes, f) == bytes; }
bool read_all(std::FILE* f, void* data, size_t bytes) { return std::fread(data, 1, bytes, f) == bytes; }

}  // namespace

void log_softmax(std::span<const float> logits, std::span<float> out) {
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - max);
  const double log_sum = std::log(sum);
  for (size_t i = 0; i < logits.size(); ++i) {
    out[i] = static_cast<float>(static_cast<double>(logits[i]) - max - log_sum);
  }
}

Result<LogprobWriter> LogprobWriter::create(const std::string& path, const LogprobHeader& header,
                                            std::span<const int32_t> tokens) {
  if (tokens.size() != static_cast<size_t>(header.n_chunks) * header.n_ctx) {
    return fail("{}: {} tokens for {} chunks of {}", path, tokens.size(), header.n_chunks, header.n_ctx);
  }
  LogprobWriter w;
  w.path_ = path;
  w.temp_path_ = path + ".tmp";
  w.header_ = header;
  w.file_.reset(std::fopen(w.temp_path_.c_str(), "wb"));
  if (!w.file_) return fail("{}: cannot create the file: {}", w.temp_path_, std::strerror(errno));
  const uint32_t fields[3] = {header.n_ctx, header.n_vocab, header.n_chunks};
  if (!write_all(w.file_.get(), kMagic, sizeof(kMagic)) || !write_all(w.file_.get(), fields, sizeof(fields)) ||
      !write_all(w.file_.get(), tokens.data(), tokens.size_bytes())) {
    return fail("{}: write failed: {}", w.temp_path_, std::strerror(errno));
  }
  return w;
}

Status LogprobWriter::add_chunk(std::span<const float> logits) {
  const size_t n_vocab = header_.n_vocab;
  if (logits.size() != static_cast<size_t>(header_.n_ctx) * n_vocab || written_ >= header_.n_chunks) {
    return fail("{}: chunk {} does not fit the header ({} logits)", path_, written_ + 1, logits.size());
  }
  std::vector<float> lp(n_vocab);
  row_.resize(n_vocab);
  for (size_t i = header_.n_ctx / 2; i + 1 < header_.n_ctx; ++i) {
    log_softmax(logits.subspan(i * n_vocab, n_vocab), lp);
    std::transform(lp.begin(), lp.end(), row_.begin(), f32_to_f16);
    if (!write_all(file_.get(), row_.data(), row_.size() * sizeof(f16_t))) {
      return fail("{}: write failed: {}", temp_path_, std::strerror(errno));
    }
  }
  written_ += 1;
  return {};
}

Status LogprobWriter::finish() {
  if (written_ != header_.n_chunks) return fail("{}: {} of {} chunks written", path_, written_, header_.n_chunks);
  if (std::fflush(file_.get()) != 0) return fail("{}: write failed: {}", temp_path_, std::strerror(errno));
  file_.reset();
  std::error_code ec;
  std::filesystem::rename(temp_path_, path_, ec);
  if (ec) return fail("{}: cannot rename {} to it: {}", path_, temp_path_, ec.message());
  return {};
}

Result<LogprobReader> LogprobReader::open(const std::string& path) {
  LogprobReader r;
  r.path_ = path;
  r.file_.reset(std::fopen(path.c_str(), "rb"));
  if (!r.file_) return fail("{}: cannot open the file: {}", path, std::strerror(errno));
  char magic[8];
  uint32_t fields[3];
  if (!read_all(r.file_.get(), magic, sizeof(magic)) || std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    return fail("{}: not a log-probability file of `perplexity --kl-divergence-base`", path);
  }
  if (!read_all(r.file_.get(), fields, sizeof(fields))) return fail("{}: the header is cut short", path);
  r.header_ = {fields[0], fields[1], fields[2]};
  const LogprobHeader& h = r.header_;
  if (h.n_ctx < 2 || h.n_ctx > (1u << 20) || h.n_vocab == 0 || h.n_vocab > (1u << 24) || h.n_chunks == 0 ||
      h.n_chunks > (1u << 20)) {
    return fail("{}: implausible header (n_ctx {}, n_vocab {}, {} chunks)", path, h.n_ctx, h.n_vocab, h.n_chunks);
  }
  r.tokens_.resize(static_cast<size_t>(h.n_chunks) * h.n_ctx);
  if (!read_all(r.file_.get(), r.tokens_.data(), r.tokens_.size() * sizeof(int32_t))) {
    return fail("{}: the tokens are cut short", path);
  }
  r.data_offset_ = kHeaderBytes + r.tokens_.size() * sizeof(int32_t);
  const uint64_t expected = r.data_offset_ + static_cast<uint64_t>(h.n_chunks) * h.scored_per_chunk() * h.n_vocab * 2;
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec || size != expected) return fail("{}: {} bytes, the header says {}", path, size, expected);
  for (size_t i = 0; i < r.tokens_.size(); ++i) {
    if (r.tokens_[i] < 0 || static_cast<uint32_t>(r.tokens_[i]) >= h.n_vocab) {
      return fail("{}: token {} is {}, outside the vocabulary of {}", path, i, r.tokens_[i], h.n_vocab);
    }
  }
  return r;
}

Status LogprobReader::read_chunk(uint32_t c, std::vector<f16_t>& out) {
  const uint64_t per_chunk = static_cast<uint64_t>(header_.scored_per_chunk()) * header_.n_vocab;
  out.resize(per_chunk);
  const uint64_t offset = data_offset_ + c * per_chunk * sizeof(f16_t);
  if (c >= header_.n_chunks || std::fseek(file_.get(), static_cast<long>(offset), SEEK_SET) != 0 ||
      !read_all(file_.get(), out.data(), per_chunk * sizeof(f16_t))) {
    return fail("{}: cannot read chunk {}", path_, c + 1);
  }
  return {};
}

}  // namespace infertune
