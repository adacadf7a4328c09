// Profile: a profiled run opened once for every front end. `etscope inspect`/`trace`/`debug`,
// the viewer and the run store all open an ETDump (with, optionally, the ETRecord, the program
// and the debug buffer of the same run) through open_profile(), so they read the same files the
// same way, check that they belong together the same way, pick the same method and show the
// same block first.
//
// Opening, in order:
//   1. read each file given (the ETDump from a path or from bytes in memory); a file of another
//      kind (a .pte given as the ETDump, ...) is refused with one line naming it;
//   2. choose the method (profile_method(): one rule, below);
//   3. check that the files belong together (consistency.h); each problem is refused unless
//      ProfileOptions::join_mismatched, and then becomes a warning;
//   4. build the Inspector and add its recording losses and the ETRecord's undecoded parts to
//      the warnings.
// Warnings name their file apart, so each front end words them its own way ("etscope: FILE:
// warning: ...", a dialog line).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord.h"
#include "etscope/formats/blob.h"
#include "etscope/formats/program.h"
#include "etscope/inspect/engine_identity.h"
#include "etscope/inspect/inspector.h"

namespace etscope::inspect {

/// How to join the files, beside which files they are.
struct ProfileOptions {
  /// The method the user asked for ("" = profile_method()'s default).
  std::string method;
  TimeScale source = TimeScale::kNs;
  TimeScale target = TimeScale::kMs;
  bool include_warmup = false;  ///< InspectorOptions::include_warmup.
  uint32_t skip_runs = 0;       ///< InspectorOptions::skip_runs.
  /// Join files that check_consistency finds do not belong together (each problem becomes a
  /// warning) instead of refusing them (kInvalidArgument with the first problem).
  bool join_mismatched = false;
  /// Appended to the refusal of mismatched files, e.g. how to join them anyway.
  std::string mismatch_hint;
};

/// The files of one profiled run, as paths. The ETDump is required: a path, or its bytes.
struct ProfileFiles {
  std::string etdump;                           ///< Path of the ETDump; ignored when etdump_bytes is set.
  std::shared_ptr<const Blob> etdump_bytes;     ///< The ETDump in memory (its name() names it in messages).
  std::string etrecord;                         ///< Optional.
  std::string program;                          ///< Optional: a .pte or a .bpte (its program).
  std::string debug_buffer;                     ///< Optional: the raw debug buffer (.bin).
  ProfileOptions options;
};

/// Files already read (the viewer keeps what it read between loads). `dump` is required; the
/// others may be null. Names are only for messages.
struct ProfileParts {
  std::shared_ptr<const etdump::EtDumpFile> dump;
  std::shared_ptr<const etrecord::EtRecord> record;
  std::shared_ptr<const Program> program;
  std::shared_ptr<const Blob> debug_buffer;
  std::string record_name;  ///< The ETRecord's path, for its warnings.
};

/// Something a front end should say about an opened profile.
struct ProfileWarning {
  enum class Kind : uint8_t {
    kMismatch,       ///< Files that do not belong together, joined (ProfileOptions::join_mismatched).
    kUndecoded,      ///< ETRecord parts that could not be decoded (reports lack what they hold).
    kRecordingLoss,  ///< What the ETDump writer could not record (Inspector::recording_losses).
    /// Intermediate outputs were logged while the run was timed (logged_intermediates() > 0):
    /// every timing includes copying them into the debug buffer.
    kLoggedTimings,
    /// Instructions the run executed that the ETRecord maps no debug handle for (ExecuTorch's
    /// to_executorch leaves some, e.g. a linear re-fused from permute and mm): their rows have no
    /// module, stack trace or AOT values.
    kUnmapped,
  };
  Kind kind = Kind::kMismatch;
  std::string file;  ///< The file it is about; "" for a mismatch, whose text names both files.
  std::string text;  ///< One line.
};

/// A profiled run, opened. Owns what it read; the Inspector shares the dump and the record.
struct Profile {
  std::shared_ptr<const etdump::EtDumpFile> dump;
  std::shared_ptr<const etrecord::EtRecord> record;  ///< Null without an ETRecord.
  std::shared_ptr<const Program> program;            ///< Null without a program.
  std::shared_ptr<const Blob> debug_buffer;          ///< Null without a debug buffer.
  std::unique_ptr<Inspector> inspector;              ///< Never null in an opened Profile.
  /// The method the profile is read as (profile_method()); the Inspector links blocks that
  /// their kernels do not place with this method's maps.
  std::string method;
  /// The engine that made the dump's timings (its engine marker); unknown without one.
  EngineIdentity engine;
  /// Mismatches joined anyway, then undecoded ETRecord parts, then recording losses, then timings
  /// taken with intermediate logging on.
  std::vector<ProfileWarning> warnings;
};

/// How many values the dump logged that are not program outputs (intermediate outputs, delegate
/// arguments, program inputs): a dump recorded with intermediate logging on (`run --debug-level
/// intermediate`, `debug`), whose timings include the logging. Output-level logging (0 here) copies
/// only the program outputs once per execution and leaves the operators' timings alone.
size_t logged_intermediates(const etdump::EtDumpFile& dump);

/// The one rule for the method a profile is read as:
///   1. `requested` when it is not empty (the user's --method);
///   2. else "forward" when the program has it, or, without a program, when the ETRecord has it
///      or there is no ETRecord either (ExecuTorch's Inspector reads "forward" only);
///   3. else the program's first method (training marker methods are not methods), or without a
///      program the ETRecord's first method in name order.
std::string profile_method(const std::string& requested, const Program* program, const etrecord::EtRecord* record);

/// Steps 3 and the ETRecord's part of 4 alone, for front ends that show a program and an
/// ETRecord without an ETDump: the warnings open_profile would give (any part may be null), or
/// its refusal of mismatched files.
Result<std::vector<ProfileWarning>> check_profile_parts(const ProfileParts& parts, const ProfileOptions& options);

/// Reads the files and joins them (see the file comment). Errors: a file that cannot be read or
/// is of another kind, with the reader's one line naming it; files that do not belong together
/// (kInvalidArgument, the first problem, unless join_mismatched); the Inspector's errors.
Result<Profile> open_profile(const ProfileFiles& files);
/// The same for files already read (steps 2 to 4).
Result<Profile> open_profile(ProfileParts parts, const ProfileOptions& options);

/// A block as main_block weighs it.
struct BlockCandidate {
  std::string_view name;  ///< "Execute", "Default", "Warmup", "Eval" or a method's name.
  size_t runs = 1;        ///< Executions grouped in it (1 for a raw ETDump block).
};

/// The one rule for the block a front end shows first (the "main block"): the one holding the
/// program's executions. Blocks rank "Execute" first, then other names (a method's), then
/// "Eval" and "Warmup", then "Default" (the load); within a rank the block with the most runs
/// wins, and the first of those on a tie. nullopt when there are no blocks.
std::optional<size_t> main_block(const std::vector<BlockCandidate>& blocks);
/// main_block of the Inspector's event blocks (their names and run counts).
std::optional<size_t> main_block(const Inspector& inspector);

}  // namespace etscope::inspect
