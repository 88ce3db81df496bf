// SPDX-License-Identifier: Apache-2.0
// Reading an input file safely into one YAML document, and collecting its diagnostics.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <climits>
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "utf8.hpp"
#include "yaml_reader.hpp"

namespace hetsim::models {
namespace {

YAML::Mark make_mark(int line0, int col0) {
  YAML::Mark m;
  m.line = line0;
  m.column = col0;
  return m;
}

/// Position (0-based line/col) of byte `offset` in `text`.
std::pair<int, int> position_of(std::string_view text, size_t offset) {
  int line = 0, col = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 0;
    } else {
      ++col;
    }
  }
  return {line, col};
}

/// First tab in the indentation of a line (0-based line/col), up to and including `max_line`.
std::optional<std::pair<int, int>> first_indent_tab(std::string_view text, int max_line) {
  int line = 0;
  size_t start = 0;
  while (start <= text.size() && line <= max_line) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    for (size_t i = start; i < end; ++i) {
      if (text[i] == '\t') return std::make_pair(line, static_cast<int>(i - start));
      if (text[i] != ' ' && text[i] != '-') break;  // indentation is spaces (and "- " of list items)
    }
    start = end + 1;
    ++line;
  }
  return std::nullopt;
}

/// The innermost flow collection ('{' or '[') still open at byte `end` of `text`, skipping
/// quoted strings and comments: where a flow map or list without its closing bracket opened.
/// yaml-cpp reports such a map where it gave up, at the next key or the end of the file.
std::optional<size_t> unclosed_flow_opener(std::string_view text, size_t end, char open) {
  std::vector<size_t> stack;
  char quote = 0;
  for (size_t i = 0; i < std::min(end, text.size()); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote && !(quote == '"' && i > 0 && text[i - 1] == '\\')) quote = 0;
      continue;
    }
    if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n')) {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    else if (c == '{' || c == '[') stack.push_back(i);
    else if ((c == '}' || c == ']') && !stack.empty()) stack.pop_back();
  }
  for (auto it = stack.rbegin(); it != stack.rend(); ++it)
    if (text[*it] == open) return *it;
  return std::nullopt;
}

/// yaml-cpp's "end of map/sequence flow not found" traced to the bracket that opened it.
struct UnclosedFlow {
  size_t at;  ///< byte of the '{' or '['
  bool map;   ///< '{' (else '[')
};
std::optional<UnclosedFlow> unclosed_flow_of(std::string_view text, const YAML::Exception& e) {
  const bool map = e.msg.find("end of map flow not found") != std::string::npos;
  if (!map && e.msg.find("end of sequence flow not found") == std::string::npos) return std::nullopt;
  const size_t end = e.mark.pos >= 0 ? static_cast<size_t>(e.mark.pos) : text.size();
  if (const auto at = unclosed_flow_opener(text, end, map ? '{' : '[')) return UnclosedFlow{*at, map};
  return std::nullopt;
}

/// A key written without the space YAML needs after its colon ("layers:24"), on 0-based line
/// `error_line` or one of the two lines above it: yaml-cpp reads such a line as a plain scalar
/// and reports the line after it ("illegal map value"). Returns the line, the 0-based column of
/// the colon and the key as written ("layers:24").
struct KeyWithoutSpace {
  int line;
  int colon_column;
  std::string written;
};
std::optional<KeyWithoutSpace> key_without_space(std::string_view text, int error_line) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start <= text.size() && static_cast<int>(lines.size()) <= error_line;) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  const auto is_key_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; };
  for (int line = std::min<int>(error_line, static_cast<int>(lines.size()) - 1); line >= 0 && line >= error_line - 2; --line) {
    const std::string_view l = lines[line];
    size_t i = l.find_first_not_of(' ');
    if (i != std::string_view::npos && l.compare(i, 2, "- ") == 0) i = l.find_first_not_of(' ', i + 2);
    // A key starts with a letter; "12:30" or a URL's "http://" is a value, not a key.
    if (i == std::string_view::npos || !std::isalpha(static_cast<unsigned char>(l[i]))) continue;
    size_t colon = i;
    while (colon < l.size() && is_key_char(l[colon])) ++colon;
    if (colon + 1 >= l.size() || l[colon] != ':') continue;
    const char after = l[colon + 1];
    if (after == ' ' || after == '/' || after == ':') continue;
    size_t word_end = l.find_first_of(" #", colon);
    if (word_end == std::string_view::npos) word_end = l.size();
    return KeyWithoutSpace{line, static_cast<int>(colon), std::string(l.substr(i, word_end - i))};
  }
  return std::nullopt;
}

