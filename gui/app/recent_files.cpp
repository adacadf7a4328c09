#include "app/recent_files.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace etscope::gui {

RecentFiles::RecentFiles(std::string path) : path_(std::move(path)) {}

std::string RecentFiles::default_path() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/etscope/recent_files";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.config/etscope/recent_files";
  return "";
}

void RecentFiles::load() {
  entries_.clear();
  if (path_.empty()) return;
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line) && entries_.size() < kMaxEntries) {
    if (!line.empty() && std::find(entries_.begin(), entries_.end(), line) == entries_.end()) {
      entries_.push_back(line);
    }
  }
}

void RecentFiles::add(const std::string& file) {
  std::error_code ec;
  std::string absolute = std::filesystem::absolute(file, ec).lexically_normal().string();
  if (ec) absolute = file;
  entries_.erase(std::remove(entries_.begin(), entries_.end(), absolute), entries_.end());
  entries_.insert(entries_.begin(), absolute);
  if (entries_.size() > kMaxEntries) entries_.resize(kMaxEntries);
  save();
}

void RecentFiles::clear() {
  entries_.clear();
  save();
}

void RecentFiles::save() const {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  // Write a sibling file and rename it, so a crash never leaves half a list.
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return;
    for (const std::string& e : entries_) out << e << "\n";
    if (!out) return;
  }
  std::filesystem::rename(tmp, path_, ec);
}

}  // namespace etscope::gui
