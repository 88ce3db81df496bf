// SPDX-License-Identifier: Apache-2.0
// The strict YAML layer (models/yaml_reader.hpp): positions, unknown/missing keys, types, guards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>

#include "yaml_reader.hpp"

namespace hetsim::models {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> lines_of(const DiagnosticSink& sink) {
  std::vector<std::string> out;
  for (const auto& d : sink.get_diagnostics()) out.push_back(d.to_string());
  return out;
}

TEST(Diagnostic, FormatsLikeACompiler) {
  Diagnostic d{"c.yaml", 14, 18, "nodes[0].gpu", "unknown GPU 'a100x' (known: a100)"};
  EXPECT_EQ(d.to_string(), "c.yaml:14:18: error: nodes[0].gpu: unknown GPU 'a100x' (known: a100)");
  d.field.clear();
  d.line = d.col = 0;
  EXPECT_EQ(d.to_string(), "c.yaml: error: unknown GPU 'a100x' (known: a100)");
  const ConfigError e({Diagnostic{"a", 1, 2, "f", "x"}, Diagnostic{"a", 3, 4, "g", "y"}});
  EXPECT_STREQ(e.what(), "a:1:2: error: f: x\na:3:4: error: g: y");
}

TEST(DidYouMean, SuggestsCloseNamesOnly) {
  EXPECT_EQ(did_you_mean("prise", {"name", "price", "gpus"}), "price");
  EXPECT_EQ(did_you_mean("bandwith", {"bandwidth", "latency"}), "bandwidth");
  EXPECT_EQ(did_you_mean("zzzzzz", {"bandwidth", "latency"}), std::nullopt);
  // Case is no edit: "BF16" is "bf16" (it was one substitution from "fp16", the earlier candidate).
  EXPECT_EQ(did_you_mean("BF16", {"fp32", "fp16", "bf16"}), "bf16");
  EXPECT_EQ(did_you_mean("NVLink", {"nvswitch", "nvlink", "pcie"}), "nvlink");
  // Names no edit distance relates: PyTorch's dtype names, the usual fabric abbreviations.
  EXPECT_EQ(did_you_mean("bfloat16", {"fp32", "tf32", "fp16", "bf16", "fp8"}), "bf16");
  EXPECT_EQ(did_you_mean("float16", {"fp32", "tf32", "fp16", "bf16", "fp8"}), "fp16");
  EXPECT_EQ(did_you_mean("IB", {"infiniband", "roce", "ethernet"}), "infiniband");
  // A synonym whose canonical name is not a candidate suggests nothing from the table.
  EXPECT_EQ(did_you_mean("ib", {"nvswitch", "nvlink", "xgmi", "pcie"}), std::nullopt);
}

TEST(ParseDocument, RejectsWhatIsNotAYamlMap) {
  const auto fails = [](std::string_view text) {
    DiagnosticSink sink("f.yaml");
    EXPECT_FALSE(parse_yaml_document(text, sink).has_value()) << text;
    EXPECT_EQ(sink.count(), 1u) << text;
    return sink.empty() ? std::string() : sink.get_diagnostics()[0].to_string();
  };
  EXPECT_EQ(fails(""), "f.yaml: error: empty file (expected a YAML map starting with 'kind:')");
  EXPECT_EQ(fails("# only a comment\n"), "f.yaml: error: empty file (expected a YAML map starting with 'kind:')");
  EXPECT_THAT(fails("a: 1\nb:\n\tc: 2\n"), HasSubstr("f.yaml:3:1: error: tab character in indentation"));
  // An unclosed flow list or map is reported where it opened, not where yaml-cpp gave up (the
  // next key, or the end of the file; s67 walkthrough), past quoted brackets and comments.
  EXPECT_EQ(fails("a: [1, 2\n"),
            "f.yaml:1:4: error: unclosed '[': the flow list opened here has no closing ']' (yaml-cpp gave up at line 2:1)");
  EXPECT_THAT(fails("k: \"{\"\nm: {a: 1, b: [2], c: 3 # a {comment\nn: {d: 4}\n"),
              HasSubstr("f.yaml:2:4: error: unclosed '{': the flow map opened here has no closing '}'"));
  EXPECT_THAT(fails(std::string("a: b\0c\n", 7)), HasSubstr("f.yaml:1:5: error: binary data: NUL byte"));
  EXPECT_THAT(fails("a: \xff\xfe\n"), HasSubstr("f.yaml:1:4: error: invalid UTF-8 byte 0xFF"));
  EXPECT_THAT(fails("a: \xc0\xaf\n"), HasSubstr("invalid UTF-8"));  // overlong encoding of '/'
  EXPECT_THAT(fails("- 1\n- 2\n"), HasSubstr("top level is a list"));
  EXPECT_THAT(fails("a: 1\n---\nb: 2\n"), HasSubstr("several YAML documents"));
  EXPECT_THAT(fails("a: " + std::string(100000, '[')), HasSubstr("nesting too deep"));
  // yaml-cpp reads an unclosed quote to the end of the file without a word: the keys it swallowed
  // were reported missing at 1:1 (adversarial pass, 2026-12-05).
  EXPECT_EQ(fails("kind: workload\nname: \"abc\nmodel: {layers: 1}\n"),
            "f.yaml:2:7: error: unclosed quote: the string opened here has no closing \" (expected a closing \" on "
            "this line or a later one)");
  EXPECT_THAT(fails("a: 1\nb: 'it''s\nc: 2\n"), HasSubstr("f.yaml:2:4: error: unclosed quote"));
  // Closed by a quote further down, it is a syntax error there: the message names the string.
  EXPECT_THAT(fails("a: \"x\nb: {c: 1, d: \"y\"}\n"),
              HasSubstr("(the quoted string opened at line 1:4 runs to line 2: is its closing quote missing?)"));
}

TEST(ParseDocument, QuotesWithEscapesAndStringsOverSeveralLinesAreFine) {
  DiagnosticSink sink("f.yaml");
  const auto doc = parse_yaml_document("a: 'it''s'\nb: \"say \\\"hi\\\"\"\nc: \"one\n  two\"\n", sink);
  ASSERT_TRUE(doc.has_value()) << (sink.empty() ? "" : sink.get_diagnostics()[0].to_string());
  EXPECT_EQ((*doc)["a"].as<std::string>(), "it's");
  EXPECT_EQ((*doc)["b"].as<std::string>(), "say \"hi\"");
  EXPECT_EQ((*doc)["c"].as<std::string>(), "one two");
}

// yaml-cpp keeps a tag but the typed readers ignore it: `kind: !!binary cluster` used to load
// as the text "cluster" (found by scripts/fuzz_inputs.py).
TEST(ParseDocument, RejectsExplicitTags) {
  // The document is still returned, so that the loaders report its other errors as well.
  const auto fails = [](std::string_view text) {
    DiagnosticSink sink("f.yaml");
    EXPECT_TRUE(parse_yaml_document(text, sink).has_value()) << text;
    return sink.empty() ? std::string() : sink.get_diagnostics()[0].to_string();
  };
  EXPECT_EQ(fails("kind: !!binary cluster\n"),
            "f.yaml:1:7: error: YAML tag '!!binary' is not supported (expected a plain value, without a tag)");
  EXPECT_THAT(fails("kind: workload\nmodel: !!map {layers: 2}\n"), HasSubstr("f.yaml:2:8: error: YAML tag '!!map'"));
  EXPECT_THAT(fails("a: [1, !custom 2]\n"), HasSubstr("f.yaml:1:8: error: YAML tag '!custom'"));
  EXPECT_THAT(fails("a: !!float \"5\"\n"), HasSubstr("YAML tag '!!float'"));
  // Quoted and plain values carry yaml-cpp's implicit tags ("!" and "?") and still load.
  DiagnosticSink sink("f.yaml");
  EXPECT_TRUE(parse_yaml_document("a: \"x\"\nb: 'y'\nc: z\nd: ~\ne: [1, {f: 2}]\n", sink).has_value());
  EXPECT_TRUE(sink.empty());
}

TEST(ReadInputText, SaysWhenTheFileIsADirectory) {
  DiagnosticSink sink("some/dir");
  EXPECT_FALSE(read_input_text(testing::TempDir(), sink).has_value());
  ASSERT_EQ(sink.count(), 1u);
  EXPECT_THAT(sink.get_diagnostics()[0].message, HasSubstr("is a directory (expected a YAML file)"));
}

TEST(ReadInputText, SaysWhenThePathIsEmpty) {
  DiagnosticSink sink("");
  EXPECT_FALSE(read_input_text("", sink).has_value());
  EXPECT_THAT(lines_of(sink), ElementsAre("<input>: error: empty path (expected the name of a YAML file)"));
}

// `describe FIFO` hung in open() until some process wrote to the FIFO. Now a FIFO without a
// writer is an error at once, and a pipe being written (`<(cat x.yaml)`) is read whole.
TEST(ReadInputText, FifoWithoutWriterDoesNotHang) {
  const std::string fifo = testing::TempDir() + "/hetsim-fifo-" + std::to_string(::getpid());
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  DiagnosticSink sink(fifo);
  auto read = std::async(std::launch::async, [&] { return read_input_text(fifo, sink); });
  if (read.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    ADD_FAILURE() << "read_input_text blocks on a FIFO without a writer";
    std::ofstream(fifo) << "";  // release the reader so that the test ends
  }
  // Nothing to read is the pipe's error, not an "empty file" (there is no file to look at).
  EXPECT_FALSE(read.get().has_value());
  EXPECT_THAT(lines_of(sink), ElementsAre(fifo + ": error: a pipe that nothing was written to (expected a YAML file, "
                                                 "or a pipe that a running process writes)"));
  // A pipe with data and a finished writer, as `<(cat x.yaml)` gives: read whole.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string yaml = "kind: cluster\n";
  ASSERT_EQ(::write(fds[1], yaml.data(), yaml.size()), static_cast<ssize_t>(yaml.size()));
  ::close(fds[1]);
  DiagnosticSink piped("pipe");
  EXPECT_EQ(read_input_text("/dev/fd/" + std::to_string(fds[0]), piped).value_or(""), yaml);
  // Read again (describe reads an input's kind, then the input): the same text, not EOF.
  EXPECT_EQ(read_input_text("/dev/fd/" + std::to_string(fds[0]), piped).value_or(""), yaml);
  ::close(fds[0]);
  // Another pipe that gets the same descriptor number is read for itself.
  ASSERT_EQ(::pipe(fds), 0);
  const std::string other = "kind: workload\n";
  ASSERT_EQ(::write(fds[1], other.data(), other.size()), static_cast<ssize_t>(other.size()));
  ::close(fds[1]);
  EXPECT_EQ(read_input_text("/dev/fd/" + std::to_string(fds[0]), piped).value_or(""), other);
  ::close(fds[0]);
  ::unlink(fifo.c_str());
}

// YAML 1.2 line breaks (spec 5.4): LF, CRLF and a lone CR. yaml-cpp takes a lone CR as part of
// the line, which made a CR-only file one line with an 'illegal map value' at its first colon.
TEST(ParseDocument, ReadsEveryKindOfLineBreak) {
  for (const std::string nl : {"\n", "\r\n", "\r"}) {
    DiagnosticSink sink("f.yaml");
    const auto doc = parse_yaml_document("kind: workload" + nl + "name: x" + nl + "model: {layers: 2}" + nl, sink);
    ASSERT_TRUE(doc.has_value()) << lines_of(sink)[0];
    EXPECT_EQ((*doc)["name"].as<std::string>(), "x");
    EXPECT_EQ((*doc)["model"].Mark().line, 2);  // marks count lines as the user's editor does
  }
}

TEST(ParseDocument, AcceptsUtf8AndComments) {
  DiagnosticSink sink("f.yaml");
  const auto doc = parse_yaml_document("# caf\xc3\xa9\nname: \"\xe2\x82\xac\"\n", sink);
  ASSERT_TRUE(doc.has_value());
  EXPECT_TRUE(sink.empty());
}

TEST(MapReader, ReadsTypedValuesAndReportsUnknownKeys) {
  DiagnosticSink sink("f.yaml");
  const auto doc = parse_yaml_document(
      "count: 8\nratio: 0.5\nflag: true\nname: x\nbw: \"25GB/s\"\nmode: ring\nbandwith: 3\n", sink);
  ASSERT_TRUE(doc);
  MapReader r(*doc, "", sink, doc->Mark());
  EXPECT_EQ(r.get_int("count", Need::kRequired, 1), 8);
  EXPECT_EQ(r.get_number("ratio", Need::kRequired, 0, 1), 0.5);
  EXPECT_EQ(r.get_bool("flag", Need::kRequired), true);
  EXPECT_EQ(r.get_string("name", Need::kRequired), "x");
  EXPECT_EQ(r.get_quantity("bw", Need::kRequired, parse_bandwidth, "a bandwidth", true), 25e9);
  const EnumTable<int> modes = {{"ring", 1}, {"tree", 2}};
  EXPECT_EQ(r.get_enum("mode", Need::kRequired, modes), 1);
  EXPECT_EQ(r.get_int("absent", Need::kOptional), std::nullopt);
  EXPECT_TRUE(sink.empty());
  r.finish();
  EXPECT_THAT(lines_of(sink), ElementsAre("f.yaml:7:1: error: unknown key 'bandwith' (expected one of: count, ratio, flag, name, bw, mode, absent)"));
}

TEST(MapReader, MissingKeysPointAtTheParent) {
  DiagnosticSink sink("f.yaml");
  const auto doc = parse_yaml_document("kind: x\nnics:\n  count: 2\n", sink);
  ASSERT_TRUE(doc);
  MapReader root(*doc, "", sink, doc->Mark());
  auto nics = root.get_map("nics", Need::kRequired);
  ASSERT_TRUE(nics);
  EXPECT_EQ(nics->get_quantity("bandwidth", Need::kRequired, parse_bandwidth, "a bandwidth such as \"200Gbps\"", true),
            std::nullopt);
  EXPECT_THAT(lines_of(sink),
              ElementsAre("f.yaml:2:1: error: nics: missing key 'bandwidth' (expected a bandwidth such as \"200Gbps\")"));
}

TEST(MapReader, WrongTypesSayWhatWasFound) {
  DiagnosticSink sink("f.yaml");
  const auto doc = parse_yaml_document(
      "a: \"8\"\nb: 1.5\nc: [1]\nd: yes\ne: 300\nf: fast\ng:\nh: 4\ni: !!str 8\n", sink);
  ASSERT_TRUE(doc);
  MapReader r(*doc, "x", sink, doc->Mark());
  r.get_int("a", Need::kRequired);
  r.get_int("b", Need::kRequired);
  r.get_string("c", Need::kRequired);
  r.get_bool("d", Need::kRequired);
  r.get_quantity("e", Need::kRequired, parse_time, "a time such as \"5us\"", false);
  r.get_enum("f", Need::kRequired, EnumTable<int>{{"slow", 0}, {"fastest", 1}});
  r.get_map("g", Need::kRequired);
  r.get_int("h", Need::kRequired, 0, 3);
  r.get_int("i", Need::kRequired);
  EXPECT_THAT(lines_of(sink),
              ElementsAre("f.yaml:9:4: error: YAML tag '!!str' is not supported (expected a plain value, without a tag)",
                          "f.yaml:1:4: error: x.a: expected an integer, got the string \"8\"",
                          "f.yaml:2:4: error: x.b: expected an integer, got '1.5'",
                          "f.yaml:3:4: error: x.c: expected a string, got a list",
                          "f.yaml:4:4: error: x.d: expected true or false, got 'yes'",
                          "f.yaml:5:4: error: x.e: missing unit in \"300\" (expected a time such as \"300us\")",
                          "f.yaml:6:4: error: x.f: unknown value 'fast' (did you mean 'fastest'? expected one of: slow, fastest)",
                          "f.yaml:7:1: error: x.g: expected a map, got nothing",
                          "f.yaml:8:4: error: x.h: value 4 out of range (expected an integer between 0 and 3)",
                          "f.yaml:9:4: error: x.i: expected an integer, got '8' tagged tag:yaml.org,2002:str"));
}

// A number without its unit gets the unit of the field's own example where that puts it nearer
// the example's value: a NIC's "100" was told "100GB/s", 8x the 100 Gb/s port meant (s67).
TEST(MapReader, MissingUnitSuggestsTheFieldsOwnUnit) {
  DiagnosticSink sink("f.yaml");
  const auto doc = parse_yaml_document("nic: 100\nmem: 2039\nlatency: 0.000002\nlink: 0.5\n", sink);
  MapReader r(*doc, "x", sink, doc->Mark());
  r.get_quantity("nic", Need::kRequired, parse_bandwidth, "a bandwidth such as \"200Gbps\"", true);
  r.get_quantity("mem", Need::kRequired, parse_bandwidth, "a bandwidth such as \"2039GB/s\"", true);
  r.get_quantity("latency", Need::kRequired, parse_time, "a time such as \"5us\"", false);
  r.get_quantity("link", Need::kRequired, parse_time, "a time such as \"5us\"", false);
  EXPECT_THAT(lines_of(sink),
              ElementsAre("f.yaml:1:6: error: x.nic: missing unit in \"100\" (expected a bandwidth such as \"100Gbps\")",
                          "f.yaml:2:6: error: x.mem: missing unit in \"2039\" (expected a bandwidth such as \"2039GB/s\")",
                          // Seconds sit nearer 5 us than microseconds do: the unit parser's own choice.
                          "f.yaml:3:10: error: x.latency: missing unit in \"0.000002\" (expected a time such as \"0.000002s\")",
                          "f.yaml:4:7: error: x.link: missing unit in \"0.5\" (expected a time such as \"0.5us\")"));
}

TEST(MapReader, DuplicateKeysAreErrors) {
  DiagnosticSink sink("f.yaml");
  const auto doc = parse_yaml_document("a: 1\nb: 2\na: 3\n", sink);
  ASSERT_TRUE(doc);
  MapReader r(*doc, "", sink, doc->Mark());
  EXPECT_EQ(r.get_int("a", Need::kRequired), 1);
  EXPECT_THAT(lines_of(sink), ElementsAre("f.yaml:3:1: error: duplicate key 'a' (first given at line 1)"));
}

// A null key has no position of its own and an alias key carries its anchor's: both were
// reported at the map's parent or at the anchor, lines away from where they are written.
TEST(MapReader, NullAndAliasKeysAreReportedWhereTheyAreWritten) {
  DiagnosticSink sink("f.yaml");
  const auto doc = parse_yaml_document("name: &n box\nm:\n  a: 1\n  ~: 5\n  *n : 6\n", sink);
  ASSERT_TRUE(doc);
  MapReader root(*doc, "", sink, doc->Mark());
  root.get_string("name", Need::kRequired);
  if (auto m = root.get_map("m", Need::kRequired)) {
    m->get_int("a", Need::kRequired);
    m->finish();
  }
  root.finish();
  EXPECT_THAT(lines_of(sink), ElementsAre("f.yaml:4:6: error: m: keys must be plain names, got nothing",
                                          "f.yaml:5:8: error: m: unknown key 'box' (expected one of: a)"));
}

TEST(DiagnosticSink, LocatesFieldsByLongestPrefixAndSortsByPosition) {
  DiagnosticSink sink("f.yaml");
  YAML::Mark m;
  m.line = 4;
  m.column = 2;
  sink.remember("replicas[0].stages", m);
  EXPECT_EQ(sink.locate("replicas[0].stages[1].gpus").line, 4);
  EXPECT_EQ(sink.locate("other").line, -1);
  YAML::Mark late, early;
  late.line = 9;
  early.line = 1;
  sink.error(late, "b", "second");
  sink.error(early, "a", "first");
  try {
    sink.throw_if_any();
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.get_diagnostics()[0].field, "a");
    EXPECT_EQ(e.get_diagnostics()[1].field, "b");
  }
}

}  // namespace
}  // namespace hetsim::models