/// "invalid YAML: no space after ':' in 'layers:24' (expected 'layers: 24': ...", without the
/// closing parenthesis (the caller may add yaml-cpp's own words).
std::string no_space_message(const std::string& written) {
  const size_t colon = written.find(':');
  return "invalid YAML: no space after ':' in '" + written + "' (expected '" + written.substr(0, colon + 1) + " " +
         written.substr(colon + 1) + "': YAML reads a key only where ':' is followed by a space";
}

/// Records where each document of a YAML stream starts and where explicit tags (`!!binary`,
/// `!!float`, `!custom`) are; ignores everything else.
struct DocumentStarts : YAML::EventHandler {
  explicit DocumentStarts(std::string_view text) : text_(text) {}
  std::vector<YAML::Mark> marks;
  std::vector<std::pair<YAML::Mark, std::string>> tags;
  /// Quoted scalars without their closing quote: yaml-cpp 0.7 reads such a scalar to the end
  /// of the file without a word, and the keys it swallowed were then reported missing.
  std::vector<std::pair<YAML::Mark, char>> unclosed;
  /// The first quoted scalar that runs over several lines, and the line (0-based) of its closing
  /// quote: named beside a syntax error after it, which a missing quote often is.
  std::optional<std::pair<YAML::Mark, int>> multiline;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { note_tag(mark, "?"); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark& mark, const std::string& t, YAML::anchor_t, const std::string&) override {
    note_tag(mark, t);
    if (t == "!") note_quotes(mark);  // "!": a quoted scalar
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& t, YAML::anchor_t, YAML::EmitterStyle::value) override {
    note_tag(mark, t);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string& t, YAML::anchor_t, YAML::EmitterStyle::value) override {
    note_tag(mark, t);
  }
  void OnMapEnd() override {}

 private:
  // yaml-cpp gives "?" for untagged plain nodes and "!" for quoted scalars; anything else was
  // written in the file, and the string readers would ignore it (`!!binary aGk=` read as text).
  void note_tag(const YAML::Mark& mark, const std::string& t) {
    if (!t.empty() && t != "?" && t != "!") tags.emplace_back(mark, t);
  }
  void note_quotes(const YAML::Mark& mark) {
    if (mark.pos < 0 || static_cast<size_t>(mark.pos) >= text_.size()) return;
    const size_t open = static_cast<size_t>(mark.pos);
    const char quote = text_[open];
    if (quote != '"' && quote != '\'') return;
    const size_t close = closing(open, quote);
    if (close == std::string_view::npos) {
      unclosed.emplace_back(mark, quote);
    } else if (!multiline && text_.substr(open, close - open).find('\n') != std::string_view::npos) {
      multiline.emplace(mark, position_of(text_, close).first);
    }
  }
  /// Where the quoted scalar opened at `open` has its closing quote, npos when it has none
  /// (YAML 1.2: '\"' escapes a double quote, '' a single one).
  size_t closing(size_t open, char quote) const {
    for (size_t i = open + 1; i < text_.size(); ++i) {
      if (quote == '"' && text_[i] == '\\') ++i;
      else if (text_[i] == quote && quote == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') ++i;
      else if (text_[i] == quote) return i;
    }
    return std::string_view::npos;
  }
  std::string_view text_;
};

/// A tag as written: "tag:yaml.org,2002:binary" -> "!!binary".
std::string written_tag(const std::string& t) {
  static const std::string kCore = "tag:yaml.org,2002:";
  return t.rfind(kCore, 0) == 0 ? "!!" + t.substr(kCore.size()) : t;
}

}  // namespace

// ---- DiagnosticSink ---------------------------------------------------------------------

void DiagnosticSink::error(const YAML::Mark& at, const std::string& field, const std::string& message) {
  Diagnostic d;
  d.file = file_;
  d.line = one_based(at.line);
  d.col = d.line > 0 ? one_based(at.column) : 0;
  d.field = field;
  d.message = message;
  diagnostics_.push_back(std::move(d));
}

void DiagnosticSink::throw_if_any() const {
  if (diagnostics_.empty()) return;
  std::vector<Diagnostic> sorted = diagnostics_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.col) < std::tie(b.line, b.col);
  });
  throw ConfigError(std::move(sorted));
}

void DiagnosticSink::remember(const std::string& field, const YAML::Mark& at) {
  if (at.line >= 0) marks_.emplace(field, at);
}

YAML::Mark DiagnosticSink::locate(const std::string& field) const {
  std::string f = field;
  while (!f.empty()) {
    const auto it = marks_.find(f);
    if (it != marks_.end()) return it->second;
    const size_t cut = f.find_last_of(".[");
    if (cut == std::string::npos) break;
    f.resize(cut);
  }
  return YAML::Mark::null_mark();
}

// ---- reading and parsing ----------------------------------------------------------------

