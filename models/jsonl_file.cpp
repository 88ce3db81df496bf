// SPDX-License-Identifier: Apache-2.0
#include "jsonl_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace hetsim::models {

void append_json_line(const std::string& path, const std::string& json_object) {
  // A kill in the middle of a line leaves it without its newline: end it first, or the next
  // record would continue the broken line and be lost with it.
  bool ends_mid_line = false;
  if (std::ifstream in(path, std::ios::binary | std::ios::ate); in && in.tellg() > 0) {
    in.seekg(-1, std::ios::end);
    ends_mid_line = in.get() != '\n';
  }
  errno = 0;
  std::ofstream out(path, std::ios::app);
  if (ends_mid_line) out << '\n';
  out << json_object << '\n';
  out.flush();
  // The system's reason (a full disk, a file made read-only meanwhile) when it gave one.
  if (!out)
    throw std::runtime_error("cannot append to the checkpoint " + path +
                             (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
}

std::string json_lines_problem(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char first = 0;
  if (!in || !in.get(first) || first == '{') return {};
  return "'" + path + "' is no checkpoint: it does not start with a JSON record (expected a file of JSON lines "
         "that hetsim wrote, or a new file; remove it to start afresh)";
}

void for_each_json_line(const std::string& path, const std::function<void(const JsonLine&)>& visit) {
  std::ifstream in(path);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    JsonLine l{number, YAML::Node()};
    if (line.front() == '{' && line.back() == '}') {  // else cut short by a kill
      try {
        YAML::Node n = YAML::Load(line);
        if (n.IsMap()) l.record = n;
      } catch (const YAML::Exception&) {
      }
    }
    visit(l);
  }
}

std::vector<JsonLine> read_json_lines_numbered(const std::string& path) {
  std::vector<JsonLine> out;
  for_each_json_line(path, [&out](const JsonLine& l) { out.push_back(l); });
  return out;
}

}  // namespace hetsim::models
