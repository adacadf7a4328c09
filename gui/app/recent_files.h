// RecentFiles: the File menu's list of recently opened files, kept in a small text file (one
// path per line, newest first) under $XDG_CONFIG_HOME/etscope, or ~/.config/etscope.
#pragma once

#include <string>
#include <vector>

namespace etscope::gui {

class RecentFiles {
 public:
  static constexpr size_t kMaxEntries = 12;

  /// `path` is the file to keep the list in; "" keeps it in memory only (tests, screenshots).
  explicit RecentFiles(std::string path);

  /// Where the list lives by default: $XDG_CONFIG_HOME/etscope/recent_files, else
  /// $HOME/.config/etscope/recent_files; "" when neither variable is set.
  static std::string default_path();

  /// Reads the file; a missing or unreadable file gives an empty list.
  void load();
  /// Moves `file` (made absolute) to the front, drops duplicates and the oldest beyond
  /// kMaxEntries, and saves. Saving failures are ignored: the list is a convenience.
  void add(const std::string& file);
  void clear();
  const std::vector<std::string>& entries() const { return entries_; }

 private:
  void save() const;
  std::string path_;
  std::vector<std::string> entries_;
};

}  // namespace etscope::gui