std::optional<std::string> read_input_text(const std::string& path, DiagnosticSink& sink) {
  // Opened without blocking: a FIFO that no process writes to would otherwise hang open()
  // forever. Blocking reads again afterwards, so a pipe being written (`<(cat x.yaml)`) is read
  // whole, and a FIFO without a writer reads as empty (read() returns 0 when no writer has it).
  if (path.empty()) {  // `--cluster ""`: "cannot open file" would not say which
    sink.error(YAML::Mark::null_mark(), "", "empty path (expected the name of a YAML file)");
    return std::nullopt;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    // errno says which of missing, unreadable or a symlink loop it is.
    sink.error(YAML::Mark::null_mark(), "", std::string("cannot open file: ") + std::strerror(errno) +
                                                " (expected a readable YAML file)");
    return std::nullopt;
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {  // opens on Linux, then fails to read: say why
    sink.error(YAML::Mark::null_mark(), "", "is a directory (expected a YAML file)");
    return std::nullopt;
  }
  // A pipe (`<(cat x.yaml)`) reads once, but a verb may read an input more than once (describe:
  // its kind, a plan's header, then the file): later reads get the text the first one got.
  // Keyed by the pipe itself, not its path: /dev/fd/N names another pipe once N is reused.
  static std::mutex pipes_mutex;
  static std::map<std::pair<dev_t, ino_t>, std::string> pipe_texts;
  const bool pipe = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
  const std::pair<dev_t, ino_t> pipe_id{st.st_dev, st.st_ino};
  if (pipe) {
    const std::lock_guard<std::mutex> lock(pipes_mutex);
    if (const auto it = pipe_texts.find(pipe_id); it != pipe_texts.end()) return it->second;
  }
  if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      sink.error(YAML::Mark::null_mark(), "", "read error (expected a readable YAML file)");
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxInputBytes) {
      sink.error(YAML::Mark::null_mark(), "",
                 "file larger than " + std::to_string(kMaxInputBytes >> 20) + " MiB (expected a hand-written YAML input)");
      return std::nullopt;
    }
  }
  if (pipe && text.empty()) {  // "empty file" would send the user to look at a file that is not one
    sink.error(YAML::Mark::null_mark(), "",
               "a pipe that nothing was written to (expected a YAML file, or a pipe that a running process writes)");
    return std::nullopt;
  }
  if (pipe) {
    const std::lock_guard<std::mutex> lock(pipes_mutex);
    pipe_texts.emplace(pipe_id, text);
  }
  return text;
}

namespace {

/// hetsim's own outputs that are not inputs, told apart from broken YAML: a JSON-lines
/// checkpoint (calibrate, fit, sweep), which yaml-cpp reads as several documents, and a CSV
/// table (sweep, validate), whose header it rejects as "illegal map value" (s68 hunt). Looks at
/// the first two non-empty lines; nothing else is said of a file that is neither.
std::optional<std::string> output_table_format(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t at = 0; at < text.size() && lines.size() < 2;) {
    const size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.empty()) lines.push_back(line);
    at = end + 1;
  }
  if (lines.size() < 2) return std::nullopt;
  const auto json_object = [](std::string_view l) { return l.front() == '{' && l.back() == '}'; };
  if (json_object(lines[0]) && json_object(lines[1]))
    return "a JSON-lines file (one JSON object a line, as the checkpoints of calibrate, fit and sweep are), not a "
           "YAML input";
  const auto commas = [](std::string_view l) { return std::count(l.begin(), l.end(), ','); };
  if (commas(lines[0]) >= 2 && commas(lines[0]) == commas(lines[1]) && lines[0].find(':') == std::string_view::npos &&
      lines[0].front() != '#' && lines[0].front() != '{' && lines[0].front() != '[' && lines[0].front() != '-')
    return "a CSV table (as sweep and validate write them), not a YAML input";
  return std::nullopt;
}

}  // namespace

