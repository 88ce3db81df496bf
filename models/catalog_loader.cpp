// SPDX-License-Identifier: Apache-2.0
// Loader of `kind: gpu-catalog` files (docs/inputs.md): datasheet figures of device types.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "loader_common.hpp"

namespace hetsim::models {
namespace {

/// The plain words YAML 1.1 reads as booleans (yaml.org/type/bool.html), any case.
bool is_yaml_boolean_word(const std::string& text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  for (const char* word : {"y", "n", "yes", "no", "true", "false", "on", "off"})
    if (lower == word) return true;
  return false;
}


const EnumTable<Vendor>& vendor_table() {
  static const EnumTable<Vendor> t = {{"nvidia", Vendor::kNvidia}, {"amd", Vendor::kAmd}, {"cpu", Vendor::kCpu}};
  return t;
}

/// A catalog name's form: a lowercase letter or digit, then lowercase letters, digits, '-', '.'
/// and '_' (docs/adding-inputs.md step 2).
bool is_catalog_name(const std::string& name) {
  const auto allowed = [](unsigned char ch) { return std::islower(ch) || std::isdigit(ch) || ch == '-' || ch == '.' || ch == '_'; };
  return !name.empty() && (std::islower(static_cast<unsigned char>(name[0])) || std::isdigit(static_cast<unsigned char>(name[0]))) &&
         std::all_of(name.begin(), name.end(), allowed);
}

std::optional<GpuType> read_gpu(const MapReader::Entry& entry, const std::string& path, DiagnosticSink& sink) {
  MapReader r(entry.value, path, sink, entry.key_mark);
  GpuType t;
  t.name = entry.name;
  const size_t errors_before = sink.count();
  if (device_name_key(t.name).empty()) {
    sink.error(entry.key_mark, path, "name '" + t.name + "' names no product, only vendor words or punctuation (expected e.g. \"a100-sxm4-80gb\")");
  } else if (!is_catalog_name(t.name)) {
    // The catalog's own spelling, which reports, profiles and sweeps print (a key "L20 48GB"
    // loaded and was printed so everywhere: s60 walkthrough); what a runtime prints is an alias.
    sink.error(entry.key_mark, path, "name '" + t.name + "' is not lowercase letters, digits, '-', '.' and '_' (expected e.g. \"a100-sxm4-80gb\"; a device name as a runtime prints it goes under aliases)");
  }
  if (auto v = r.get_enum("vendor", Need::kRequired, vendor_table())) t.vendor = *v;
  if (auto peak = r.get_map("peak", Need::kRequired)) {
    for (const auto& [name, dtype] : detail::dtype_table()) {
      if (auto f = peak->get_quantity(name, Need::kOptional, parse_flops, "a FLOP rate such as \"312TFLOP/s\"", true))
        t.peak_flops[dtype] = *f;
    }
    peak->finish();
    if (peak->ok() && t.peak_flops.empty() && sink.count() == errors_before) {
      sink.error(peak->get_anchor(), peak->get_path(), "no peak given (expected at least one of: fp32, tf32, fp16, bf16, fp8)");
    }
  }
  if (auto v = r.get_quantity("memory", Need::kRequired, parse_size, "a size such as \"80GiB\"", true))
    t.memory_bytes = *v;
  if (auto v = r.get_quantity("memory_bandwidth", Need::kRequired, parse_bandwidth, "a bandwidth such as \"2039GB/s\"", true))
    t.memory_bandwidth_Bps = *v;
  if (auto v = r.get_quantity("host_link", Need::kOptional, parse_bandwidth, "a bandwidth such as \"31.5GB/s\"", true))
    t.host_link_Bps = *v;
  if (auto eff = r.get_map("efficiency", Need::kOptional)) {
    EfficiencyModel& e = t.efficiency;
    if (auto v = eff->get_number("gemm", Need::kOptional, kMinEfficiency, 1)) e.gemm_efficiency = *v, e.gemm_given = true;
    if (auto v = eff->get_number("gemm_fp32", Need::kOptional, kMinEfficiency, 1)) e.gemm_fp32_efficiency = *v;
    if (auto v = eff->get_number("gemm_memory", Need::kOptional, kMinEfficiency, 1)) e.gemm_memory_efficiency = *v;
    if (auto v = eff->get_number("gemm_k0", Need::kOptional, 0, 65536)) e.gemm_k0 = *v;
    if (auto v = eff->get_number("gemm_full_outputs", Need::kOptional, 0, 1e12)) e.gemm_full_outputs = *v;
    if (auto v = eff->get_quantity("gemm_half_work", Need::kOptional, parse_flop, "an amount of work such as \"1GFLOP\"", false))
      e.gemm_half_work_flop = *v;
    if (auto v = eff->get_number("memory", Need::kOptional, kMinEfficiency, 1)) e.memory_efficiency = *v;
    if (auto v = eff->get_number("optimizer_memory", Need::kOptional, kMinEfficiency, 1))
      e.optimizer_memory_efficiency = *v;
    if (auto v = eff->get_quantity("kernel_launch", Need::kOptional, parse_time, "a time such as \"5us\"", false,
                                   kMaxKernelLaunch_s, "1ms"))
      e.kernel_launch_s = *v;
    if (auto v = eff->get_quantity("framework_op_host", Need::kOptional, parse_time, "a time such as \"48us\"", false,
                                   kMaxFrameworkOpHost_s, "10ms"))
      e.framework_op_host_s = *v;
    if (auto v = eff->get_quantity("framework_pass_host", Need::kOptional, parse_time, "a time such as \"1.5ms\"", false,
                                   kMaxFrameworkPassHost_s, "1s"))
      e.framework_pass_host_s = *v;
    if (auto v = eff->get_number("flash", Need::kOptional, kMinEfficiency, 1)) e.flash_scale = *v, e.flash_given = true;
    eff->finish();
  }
  if (auto v = r.get_string("source", Need::kRequired)) t.source = *v;
  if (auto list = r.get_list("aliases", Need::kOptional)) {
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string field = index_path(r.field("aliases"), i);
      const YAML::Mark at = value_mark((*list)[i], r.value_mark_of("aliases"));
      const auto alias = read_string((*list)[i], field, at, sink);
      if (!alias) continue;
      sink.remember(field, at);  // a clash found later (name_clashes) points here
      if (device_name_key(*alias).empty()) {
        sink.error(at, field, "alias '" + *alias + "' names no product, only vendor words or punctuation (expected e.g. \"H100 80GB HBM3\")");
        continue;
      }
      // A name a runtime reports has letters ("H100 80GB HBM3", "AMD Instinct MI250X"): a bare
      // number, or an unquoted YAML 1.1 boolean (yes, true, on...), is a slip, not a device.
      if (std::none_of(alias->begin(), alias->end(), [](unsigned char ch) { return std::isalpha(ch) != 0; })) {
        sink.error(at, field, "alias '" + *alias + "' has no letter: a device name as its runtime reports it is expected (e.g. \"H100 80GB HBM3\")");
        continue;
      }
      if (is_plain((*list)[i]) && is_yaml_boolean_word(*alias)) {
        sink.error(at, field, "alias " + *alias + " is a YAML boolean, not a device name (quote it if a device is really named so)");
        continue;
      }
      t.aliases.push_back(*alias);
    }
  }
  if (auto v = r.get_bool("exact_name", Need::kOptional)) t.exact_name = *v;
  r.finish();
  if (sink.count() != errors_before) return std::nullopt;
  return t;
}

/// A name or alias of a type that reads (device_name_key) like another type's name or alias.
struct NameClash {
  std::string field;  ///< gpus.<name> or gpus.<name>.aliases[i]
  std::string message;
  std::string key;    ///< the device_name_key both spellings read as
  std::string owner;  ///< the other type
};

/// Why `t` cannot join the catalog, one entry per spelling that clashes (all of them, not only
/// the first: s52 bad-input hunt); empty when it can. `defined_in` (catalog name -> file), when
/// given, says in which file the other type is.
std::vector<NameClash> name_clashes(const Catalog& catalog, const GpuType& t,
                                    const std::map<std::string, std::string>* defined_in = nullptr) {
  std::vector<NameClash> out;
  const std::string path = field_path("gpus", t.name);
  for (const Catalog::SpellingClash& clash : catalog.find_spelling_clashes(t)) {
    const size_t i = clash.spelling;
    std::string where;
    if (defined_in) {
      if (const auto it = defined_in->find(clash.owner); it != defined_in->end()) where = " in " + it->second;
    }
    // Whether the other type's clashing spelling is its name or one of its aliases: an alias
    // someone gave a new type ("L4" on an L20) stops the bundled type of that name from loading.
    const GpuType* owner = catalog.by_name_or_null(clash.owner);
    const bool owners_alias = owner && device_name_key(owner->name) != clash.key;
    out.push_back(NameClash{i == 0 ? path : index_path(path + ".aliases", i - 1),
                            "'" + (i == 0 ? t.name : t.aliases[i - 1]) + "' reads as '" + clash.key + "', as " +
                                (owners_alias ? "an alias of " : "") + "GPU type '" + clash.owner + "'" + where +
                                " does (expected names and aliases that differ in more than case, punctuation and "
                                "vendor words)",
                            clash.key, clash.owner});
  }
  return out;
}

/// Reports every clash of `clashes` in `sink`; whether there was any.
bool report_clashes(const std::vector<NameClash>& clashes, DiagnosticSink& sink) {
  for (const NameClash& clash : clashes) sink.error(sink.locate(clash.field), clash.field, clash.message);
  return !clashes.empty();
}

std::vector<GpuType> parse_catalog_into(std::string_view text, DiagnosticSink& sink) {
  std::vector<GpuType> out;
  auto root = detail::open_document(text, sink, InputKind::kGpuCatalog);
  if (!root) return out;
  if (auto entries = root->get_entries("gpus", Need::kRequired, 1)) {
    Catalog this_file;  // the types read so far, to catch two spellings of one name
    for (const auto& entry : *entries) {
      auto t = read_gpu(entry, field_path("gpus", entry.name), sink);
      if (!t) continue;
      if (report_clashes(name_clashes(this_file, *t), sink)) continue;
      this_file.add(*t);
      out.push_back(std::move(*t));
    }
  }
  root->finish();
  return out;
}

}  // namespace

