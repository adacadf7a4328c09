#include "etscope/store/store.h"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "db.h"
#include "etscope/core/event_names.h"
#include "etscope/core/stats.h"
#include "etscope/core/text.h"
#include "etscope/core/version.h"
#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/blob.h"
#include "etscope/findings/findings.h"
#include "etscope/formats/training.h"
#include "etscope/inspect/profile.h"
#include "etscope/inspect/program_description.h"
#include "schema.h"

#ifndef ETSCOPE_GIT_COMMIT
#define ETSCOPE_GIT_COMMIT ""
#endif

namespace etscope::store {
namespace {

std::string sha256_hex(std::span<const uint8_t> bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// Text for a REAL column: round-trips the double.
std::string real(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::optional<double> as_double(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return std::strtod(s->c_str(), nullptr);
}

int64_t as_int(const std::optional<std::string>& s) { return s ? std::strtoll(s->c_str(), nullptr, 10) : 0; }

std::string text(const std::optional<std::string>& s) { return s.value_or(""); }

bool is_postgres_uri(const std::string& s) { return s.rfind("postgresql://", 0) == 0 || s.rfind("postgres://", 0) == 0; }

// A program's identity in the store: the SHA-256 of its bytes (for a .bpte, of the program inside).
std::string program_hash(const Program& program) { return sha256_hex(program.blob->bytes()); }

// Whether `ref` can be a hash prefix: hex digits only, and long enough that a short name made of
// hex letters ("add", "cafe") is not taken for one.
bool looks_like_hash_prefix(const std::string& ref) {
  constexpr size_t kMinPrefix = 6;
  return ref.size() >= kMinPrefix && std::all_of(ref.begin(), ref.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}


}  // namespace

std::string program_label(const StoredProgram& p) { return p.name + " (sha256 " + p.hash.substr(0, 12) + ")"; }

Environment this_machine() {
  Environment e;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) e.host = host;
  utsname u{};
  if (uname(&u) == 0) {
    e.os = std::string(u.sysname) + " " + u.release;
    e.device = u.machine;
  }
  e.etscope_version = etscope_version();
  e.git_commit = ETSCOPE_GIT_COMMIT;
  return e;
}

struct Store::Impl {
  std::unique_ptr<Db> db;
  std::string location;

  Result<int64_t> insert_program(const Program& program, const std::string& name) {
    const std::string hash = program_hash(program);
    ETSCOPE_ASSIGN_OR_RETURN(Rows found, db->query("SELECT id FROM programs WHERE hash = $1", {hash}));
    if (!found.rows.empty()) return as_int(found.rows[0][0]);
    nlohmann::json methods = nlohmann::json::array(), operators = nlohmann::json::object();
    for (const ExecutionPlan& plan : program.plans) {
      if (is_training_marker(plan.name)) continue;
      methods.push_back(plan.name);
      for (const Operator& op : plan.operators) operators[op.qualified_name()] = true;
    }
    nlohmann::json op_list = nlohmann::json::array();
    for (const auto& [op, unused] : operators.items()) op_list.push_back(op);
    ETSCOPE_ASSIGN_OR_RETURN(Rows id, db->query("INSERT INTO programs (hash, name, methods, operators, bytes) VALUES ($1, $2, $3, $4, $5) RETURNING id",
                                                {hash, name, methods.dump(), op_list.dump(), std::to_string(program.blob->bytes().size())}));
    const int64_t program_id = as_int(id.rows.at(0)[0]);
    for (const ExecutionPlan& plan : program.plans) {
      if (is_training_marker(plan.name)) continue;
      for (size_t a = 1; a < plan.non_const_buffer_sizes.size(); ++a) {
        ETSCOPE_TRY(db->exec("INSERT INTO memory_plans (program_id, method, arena, bytes) VALUES ($1, $2, $3, $4)",
                             {std::to_string(program_id), plan.name, std::to_string(a), std::to_string(plan.non_const_buffer_sizes[a])}));
      }
    }
    return program_id;
  }

  // Multi-row INSERTs of `width` columns, `rows` given flat, in chunks (parameter limits).
  Status insert_many(const std::string& head, size_t width, const std::vector<Param>& flat) {
    const size_t per_chunk = std::max<size_t>(1, 600 / width);
    const size_t total = flat.size() / width;
    for (size_t start = 0; start < total; start += per_chunk) {
      const size_t n = std::min(per_chunk, total - start);
      std::string sql = head + " VALUES ";
      std::vector<Param> params(flat.begin() + static_cast<long>(start * width), flat.begin() + static_cast<long>((start + n) * width));
      for (size_t r = 0; r < n; ++r) {
        sql += r ? ",(" : "(";
        for (size_t c = 0; c < width; ++c) sql += (c ? ",$" : "$") + std::to_string(r * width + c + 1);
        sql += ")";
      }
      ETSCOPE_TRY(db->exec(sql, params));
    }
    return ok_status();
  }

  Result<ImportResult> add(const ImportRequest& req) {
    std::shared_ptr<const Blob> blob = req.etdump_bytes;
    if (!blob) {
      ETSCOPE_ASSIGN_OR_RETURN(blob, Blob::open_file(req.etdump));
    }
    const std::string hash = sha256_hex(blob->bytes());
    ETSCOPE_ASSIGN_OR_RETURN(Rows existing, db->query("SELECT id FROM runs WHERE content_hash = $1", {hash}));
    if (!existing.rows.empty()) return ImportResult{as_int(existing.rows[0][0]), false, {}};

    // Everything is read and derived before the transaction starts.
    inspect::ProfileFiles files;
    files.etdump_bytes = blob;
    files.etrecord = req.etrecord;
    files.program = req.pte;
    files.options.method = req.method;
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Profile profile, inspect::open_profile(files));
    const inspect::RunSamples samples = inspect::run_samples(*profile.inspector);
    if (samples.method_ms.empty() && samples.operators.empty()) {
      return Error(ErrorCode::kInvalidArgument, blob->name() + ": the ETDump holds no timed execution to store");
    }
    // A run timed with intermediate logging on is marked (a tag) so that compare can say so.
    std::vector<std::string> warnings;
    bool logged = false;
    for (const inspect::ProfileWarning& w : profile.warnings) {
      if (w.kind != inspect::ProfileWarning::Kind::kLoggedTimings) continue;
      logged = true;
      warnings.push_back(w.text + " (stored with the tag " + std::string(kLoggingTag) + "=intermediate)");
    }
    const Program* program = profile.program.get();
    // The run's findings, kept with it; a program whose findings cannot be derived is still
    // stored (the analysis is advice, the run is data), with a warning.
    std::vector<findings::Finding> run_findings;
    {
      findings::Inputs in;
      in.program = program;
      in.record = profile.record.get();
      in.inspector = profile.inspector.get();
      in.method = profile.method;
      in.engine = profile.engine.known() ? profile.engine.text() : "";
      auto report = findings::analyse(in);
      if (report.ok()) {
        run_findings = std::move(report->findings);
      } else {
        warnings.push_back("no findings stored: " + report.error().message());
      }
    }
    const std::string file = req.etdump_bytes ? blob->name() : std::filesystem::path(req.etdump).filename().string();

    ETSCOPE_TRY(db->begin());
    auto done = [&]() -> Result<ImportResult> {
      ETSCOPE_TRY(db->lock_for_write());
      // Another process may have stored the same bytes while this one read them.
      ETSCOPE_ASSIGN_OR_RETURN(Rows again, db->query("SELECT id FROM runs WHERE content_hash = $1", {hash}));
      if (!again.rows.empty()) return ImportResult{as_int(again.rows[0][0]), false, {}};
      Param program_id;
      if (program) {
        const std::string name = std::filesystem::path(req.pte).filename().string();
        ETSCOPE_ASSIGN_OR_RETURN(int64_t id, insert_program(*program, name));
        program_id = std::to_string(id);
      }
      const Environment& e = req.environment;
      const size_t executions = samples.method_ms.empty() ? (samples.operators.empty() ? 0 : samples.operators[0].samples_ms.size())
                                                          : samples.method_ms.size();
      // The engine is the dump's own word (its engine marker); NULL when it has none.
      const inspect::EngineIdentity& engine = profile.engine;
      ETSCOPE_ASSIGN_OR_RETURN(
          Rows run, db->query("INSERT INTO runs (content_hash, program_id, method, source, file, host, device, os, backend, threads, "
                              "etscope_version, git_commit, created_at, executions, method_median_ms, method_p90_ms, engine, "
                              "engine_version) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18) RETURNING id",
                              {hash, program_id, profile.method, req.source, file, e.host, e.device, e.os, e.backend,
                               std::to_string(e.threads), e.etscope_version, e.git_commit, utc_now(), std::to_string(executions),
                               samples.method_ms.empty() ? Param() : Param(real(median(samples.method_ms))),
                               samples.method_ms.empty() ? Param() : Param(real(percentile(samples.method_ms, 90))),
                               engine.known() ? Param(engine.name) : Param(), engine.known() ? Param(engine.version) : Param()}));
      const std::string run_id = text(run.rows.at(0)[0]);
      std::vector<Param> tags;
      std::map<std::string, std::string> all_tags = req.tags;
      if (logged) all_tags.emplace(std::string(kLoggingTag), "intermediate");
      for (const auto& [k, v] : all_tags) tags.insert(tags.end(), {run_id, k, v});
      ETSCOPE_TRY(insert_many("INSERT INTO run_tags (run_id, key, value)", 3, tags));
      // Operators (the method total as op -1) with their aggregates, and every sample.
      std::vector<Param> ops, raw;
      auto add_op = [&](int64_t op, const std::string& name, int32_t chain, int32_t instruction, std::optional<int64_t> handle,
                        int32_t occurrence, const std::vector<double>& s) {
        double mean = 0;
        for (double v : s) mean += v;
        mean = s.empty() ? 0 : mean / static_cast<double>(s.size());
        const auto [mn, mx] = s.empty() ? std::pair<double, double>{0, 0}
                                        : std::pair<double, double>{*std::min_element(s.begin(), s.end()), *std::max_element(s.begin(), s.end())};
        ops.insert(ops.end(), {run_id, std::to_string(op), name, std::to_string(chain), std::to_string(instruction),
                               handle ? Param(std::to_string(*handle)) : Param(), std::to_string(occurrence), std::to_string(s.size()),
                               real(median(s)), real(mean), real(mn), real(mx), real(percentile(s, 90))});
        for (size_t k = 0; k < s.size(); ++k) raw.insert(raw.end(), {run_id, std::to_string(op), std::to_string(k), real(s[k])});
      };
      if (!samples.method_ms.empty()) add_op(-1, std::string(events::kMethodExecute), 0, -1, std::nullopt, 0, samples.method_ms);
      for (size_t i = 0; i < samples.operators.size(); ++i) {
        const auto& o = samples.operators[i];
        add_op(static_cast<int64_t>(i), o.name, o.chain, o.instruction, o.debug_handle, o.occurrence, o.samples_ms);
      }
      ETSCOPE_TRY(insert_many("INSERT INTO operators (run_id, op, name, chain, instruction, debug_handle, occurrence, samples, "
                              "median_ms, mean_ms, min_ms, max_ms, p90_ms)", 13, ops));
      ETSCOPE_TRY(insert_many("INSERT INTO samples (run_id, op, execution, ms)", 4, raw));
      auto optional_real = [](const std::optional<double>& v) { return v && std::isfinite(*v) ? Param(real(*v)) : Param(); };
      // A curve's columns may be shorter than its loss (a run that failed mid-step): NULLs.
      auto at = [](const auto& column, size_t i) -> std::optional<double> {
        if (i >= column.size()) return std::nullopt;
        return std::optional<double>(column[i]);
      };
      const inspect::Curve& c = req.curve;
      std::vector<Param> curve;
      for (size_t i = 0; i < c.loss.size(); ++i) {
        curve.insert(curve.end(), {run_id, std::to_string(c.first_step + static_cast<int64_t>(i)), optional_real(c.loss[i]),
                                   optional_real(i < c.accuracy.size() ? c.accuracy[i] : std::nullopt), optional_real(at(c.step_ms, i)),
                                   optional_real(at(c.forward_backward_ms, i)), optional_real(at(c.optimizer_ms, i))});
      }
      ETSCOPE_TRY(insert_many("INSERT INTO curves (run_id, step, loss, accuracy, step_ms, forward_backward_ms, optimizer_ms)", 7, curve));
      std::vector<Param> validation;
      for (const inspect::ValidationPoint& v : c.val) {
        validation.insert(validation.end(), {run_id, std::to_string(v.step), optional_real(v.loss), optional_real(v.accuracy)});
      }
      ETSCOPE_TRY(insert_many("INSERT INTO validation (run_id, step, loss, accuracy)", 4, validation));
      std::vector<Param> outputs;
      for (const OutputSummary& o : req.outputs) {
        outputs.insert(outputs.end(), {run_id, std::to_string(o.index), o.dtype, o.shape, optional_real(o.min), optional_real(o.max), optional_real(o.mean)});
      }
      ETSCOPE_TRY(insert_many("INSERT INTO outputs (run_id, output, dtype, shape, min, max, mean)", 7, outputs));
      // A gap may be infinite (an SNR of outputs equal bit for bit, an ULP count past the range):
      // stored as such; a NaN gap (nothing to measure) as NULL.
      auto gap_real = [&](const std::optional<double>& v) -> Param {
        if (!v || std::isnan(*v)) return std::nullopt;
        if (std::isinf(*v)) return std::string(db->infinity(*v < 0));
        return real(*v);
      };
      std::vector<Param> gaps;
      for (const GapPoint& g : req.gaps) {
        gaps.insert(gaps.end(), {run_id, std::to_string(g.row), g.name, g.metric, gap_real(g.gap)});
      }
      ETSCOPE_TRY(insert_many("INSERT INTO numeric_gaps (run_id, op, name, metric, gap)", 5, gaps));
      std::vector<Param> found;
      for (size_t i = 0; i < run_findings.size(); ++i) {
        const findings::Finding& f = run_findings[i];
        const bool placed = !f.where.empty() && f.where[0].instruction >= 0;
        found.insert(found.end(), {run_id, std::to_string(i), f.rule, findings::to_string(f.severity), f.what,
                                   placed ? Param(std::to_string(f.where[0].chain)) : Param(),
                                   placed ? Param(std::to_string(f.where[0].instruction)) : Param(),
                                   f.where.empty() ? Param() : Param(f.where[0].op), optional_real(f.time_ms),
                                   optional_real(f.share), std::to_string(f.bytes), f.advice});
      }
      ETSCOPE_TRY(insert_many("INSERT INTO findings (run_id, rank, rule, severity, what, chain, instruction, op, time_ms, share, "
                              "bytes, advice)", 12, found));
      ETSCOPE_TRY(db->commit());
      return ImportResult{std::strtoll(run_id.c_str(), nullptr, 10), true, warnings};
    }();
    if (!done.ok() || !done->created) db->rollback();
    return done;
  }

  // Tags of the given runs, one query.
  Result<std::map<int64_t, std::map<std::string, std::string>>> tags_of(const std::vector<int64_t>& ids) {
    std::map<int64_t, std::map<std::string, std::string>> out;
    if (ids.empty()) return out;
    const int64_t lo = *std::min_element(ids.begin(), ids.end()), hi = *std::max_element(ids.begin(), ids.end());
    ETSCOPE_ASSIGN_OR_RETURN(Rows rows, db->query("SELECT run_id, key, value FROM run_tags WHERE run_id BETWEEN $1 AND $2",
                                                  {std::to_string(lo), std::to_string(hi)}));
    for (const Row& t : rows.rows) out[as_int(t[0])][text(t[1])] = text(t[2]);
    return out;
  }

  // A v_runs-shaped row into a RunRow, moving its strings (listing 10,000 runs is mostly copies).
  static RunRow row_of(Row& r) {
    auto take = [&](size_t i) { return r[i] ? std::move(*r[i]) : std::string(); };
    RunRow out;
    out.id = as_int(r[0]);
    out.created_at = take(1);
    out.source = take(2);
    out.file = take(3);
    out.program = take(4);
    out.program_hash = take(5);
    out.method = take(6);
    out.environment.host = take(7);
    out.environment.device = take(8);
    out.environment.os = take(9);
    out.environment.backend = take(10);
    out.environment.threads = as_int(r[11]);
    out.environment.etscope_version = take(12);
    out.environment.git_commit = take(13);
    out.executions = as_int(r[14]);
    out.median_ms = as_double(r[15]);
    out.engine = {take(16), take(17)};
    return out;
  }
};

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;
const std::string& Store::location() const { return impl_->location; }
const char* Store::backend() const { return impl_->db->backend(); }

std::string Store::default_location() {
  if (const char* s = std::getenv("ETSCOPE_STORE"); s != nullptr && *s != '\0') return s;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x != nullptr && *x != '\0') return std::string(x) + "/etscope/runs.sqlite";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.local/share/etscope/runs.sqlite";
}

Result<std::unique_ptr<Store>> Store::open(const std::string& location, OpenMode mode) {
  auto impl = std::make_unique<Impl>();
  impl->location = location;
  const bool create = mode == OpenMode::kCreate;
  if (is_postgres_uri(location)) {
    ETSCOPE_ASSIGN_OR_RETURN(impl->db, open_postgres(location));
  } else {
    struct stat st{};
    const bool exists = ::stat(location.c_str(), &st) == 0;
    if (!exists && !create) {
      // A typo in --store must not leave an empty database behind and list nothing.
      return Error(ErrorCode::kNotFound, location + ": no run store here (run, train or debug --store, or etscope store add, make one)");
    }
    if (!exists) {
      const std::filesystem::path parent = std::filesystem::path(location).parent_path();
      std::error_code ec;
      if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    }
    if (exists && !S_ISREG(st.st_mode)) {
      return Error(ErrorCode::kWrongKind, location + ": not a regular file, so not an etscope store");
    }
    // Opening an empty file as a store would write SQLite's header (WAL mode) into it.
    if (exists && st.st_size == 0 && !create) return Error(ErrorCode::kNotFound, location + ": holds no etscope run store (an empty file)");
    ETSCOPE_ASSIGN_OR_RETURN(impl->db, open_sqlite(location));
  }
  ETSCOPE_TRY(migrate(*impl->db, location, create));
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

Result<ImportResult> Store::add(const ImportRequest& request) { return impl_->add(request); }

namespace {
constexpr const char* kRunColumns =
    "SELECT r.id, r.created_at, r.source, r.file, COALESCE(p.name, ''), COALESCE(p.hash, ''), r.method, r.host, r.device, r.os, "
    "r.backend, r.threads, r.etscope_version, r.git_commit, r.executions, r.method_median_ms, r.engine, r.engine_version "
    "FROM runs r LEFT JOIN programs p ON p.id = r.program_id";
}  // namespace

Result<std::vector<RunRow>> Store::runs(const RunFilter& f) {
  std::string sql = kRunColumns;
  std::vector<Param> params;
  std::vector<std::string> where;
  if (!f.program.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<StoredProgram> programs, this->programs(f.program));
    if (programs.empty()) return std::vector<RunRow>{};
    std::string ids;
    for (const StoredProgram& p : programs) {
      params.push_back(std::to_string(p.id));
      ids += (ids.empty() ? "$" : ",$") + std::to_string(params.size());
    }
    where.push_back("r.program_id IN (" + ids + ")");
  }
  for (const auto& [k, v] : f.tags) {
    params.push_back(k);
    params.push_back(v);
    where.push_back("EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.key = $" + std::to_string(params.size() - 1) +
                    " AND t.value = $" + std::to_string(params.size()) + ")");
  }
  if (!f.since.empty()) {
    params.push_back(f.since);
    where.push_back("r.created_at >= $" + std::to_string(params.size()));
  }
  for (size_t i = 0; i < where.size(); ++i) sql += (i ? " AND " : " WHERE ") + where[i];
  sql += " ORDER BY r.id DESC";
  if (f.limit > 0) sql += " LIMIT " + std::to_string(f.limit);
  ETSCOPE_ASSIGN_OR_RETURN(Rows rows, impl_->db->query(sql, params));
  std::vector<RunRow> out;
  std::vector<int64_t> ids;
  out.reserve(rows.rows.size());
  for (Row& r : rows.rows) {
    out.push_back(Impl::row_of(r));
    ids.push_back(out.back().id);
  }
  ETSCOPE_ASSIGN_OR_RETURN(auto tags, impl_->tags_of(ids));
  for (RunRow& r : out) r.tags = std::move(tags[r.id]);
  return out;
}

Result<RunRow> Store::run(int64_t id) {
  ETSCOPE_ASSIGN_OR_RETURN(Rows rows, impl_->db->query(std::string(kRunColumns) + " WHERE r.id = $1", {std::to_string(id)}));
  if (rows.rows.empty()) return Error(ErrorCode::kNotFound, impl_->location + ": no run " + std::to_string(id));
  RunRow row = Impl::row_of(rows.rows[0]);
  ETSCOPE_ASSIGN_OR_RETURN(auto tags, impl_->tags_of({row.id}));
  row.tags = std::move(tags[row.id]);
  return row;
}

Result<int64_t> Store::resolve(const std::string& ref, const Environment& environment) {
  if (!ref.empty() && std::all_of(ref.begin(), ref.end(), [](char c) { return c >= '0' && c <= '9'; }) && ref.size() < 19) {
    ETSCOPE_ASSIGN_OR_RETURN(RunRow r, run(std::strtoll(ref.c_str(), nullptr, 10)));
    return r.id;
  }
  const size_t eq = ref.find('=');
  if (eq != std::string::npos && eq > 0 && !std::filesystem::exists(ref)) {
    RunFilter f;
    f.tags[ref.substr(0, eq)] = ref.substr(eq + 1);
    f.limit = 1;
    ETSCOPE_ASSIGN_OR_RETURN(auto rows, runs(f));
    if (rows.empty()) return Error(ErrorCode::kNotFound, impl_->location + ": no run tagged " + ref);
    return rows[0].id;
  }
  ImportRequest req;
  req.etdump = ref;
  req.environment = environment;
  ETSCOPE_ASSIGN_OR_RETURN(ImportResult r, add(req));
  return r.run_id;
}

Result<std::vector<int64_t>> Store::resolve_runs(const std::string& ref, const Environment& environment) {
  // A file whose name has a comma is itself.
  std::vector<std::string> parts;
  if (std::filesystem::exists(ref)) {
    parts.push_back(ref);
  } else {
    for (size_t start = 0;;) {
      const size_t comma = ref.find(',', start);
      parts.push_back(ref.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  std::vector<int64_t> out;
  auto put = [&](int64_t id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  };
  for (const std::string& part : parts) {
    if (part.empty()) return Error(ErrorCode::kInvalidArgument, "'" + ref + "': an empty run between commas");
    ETSCOPE_ASSIGN_OR_RETURN(int64_t id, resolve(part, environment));
    const size_t eq = part.find('=');
    const bool tag = eq != std::string::npos && eq > 0 && !std::filesystem::exists(part);
    if (!tag) {
      put(id);
      continue;
    }
    ETSCOPE_ASSIGN_OR_RETURN(RunRow row, run(id));
    auto set = row.tags.find(std::string(kSetTag));
    if (set == row.tags.end()) {
      put(id);
      continue;
    }
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> members, set_runs(set->second));
    for (int64_t m : members) put(m);
  }
  return out;
}

Status Store::tag(int64_t run_id, const std::string& key, const std::string& value) {
  ETSCOPE_TRY(run(run_id));
  const std::string id = std::to_string(run_id);
  ETSCOPE_TRY(impl_->db->exec("DELETE FROM run_tags WHERE run_id = $1 AND key = $2", {id, key}));
  return impl_->db->exec("INSERT INTO run_tags (run_id, key, value) VALUES ($1, $2, $3)", {id, key, value});
}

Result<std::vector<int64_t>> Store::set_runs(const std::string& set) {
  ETSCOPE_ASSIGN_OR_RETURN(Rows rows, impl_->db->query("SELECT run_id FROM run_tags WHERE key = $1 AND value = $2 ORDER BY run_id",
                                                       {std::string(kSetTag), set}));
  std::vector<int64_t> out;
  for (const Row& r : rows.rows) out.push_back(as_int(r[0]));
  return out;
}

Result<std::vector<int64_t>> Store::previous_set(const std::string& set) {
  ETSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> members, set_runs(set));
  if (members.empty()) return std::vector<int64_t>{};
  ETSCOPE_ASSIGN_OR_RETURN(RunRow first, run(members.front()));
  // Every older run of a set, newest first; the first of the same program, method and engine
  // names the set.
  ETSCOPE_ASSIGN_OR_RETURN(Rows rows, impl_->db->query("SELECT run_id, value FROM run_tags WHERE key = $1 AND run_id < $2 "
                                                       "ORDER BY run_id DESC",
                                                       {std::string(kSetTag), std::to_string(members.front())}));
  for (const Row& r : rows.rows) {
    ETSCOPE_ASSIGN_OR_RETURN(RunRow other, run(as_int(r[0])));
    if (other.program_hash != first.program_hash || other.method != first.method || !(other.engine == first.engine)) {
      continue;
    }
    return set_runs(text(r[1]));
  }
  return std::vector<int64_t>{};
}

Result<inspect::RunSamples> Store::samples(int64_t run_id) {
  const std::string id = std::to_string(run_id);
  ETSCOPE_ASSIGN_OR_RETURN(Rows ops, impl_->db->query("SELECT op, name, chain, instruction, debug_handle, occurrence FROM operators "
                                                      "WHERE run_id = $1 ORDER BY op", {id}));
  ETSCOPE_ASSIGN_OR_RETURN(Rows raw, impl_->db->query("SELECT op, ms FROM samples WHERE run_id = $1 ORDER BY op, execution", {id}));
  inspect::RunSamples out;
  std::map<int64_t, std::vector<double>*> by_op;
  for (const Row& r : ops.rows) {
    const int64_t op = as_int(r[0]);
    if (op < 0) {
      by_op[op] = &out.method_ms;
      continue;
    }
    inspect::OperatorSamples s;
    s.name = text(r[1]);
    s.chain = static_cast<int32_t>(as_int(r[2]));
    s.instruction = static_cast<int32_t>(as_int(r[3]));
    if (r[4]) s.debug_handle = as_int(r[4]);
    s.occurrence = static_cast<int32_t>(as_int(r[5]));
    out.operators.push_back(std::move(s));
  }
  // Pointers into out.operators are taken after it stops growing.
  size_t k = 0;
  for (const Row& r : ops.rows) {
    if (as_int(r[0]) >= 0) by_op[as_int(r[0])] = &out.operators[k++].samples_ms;
  }
  for (const Row& r : raw.rows) {
    auto it = by_op.find(as_int(r[0]));
    if (it != by_op.end()) it->second->push_back(as_double(r[1]).value_or(0));
  }
  return out;
}

Result<inspect::Curve> Store::curve(int64_t run_id) {
  const std::string id = std::to_string(run_id);
  ETSCOPE_ASSIGN_OR_RETURN(Rows run, impl_->db->query("SELECT id FROM runs WHERE id = $1", {id}));
  if (run.rows.empty()) return Error(ErrorCode::kNotFound, impl_->location + ": no run " + id);
  ETSCOPE_ASSIGN_OR_RETURN(Rows rows, impl_->db->query("SELECT step, loss, accuracy, step_ms, forward_backward_ms, optimizer_ms "
                                                       "FROM curves WHERE run_id = $1 ORDER BY step", {id}));
  ETSCOPE_ASSIGN_OR_RETURN(Rows val, impl_->db->query("SELECT step, loss, accuracy FROM validation WHERE run_id = $1 ORDER BY step", {id}));
  inspect::Curve c;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  bool split = !rows.rows.empty();
  for (const Row& r : rows.rows) split = split && r[4] && r[5];
  for (size_t i = 0; i < rows.rows.size(); ++i) {
    const Row& r = rows.rows[i];
    if (i == 0) c.first_step = as_int(r[0]);
    c.loss.push_back(as_double(r[1]).value_or(nan));  // a non-finite loss was stored as NULL
    c.accuracy.push_back(as_double(r[2]));
    c.step_ms.push_back(as_double(r[3]).value_or(nan));
    if (split) {
      c.forward_backward_ms.push_back(*as_double(r[4]));
      c.optimizer_ms.push_back(*as_double(r[5]));
    }
  }
  for (const Row& r : val.rows) c.val.push_back({as_int(r[0]), as_double(r[1]).value_or(nan), as_double(r[2])});
  return c;
}

namespace {

std::vector<StoredFinding> findings_of(const Rows& rows, size_t first = 0) {
  std::vector<StoredFinding> out;
  for (const Row& r : rows.rows) {
    StoredFinding f;
    f.rank = as_int(r[first]);
    f.rule = text(r[first + 1]);
    f.severity = text(r[first + 2]);
    f.what = text(r[first + 3]);
    if (r[first + 4]) f.chain = as_int(r[first + 4]);
    if (r[first + 5]) f.instruction = as_int(r[first + 5]);
    f.op = text(r[first + 6]);
    f.time_ms = as_double(r[first + 7]);
    f.share = as_double(r[first + 8]);
    f.bytes = as_int(r[first + 9]);
    f.advice = text(r[first + 10]);
    out.push_back(std::move(f));
  }
  return out;
}

constexpr const char* kFindingColumns = "f.rank, f.rule, f.severity, f.what, f.chain, f.instruction, f.op, f.time_ms, f.share, f.bytes, f.advice";

}  // namespace

Result<std::vector<StoredFinding>> Store::findings(int64_t run_id) {
  const std::string id = std::to_string(run_id);
  ETSCOPE_ASSIGN_OR_RETURN(Rows run, impl_->db->query("SELECT id FROM runs WHERE id = $1", {id}));
  if (run.rows.empty()) return Error(ErrorCode::kNotFound, impl_->location + ": no run " + id);
  ETSCOPE_ASSIGN_OR_RETURN(Rows rows, impl_->db->query(std::string("SELECT ") + kFindingColumns +
                                                           " FROM findings f WHERE f.run_id = $1 ORDER BY f.rank", {id}));
  return findings_of(rows);
}

Result<std::vector<FindingsPoint>> Store::findings_history(const std::string& program) {
  // The runs (and the program's resolution, with its refusals) exactly as history() has them.
  ETSCOPE_ASSIGN_OR_RETURN(std::vector<HistoryPoint> runs, history(program, ""));
  std::vector<FindingsPoint> out;
  out.reserve(runs.size());
  for (const HistoryPoint& h : runs) {
    const std::vector<StoredFinding>* before = out.empty() ? nullptr : &out.back().findings;
    FindingsPoint p;
    p.run_id = h.run_id;
    p.created_at = h.created_at;
    p.engine = h.engine;
    ETSCOPE_ASSIGN_OR_RETURN(p.findings, findings(h.run_id));
    std::set<std::string> now, then;
    for (const StoredFinding& f : p.findings) now.insert(f.key());
    if (before) {
      for (const StoredFinding& f : *before) then.insert(f.key());
      for (const StoredFinding& f : *before) {
        if (!now.contains(f.key())) p.gone.push_back(f);
      }
    }
    for (size_t i = 0; i < p.findings.size(); ++i) {
      if (!then.contains(p.findings[i].key())) p.appeared.push_back(i);
    }
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<StoredProgram>> Store::programs(const std::string& ref) {
  std::string where;
  std::vector<Param> params;
  std::error_code ec;
  if (std::filesystem::is_regular_file(ref, ec)) {
    // A file is the program it holds, whatever it is called now or was called when stored.
    ETSCOPE_ASSIGN_OR_RETURN(Program program, inspect::load_program(ref));
    where = "p.hash = $1";
    params.push_back(program_hash(program));
  } else if (looks_like_hash_prefix(ref)) {
    std::string prefix = ref;
    std::transform(prefix.begin(), prefix.end(), prefix.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    where = "p.name = $1 OR p.hash LIKE $2";
    params = {ref, prefix + "%"};
  } else {
    where = "p.name = $1";
    params.push_back(ref);
  }
  ETSCOPE_ASSIGN_OR_RETURN(Rows rows, impl_->db->query("SELECT p.id, p.hash, p.name, (SELECT COUNT(*) FROM runs r WHERE r.program_id = p.id) AS n "
                                                       "FROM programs p WHERE " + where + " ORDER BY n DESC, p.id", params));
  std::vector<StoredProgram> out;
  for (const Row& r : rows.rows) out.push_back({as_int(r[0]), text(r[1]), text(r[2]), as_int(r[3])});
  return out;
}

Result<std::vector<HistoryPoint>> Store::history(const std::string& program, const std::string& op) {
  ETSCOPE_ASSIGN_OR_RETURN(std::vector<StoredProgram> programs, this->programs(program));
  if (programs.empty()) {
    std::error_code ec;
    return Error(ErrorCode::kNotFound, std::filesystem::is_regular_file(program, ec)
                                           ? program + ": no stored run of this program (the store keeps programs by their SHA-256)"
                                           : impl_->location + ": no stored run of a program named '" + program + "'");
  }
  if (programs.size() > 1) {
    std::string list;
    for (const StoredProgram& p : programs) list += (list.empty() ? "" : ", ") + program_label(p) + " " + count_text(static_cast<uint64_t>(p.runs), "run");
    return Error(ErrorCode::kInvalidArgument, "'" + program + "' names " + std::to_string(programs.size()) +
                                                  " different stored programs, whose runs are no one trend: " + list +
                                                  "; give the program file or a longer hash prefix");
  }
  std::string sql =
      "SELECT r.id, r.created_at, o.median_ms, o.samples, r.engine, r.engine_version FROM runs r "
      "JOIN operators o ON o.run_id = r.id WHERE r.program_id = $1 AND ";
  std::vector<Param> params{std::to_string(programs[0].id)};
  if (op.empty()) {
    sql += "o.op = -1";
  } else {
    // "convolution.out" finds "native_call_convolution.out"; the first such operator of each run.
    sql += "o.op = (SELECT MIN(o2.op) FROM operators o2 WHERE o2.run_id = r.id AND o2.op >= 0 AND (o2.name = $2 OR o2.name = $3))";
    params.push_back(op);
    params.push_back(std::string(events::kNativeCallPrefix) + op);
  }
  sql += " ORDER BY r.id";
  ETSCOPE_ASSIGN_OR_RETURN(Rows rows, impl_->db->query(sql, params));
  std::vector<HistoryPoint> out;
  for (const Row& r : rows.rows) {
    out.push_back({as_int(r[0]), text(r[1]), as_double(r[2]).value_or(0), as_int(r[3]), {text(r[4]), text(r[5])}});
  }
  return out;
}

Result<QueryResult> Store::sql(const std::string& statement) {
  std::string s = statement;
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.back())) || s.back() == ';')) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  std::string head = s.substr(start, 6);
  std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (head.rfind("SELECT", 0) != 0 && head.rfind("WITH", 0) != 0 && head.rfind("VALUES", 0) != 0) {
    return Error(ErrorCode::kInvalidArgument, "etscope sql runs one read-only SELECT (or WITH) statement");
  }
  if (s.find(';') != std::string::npos) {
    return Error(ErrorCode::kInvalidArgument, "etscope sql runs one statement; this holds several (';')");
  }
  // Read-only for this statement only: the same Store keeps importing afterwards.
  ETSCOPE_TRY(impl_->db->set_read_only(true));
  auto rows = impl_->db->query(s, {});
  ETSCOPE_TRY(impl_->db->set_read_only(false));
  if (!rows.ok()) return rows.error();
  return QueryResult{std::move(rows->columns), std::move(rows->rows)};
}

std::vector<GapPoint> gap_points(int64_t row, const std::string& name, const std::string& metric, double gap,
                                 const inspect::GapStats& stats) {
  std::vector<GapPoint> out{{row, name, metric, gap}};
  auto add = [&](const char* m, double v) { out.push_back({row, name, m, v}); };
  add("max_abs", stats.max_abs);
  if (stats.max_rel) add("max_rel", *stats.max_rel);
  if (stats.cosine) add("cosine", *stats.cosine);
  if (stats.worst_channel_sqnr_db) add("worst_channel_sqnr_db", *stats.worst_channel_sqnr_db);
  if (stats.max_ulp) add("max_ulp", static_cast<double>(*stats.max_ulp));
  add("exact", static_cast<double>(stats.exact));
  add("compared", static_cast<double>(stats.compared));
  add("runtime_nan", static_cast<double>(stats.runtime_nan));
  add("runtime_inf", static_cast<double>(stats.runtime_inf));
  add("aot_nan", static_cast<double>(stats.aot_nan));
  add("aot_inf", static_cast<double>(stats.aot_inf));
  return out;
}

}  // namespace etscope::store