std::optional<YAML::Node> parse_yaml_document(std::string_view text, DiagnosticSink& sink, const std::string& first_key) {
  if (text.size() > kMaxInputBytes) {
    sink.error(YAML::Mark::null_mark(), "", "input larger than " + std::to_string(kMaxInputBytes >> 20) + " MiB");
    return std::nullopt;
  }
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    const auto [line, col] = position_of(text, nul);
    sink.error(make_mark(line, col), "", "binary data: NUL byte (expected a YAML text file)");
    return std::nullopt;
  }
  if (const size_t bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    const auto [line, col] = position_of(text, bad);
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[bad]));
    sink.error(make_mark(line, col), "", std::string("invalid UTF-8 byte ") + hex + " (expected a UTF-8 YAML text file)");
    return std::nullopt;
  }
  if (const auto what = output_table_format(text)) {
    sink.error(make_mark(0, 0), "", *what + " (expected a YAML map starting with " + first_key + ")");
    return std::nullopt;
  }
  std::string input(text);
  // A lone CR (classic Mac OS line ends) is a line break in YAML 1.2 (spec 5.4, b-break), but
  // yaml-cpp reads it as a character of the line: same length, so every mark keeps its place.
  for (size_t i = 0; i < input.size(); ++i)
    if (input[i] == '\r' && (i + 1 == input.size() || input[i + 1] != '\n')) input[i] = '\n';
  DocumentStarts starts(input);
  YAML::Node doc;
  try {
    // First pass: syntax of the whole stream and where its documents start. YAML::LoadAll
    // is not used: on some malformed input (a stray ',') it loops forever, pushing empty
    // documents (yaml-cpp issue #1040, fixed upstream after 0.7 by PR #1319). Here a
    // document that starts where the previous one did means the parser is stuck.
    std::istringstream stream(input);
    YAML::Parser parser(stream);
    while (starts.marks.size() < 3 && parser.HandleNextDocument(starts)) {
      const auto& m = starts.marks;
      if (m.size() >= 2 && m[m.size() - 1].pos == m[m.size() - 2].pos) {
        const YAML::Mark at = m.back();
        const char c = at.pos >= 0 && static_cast<size_t>(at.pos) < input.size() ? input[at.pos] : '?';
        sink.error(at, "", std::string("invalid YAML: unexpected '") + c + "'");
        return std::nullopt;
      }
    }
    if (!starts.unclosed.empty()) {
      const auto& [at, quote] = starts.unclosed.front();
      sink.error(at, "", std::string("unclosed quote: the string opened here has no closing ") + quote +
                             " (expected a closing " + quote + " on this line or a later one)");
      return std::nullopt;
    }
    if (starts.marks.size() == 1) doc = YAML::Load(input);
  } catch (const YAML::DeepRecursion& e) {
    sink.error(e.mark, "", "nesting too deep (expected a configuration map of a few levels)");
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    // A tab in indentation is the most common cause and yaml-cpp's message does not say so.
    if (const auto tab = first_indent_tab(text, e.mark.line >= 0 ? e.mark.line : INT_MAX)) {
      sink.error(make_mark(tab->first, tab->second), "",
                 "tab character in indentation (YAML indents with spaces only)");
    } else if (starts.multiline && starts.multiline->first.pos < e.mark.pos) {
      const auto& [open, close_line] = *starts.multiline;
      sink.error(e.mark, "", "invalid YAML: " + e.msg + " (the quoted string opened at line " +
                                 std::to_string(open.line + 1) + ":" + std::to_string(open.column + 1) + " runs to line " +
                                 std::to_string(close_line + 1) + ": is its closing quote missing?)");
    } else if (const auto flow = unclosed_flow_of(input, e)) {
      const bool map = flow->map;
      const auto [line, col] = position_of(input, flow->at);
      sink.error(make_mark(line, col), "",
                 std::string("unclosed ") + (map ? "'{': the flow map" : "'[': the flow list") +
                     " opened here has no closing " + (map ? "'}'" : "']'") + " (yaml-cpp gave up at line " +
                     std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) + ")");
    } else if (const auto key = key_without_space(text, e.mark.line)) {
      sink.error(make_mark(key->line, key->colon_column), "",
                 no_space_message(key->written) + "; yaml-cpp: " + e.msg + " at line " + std::to_string(e.mark.line + 1) + ")");
    } else {
      sink.error(e.mark, "", "invalid YAML: " + e.msg);
    }
    return std::nullopt;
  } catch (const std::exception& e) {
    sink.error(YAML::Mark::null_mark(), "", std::string("invalid YAML: ") + e.what());
    return std::nullopt;
  }
  if (starts.marks.size() > 1) {
    sink.error(starts.marks[1], "", "several YAML documents in one file (expected one; put each input in its own file)");
    return std::nullopt;
  }
  if (starts.marks.empty() || doc.IsNull()) {
    sink.error(YAML::Mark::null_mark(), "", "empty file (expected a YAML map starting with " + first_key + ")");
    return std::nullopt;
  }
  if (!doc.IsMap()) {
    if (const auto key = doc.IsScalar() ? key_without_space(text, doc.Mark().line) : std::nullopt) {
      sink.error(make_mark(key->line, key->colon_column), "", no_space_message(key->written) + ")");
      return std::nullopt;
    }
    sink.error(doc.Mark(), "", "top level is " + describe_node(doc) + " (expected a map starting with " + first_key + ")");
    return std::nullopt;
  }
  // Tags are errors, but the document is still read so that its other errors are reported too
  // (every loader throws when the sink has any).
  for (const auto& [at, tag] : starts.tags)
    sink.error(at, "", "YAML tag '" + written_tag(tag) + "' is not supported (expected a plain value, without a tag)");
  return doc;
}

}  // namespace hetsim::models