std::vector<GpuType> parse_catalog(std::string_view text, const std::string& name) {
  DiagnosticSink sink(name);
  auto types = parse_catalog_into(text, sink);
  sink.throw_if_any();
  return types;
}

std::vector<GpuType> load_catalog_file(const std::string& path) {
  return parse_catalog(detail::read_file_or_throw(path), path);
}

bool is_catalog_file_name(const std::string& file_name) {
  // Hidden files are an editor's (emacs' `.#nvidia.yaml` lock link, vim's swap files): one
  // made every command fail while a catalog file was open (s52 bad-input hunt).
  if (!file_name.empty() && file_name[0] == '.') return false;
  std::string ext = std::filesystem::path(file_name).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return ext == ".yaml" || ext == ".yml";
}

Catalog load_catalog_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    // A *.yaml that cannot even be examined (a symlink loop) is read too, so that it fails as
    // a file of the catalog, with its name, rather than as an exception.
    std::error_code entry_ec;
    const bool regular = e.is_regular_file(entry_ec);
    if (is_catalog_file_name(e.path().filename().string()) && (regular || entry_ec)) files.push_back(e.path().string());
  }
  if (ec || files.empty()) {
    Diagnostic d;
    d.file = dir;
    d.message = ec ? "cannot read catalog folder: " + ec.message() + " (expected a folder of gpu-catalog YAML files)"
                   : "no *.yaml files (expected a folder of gpu-catalog YAML files)";
    throw ConfigError({d});
  }
  std::sort(files.begin(), files.end());
  Catalog catalog;
  catalog.set_folder(dir);
  std::vector<Diagnostic> all;
  std::map<std::string, std::string> defined_in;
  // Where each name was first defined: a repeat is reported at both places, since the file read
  // first (in name order) may be the user's new one, which the fix is likely to touch.
  std::map<std::string, Diagnostic> first_definition;
  // Where each spelling (device_name_key of a name or alias) of the loaded types is written, to
  // report a later clash at both places.
  struct Spelling {
    Diagnostic at;  ///< file, line, column and field of the name or alias (no message)
    std::string text;
  };
  std::map<std::string, Spelling> spelling_at;
  for (const auto& file : files) {
    DiagnosticSink sink(file);
    if (auto text = read_input_text(file, sink)) {
      for (auto& t : parse_catalog_into(*text, sink)) {
        const std::string field = field_path("gpus", t.name);
        const YAML::Mark at = sink.locate(field);
        const auto [it, fresh] = defined_in.emplace(t.name, file);
        if (!fresh) {
          sink.error(at, field, "GPU type '" + t.name + "' is already defined in " + it->second + " (expected unique names)");
          if (auto first = first_definition.extract(t.name)) {  // once per name
            first.mapped().message = "GPU type '" + t.name + "' is defined again in " + file + " (expected unique names)";
            all.push_back(std::move(first.mapped()));
          }
          continue;
        }
        first_definition[t.name] = Diagnostic{file, at.line + 1, at.column + 1, field, ""};
        const std::vector<NameClash> clashes = name_clashes(catalog, t, &defined_in);
        // The other spelling is reported too, once: the file read first (in name order) may be
        // the user's new one, whose alias is the slip (s60 walkthrough: an alias "L4" on a new
        // type was reported only at the bundled l4 entry).
        for (const NameClash& clash : clashes)
          if (auto other = spelling_at.extract(clash.key)) {
            Diagnostic d = std::move(other.mapped().at);
            d.message = "'" + other.mapped().text + "' of GPU type '" + clash.owner + "' reads as '" + clash.key +
                        "', as GPU type '" + t.name + "' in " + file +
                        (clash.field == field ? "" : " (" + clash.field + ")") +
                        " does (expected names and aliases that differ in more than case, punctuation and vendor "
                        "words)";
            all.push_back(std::move(d));
          }
        if (report_clashes(clashes, sink)) continue;
        for (std::size_t i = 0; i <= t.aliases.size(); ++i) {
          const std::string spelling_field = i == 0 ? field : index_path(field + ".aliases", i - 1);
          const YAML::Mark mark = sink.locate(spelling_field);
          const std::string& text = i == 0 ? t.name : t.aliases[i - 1];
          spelling_at[device_name_key(text)] = Spelling{{file, mark.line + 1, mark.column + 1, spelling_field, ""}, text};
        }
        catalog.add(std::move(t));
      }
    }
    all.insert(all.end(), sink.get_diagnostics().begin(), sink.get_diagnostics().end());
  }
  if (!all.empty()) throw ConfigError(std::move(all));
  return catalog;
}

}  // namespace hetsim::models
