#include "schema.h"

#include <cstdlib>
#include <vector>

#include "etscope/store/store.h"

namespace etscope::store {
namespace {

// Version 1. "{ID}" is the backend's autoincrementing key column. Types are those both SQLite and
// PostgreSQL read the same way: TEXT, BIGINT, INTEGER, DOUBLE PRECISION.
const char* const kVersion1[] = {
    "CREATE TABLE etscope_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE programs (id {ID}, hash TEXT NOT NULL UNIQUE, name TEXT NOT NULL, methods TEXT NOT NULL, "
    "operators TEXT NOT NULL, bytes BIGINT NOT NULL)",
    "CREATE TABLE memory_plans (program_id BIGINT NOT NULL REFERENCES programs(id) ON DELETE CASCADE, method TEXT NOT NULL, "
    "arena INTEGER NOT NULL, bytes BIGINT NOT NULL, PRIMARY KEY (program_id, method, arena))",
    "CREATE TABLE runs (id {ID}, content_hash TEXT NOT NULL UNIQUE, program_id BIGINT REFERENCES programs(id), "
    "method TEXT NOT NULL, source TEXT NOT NULL, file TEXT NOT NULL, host TEXT, device TEXT, os TEXT, backend TEXT, "
    "threads INTEGER, etscope_version TEXT, git_commit TEXT, created_at TEXT NOT NULL, executions INTEGER NOT NULL, "
    "method_median_ms DOUBLE PRECISION, method_p90_ms DOUBLE PRECISION)",
    "CREATE INDEX runs_program ON runs (program_id, id)",
    "CREATE INDEX runs_created ON runs (created_at)",
    "CREATE TABLE run_tags (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, key TEXT NOT NULL, "
    "value TEXT NOT NULL, PRIMARY KEY (run_id, key))",
    "CREATE INDEX run_tags_key ON run_tags (key, value)",
    "CREATE TABLE operators (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, op INTEGER NOT NULL, "
    "name TEXT NOT NULL, chain INTEGER NOT NULL, instruction INTEGER NOT NULL, debug_handle BIGINT, occurrence INTEGER NOT NULL, "
    "samples INTEGER NOT NULL, median_ms DOUBLE PRECISION, mean_ms DOUBLE PRECISION, min_ms DOUBLE PRECISION, "
    "max_ms DOUBLE PRECISION, p90_ms DOUBLE PRECISION, PRIMARY KEY (run_id, op))",
    "CREATE TABLE samples (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, op INTEGER NOT NULL, "
    "execution INTEGER NOT NULL, ms DOUBLE PRECISION NOT NULL, PRIMARY KEY (run_id, op, execution))",
    "CREATE TABLE outputs (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, output INTEGER NOT NULL, "
    "dtype TEXT, shape TEXT, min DOUBLE PRECISION, max DOUBLE PRECISION, mean DOUBLE PRECISION, PRIMARY KEY (run_id, output))",
    "CREATE TABLE curves (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, step INTEGER NOT NULL, "
    "loss DOUBLE PRECISION, accuracy DOUBLE PRECISION, step_ms DOUBLE PRECISION, PRIMARY KEY (run_id, step))",
    "CREATE TABLE numeric_gaps (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, op INTEGER NOT NULL, "
    "name TEXT NOT NULL, metric TEXT NOT NULL, gap DOUBLE PRECISION, PRIMARY KEY (run_id, op, metric))",
    // The documented views (docs/store.md): what `etscope sql` is for.
    "CREATE VIEW v_runs AS SELECT r.id AS run_id, r.created_at, r.source, r.file, p.name AS program, p.hash AS program_hash, "
    "r.method, r.host, r.device, r.os, r.backend, r.threads, r.etscope_version, r.git_commit, r.executions, "
    "r.method_median_ms, r.method_p90_ms FROM runs r LEFT JOIN programs p ON p.id = r.program_id",
    "CREATE VIEW v_tags AS SELECT run_id, key, value FROM run_tags",
    "CREATE VIEW v_operators AS SELECT o.run_id, p.name AS program, r.method, o.op, o.name, o.chain, o.instruction, "
    "o.debug_handle, o.samples, o.median_ms, o.mean_ms, o.min_ms, o.max_ms, o.p90_ms "
    "FROM operators o JOIN runs r ON r.id = o.run_id LEFT JOIN programs p ON p.id = r.program_id WHERE o.op >= 0",
    "CREATE VIEW v_samples AS SELECT s.run_id, o.name, o.chain, o.instruction, s.execution, s.ms "
    "FROM samples s JOIN operators o ON o.run_id = s.run_id AND o.op = s.op",
    "CREATE VIEW v_programs AS SELECT id AS program_id, hash, name, methods, operators, bytes FROM programs",
    "CREATE VIEW v_memory AS SELECT p.name AS program, m.method, m.arena, m.bytes FROM memory_plans m JOIN programs p ON p.id = m.program_id",
    "CREATE VIEW v_curves AS SELECT run_id, step, loss, accuracy, step_ms FROM curves",
    "CREATE VIEW v_gaps AS SELECT run_id, op, name, metric, gap FROM numeric_gaps",
    "CREATE VIEW v_outputs AS SELECT run_id, output, dtype, shape, min, max, mean FROM outputs",
};

// Version 2: a training curve's step time split into forward-backward and optimizer, and its
// validation points.
const char* const kVersion2[] = {
    "ALTER TABLE curves ADD COLUMN forward_backward_ms DOUBLE PRECISION",
    "ALTER TABLE curves ADD COLUMN optimizer_ms DOUBLE PRECISION",
    ("CREATE TABLE validation (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, step INTEGER NOT NULL, "
     "loss DOUBLE PRECISION, accuracy DOUBLE PRECISION, PRIMARY KEY (run_id, step))"),
    "DROP VIEW v_curves",
    "CREATE VIEW v_curves AS SELECT run_id, step, loss, accuracy, step_ms, forward_backward_ms, optimizer_ms FROM curves",
    "CREATE VIEW v_validation AS SELECT run_id, step, loss, accuracy FROM validation",
};

// Version 3: the engine that made each run's timings (docs/store.md). Runs stored before were
// made by etscope's runner (source run, train, debug) on the only engine it had, its own, whose
// version is etscope's: they get it. Imported ETDumps (source etdump) may come from ExecuTorch's
// runtime or from etscope; the dump is not kept, so their engine stays unknown (NULL).
const char* const kVersion3[] = {
    "ALTER TABLE runs ADD COLUMN engine TEXT",
    "ALTER TABLE runs ADD COLUMN engine_version TEXT",
    "UPDATE runs SET engine = 'etscope', engine_version = etscope_version WHERE source IN ('run', 'train', 'debug')",
    "DROP VIEW v_runs",
    "CREATE VIEW v_runs AS SELECT r.id AS run_id, r.created_at, r.source, r.file, p.name AS program, p.hash AS program_hash, "
    "r.method, r.host, r.device, r.os, r.backend, r.threads, r.etscope_version, r.git_commit, r.executions, "
    "r.method_median_ms, r.method_p90_ms, r.engine, r.engine_version FROM runs r LEFT JOIN programs p ON p.id = r.program_id",
};

// Version 4: the findings of each stored run (findings/, docs/findings.md), so that history can
// tell when one appeared. Runs stored before have none (their dumps are not kept).
const char* const kVersion4[] = {
    "CREATE TABLE findings (run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, rank INTEGER NOT NULL, "
    "rule TEXT NOT NULL, severity TEXT NOT NULL, what TEXT NOT NULL, chain INTEGER, instruction INTEGER, op TEXT, "
    "time_ms DOUBLE PRECISION, share DOUBLE PRECISION, bytes BIGINT NOT NULL, advice TEXT NOT NULL, PRIMARY KEY (run_id, rank))",
    "CREATE VIEW v_findings AS SELECT f.run_id, p.name AS program, r.method, f.rank, f.rule, f.severity, f.what, f.chain, "
    "f.instruction, f.op, f.time_ms, f.share, f.bytes, f.advice FROM findings f JOIN runs r ON r.id = f.run_id "
    "LEFT JOIN programs p ON p.id = r.program_id",
};

std::string with_id(const std::string& sql, const char* id) {
  std::string out = sql;
  const size_t at = out.find("{ID}");
  if (at != std::string::npos) out.replace(at, 4, id);
  return out;
}

Result<bool> has_table(Db& db, const std::string& name) {
  const std::string sql = std::string(db.backend()) == "sqlite"
                              ? "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = $1"
                              : "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1";
  ETSCOPE_ASSIGN_OR_RETURN(Rows r, db.query(sql, {name}));
  return !r.rows.empty();
}

}  // namespace

Status migrate(Db& db, const std::string& location, bool create) {
  // Reading first tells a damaged or foreign file apart before anything is written.
  ETSCOPE_ASSIGN_OR_RETURN(bool exists, has_table(db, "etscope_meta"));
  if (!exists && !create) return Error(ErrorCode::kNotFound, location + ": holds no etscope run store");
  if (exists) {
    ETSCOPE_ASSIGN_OR_RETURN(Rows v, db.query("SELECT value FROM etscope_meta WHERE key = 'schema_version'"));
    const long version = v.rows.empty() || !v.rows[0][0] ? 0 : std::strtol(v.rows[0][0]->c_str(), nullptr, 10);
    if (version > kSchemaVersion) {
      return Error(ErrorCode::kNotSupported, location + ": the store's schema is version " + std::to_string(version) +
                                                 ", newer than this etscope's " + std::to_string(kSchemaVersion) +
                                                 " (a newer etscope wrote it; update etscope)");
    }
    if (version == kSchemaVersion) return ok_status();
  }
  ETSCOPE_TRY(db.begin());
  Status s = [&]() -> Status {
    ETSCOPE_TRY(db.lock_for_write());
    ETSCOPE_ASSIGN_OR_RETURN(bool now, has_table(db, "etscope_meta"));  // another process may have done it
    long version = 0;
    if (now) {
      ETSCOPE_ASSIGN_OR_RETURN(Rows v, db.query("SELECT value FROM etscope_meta WHERE key = 'schema_version'"));
      version = v.rows.empty() || !v.rows[0][0] ? 0 : std::strtol(v.rows[0][0]->c_str(), nullptr, 10);
    } else {
      ETSCOPE_ASSIGN_OR_RETURN(bool foreign, has_table(db, "runs"));
      if (foreign) return Error(ErrorCode::kWrongKind, location + ": holds a 'runs' table but is not an etscope store");
    }
    if (version < 1) {
      for (const char* stmt : kVersion1) ETSCOPE_TRY(db.exec(with_id(stmt, db.id_column())));
      ETSCOPE_TRY(db.exec("INSERT INTO etscope_meta (key, value) VALUES ('schema_version', '1')"));
    }
    if (version < 2) {
      for (const char* stmt : kVersion2) ETSCOPE_TRY(db.exec(stmt));
      ETSCOPE_TRY(db.exec("UPDATE etscope_meta SET value = '2' WHERE key = 'schema_version'"));
    }
    if (version < 3) {
      for (const char* stmt : kVersion3) ETSCOPE_TRY(db.exec(stmt));
      ETSCOPE_TRY(db.exec("UPDATE etscope_meta SET value = '3' WHERE key = 'schema_version'"));
    }
    if (version < 4) {
      for (const char* stmt : kVersion4) ETSCOPE_TRY(db.exec(stmt));
      ETSCOPE_TRY(db.exec("UPDATE etscope_meta SET value = '4' WHERE key = 'schema_version'"));
    }
    // Later versions: if (version < 5) { ...; UPDATE etscope_meta ... }
    return db.commit();
  }();
  if (!s.ok()) db.rollback();
  return s;
}

}  // namespace etscope::store
