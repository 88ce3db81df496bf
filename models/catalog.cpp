// SPDX-License-Identifier: Apache-2.0
// The device catalog: lookup by name and the bundled catalog (clusters/catalog/*.yaml).
#include "catalog.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include "input_loader.hpp"
#include "yaml_reader.hpp"

#ifndef HETSIM_CATALOG_DIR
#define HETSIM_CATALOG_DIR "clusters/catalog"
#endif

namespace hetsim::models {

const GpuType& Catalog::by_name(const std::string& name) const {
  if (const GpuType* t = by_name_or_null(name)) return *t;
  throw std::out_of_range(unknown_gpu_message(name));
}

std::string Catalog::unknown_gpu_message(const std::string& name) const {
  // A family name ("a100", "V100") is the start of several parts' keys, and a name that leaves a
  // word out ("a100-80gb", "H100 SXM") has each of its words start a word of some parts' names:
  // list those parts, not the edit-distance guess ("a100" is one letter from "a10", a different
  // GPU; "a100-80gb" is closest to "a100-pcie-80gb" only by spelling, not by meaning).
  const std::string key = device_name_key(name);
  const std::vector<std::string> words = device_name_words(name);
  std::vector<std::string> parts;
  auto list = [&](const std::string& type_name) {
    if (std::find(parts.begin(), parts.end(), type_name) == parts.end()) parts.push_back(type_name);
  };
  if (!key.empty()) {
    for (const auto& [type_key, type_name] : name_of_key_)
      if (type_key.compare(0, key.size(), key) == 0) list(type_name);
    for (const auto& [type_name, type] : types_) {
      if (words_start_words(words, device_name_words(type_name))) list(type_name);
      for (const std::string& alias : type.aliases)
        if (words_start_words(words, device_name_words(alias))) list(type_name);
    }
  }
  if (parts.size() > 1) {
    std::sort(parts.begin(), parts.end());
    return "unknown GPU '" + name + "' (it could be any of: " + join_names(parts) + "; write the one you mean)";
  }
  if (parts.size() == 1) {  // "NVIDIA H100-SXM": the edit distance of the printed spelling finds nothing
    return "unknown GPU '" + name + "' (did you mean '" + parts.front() + "'? known: " + join_names(get_names()) + ")";
  }
  std::string message = unknown_name_message("unknown GPU", name, get_names());
  // A name of no part at all: a type the user added to another folder than the one this hetsim
  // reads is the usual cause.
  if (!folder_.empty() && !message.empty() && message.back() == ')') {
    // Where the folder came from: "or from $HETSIM_CATALOG_DIR when set" beside the folder the
    // variable itself names read as if it were not set (s67 walkthrough).
    const bool from_environment = folder_ == builtin_dir() && builtin_dir_from_environment();
    message.insert(message.size() - 1, "; GPU types are read from " + folder_ +
                                           (from_environment ? " ($HETSIM_CATALOG_DIR)" : ", or from $HETSIM_CATALOG_DIR when set") +
                                           ": docs/adding-inputs.md");
  }
  return message;
}

std::vector<std::string> device_name_words(std::string_view name) {
  // Words printed before the product name by nvidia-smi ("NVIDIA GeForce RTX 3090", "Tesla
  // V100-SXM2-16GB") and rocm-smi ("AMD Instinct MI300X"); none is a product on its own.
  static const char* const kBrandWords[] = {"nvidia", "tesla", "geforce", "amd", "instinct"};
  std::vector<std::string> words;
  std::string word;
  auto flush_word = [&] {
    bool brand = false;
    for (const char* b : kBrandWords) brand = brand || word == b;
    if (!brand && !word.empty()) words.push_back(word);
    word.clear();
  };
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      word += static_cast<char>(std::tolower(u));
    } else {
      flush_word();
    }
  }
  flush_word();
  return words;
}

std::string device_name_key(std::string_view name) {
  std::string key;
  for (const std::string& word : device_name_words(name)) key += word;
  return key;
}

bool words_start_words(const std::vector<std::string>& words, const std::vector<std::string>& of) {
  if (words.empty()) return false;
  return std::all_of(words.begin(), words.end(), [&](const std::string& w) {
    return std::any_of(of.begin(), of.end(), [&](const std::string& o) { return o.compare(0, w.size(), w) == 0; });
  });
}

bool names_type(const GpuType& t, std::string_view spelling) {
  if (spelling == t.name) return true;
  const std::string key = device_name_key(spelling);
  if (key.empty()) return false;
  if (!t.exact_name && key == device_name_key(t.name)) return true;
  return std::any_of(t.aliases.begin(), t.aliases.end(), [&](const std::string& a) { return device_name_key(a) == key; });
}

const GpuType* Catalog::by_name_or_null(const std::string& name) const {
  if (const auto it = types_.find(name); it != types_.end()) return &it->second;
  const auto owner = name_of_key_.find(device_name_key(name));
  if (owner == name_of_key_.end()) return nullptr;
  const auto it = types_.find(owner->second);
  return it != types_.end() && names_type(it->second, name) ? &it->second : nullptr;
}

std::vector<Catalog::SpellingClash> Catalog::find_spelling_clashes(const GpuType& t) const {
  std::vector<SpellingClash> out;
  for (std::size_t i = 0; i <= t.aliases.size(); ++i) {
    std::string key = device_name_key(i == 0 ? t.name : t.aliases[i - 1]);
    const auto owner = name_of_key_.find(key);
    if (owner != name_of_key_.end() && owner->second != t.name) out.push_back(SpellingClash{i, std::move(key), owner->second});
  }
  return out;
}

std::optional<Catalog::SpellingClash> Catalog::find_spelling_clash(const GpuType& t) const {
  std::vector<SpellingClash> all = find_spelling_clashes(t);
  if (all.empty()) return std::nullopt;
  return std::move(all.front());
}

std::vector<std::string> Catalog::get_names() const {
  std::vector<std::string> names;
  names.reserve(types_.size());
  for (const auto& [name, type] : types_) names.push_back(name);
  return names;
}

void Catalog::add(GpuType type) {
  if (const auto clash = find_spelling_clash(type)) {
    throw std::invalid_argument("GPU type '" + type.name + "': the name or an alias reads as '" + clash->key +
                                "', which already names '" + clash->owner + "'");
  }
  std::vector<std::string> keys{device_name_key(type.name)};
  for (const auto& alias : type.aliases) keys.push_back(device_name_key(alias));
  // A replaced type's old spellings go: an alias dropped from it must stop naming it.
  std::erase_if(name_of_key_, [&](const auto& entry) { return entry.second == type.name; });
  for (auto& key : keys) name_of_key_.insert_or_assign(std::move(key), type.name);
  std::string name = type.name;
  types_.insert_or_assign(std::move(name), std::move(type));
}

bool Catalog::builtin_dir_from_environment() {
  // $HETSIM_CATALOG_DIR lets an installed binary or a test point at another catalog.
  const char* env = std::getenv("HETSIM_CATALOG_DIR");
  return env != nullptr && *env != '\0';
}

std::string Catalog::builtin_dir() {
  return builtin_dir_from_environment() ? std::getenv("HETSIM_CATALOG_DIR") : HETSIM_CATALOG_DIR;
}

const Catalog& Catalog::builtin() {
  static const Catalog catalog = load_catalog_dir(builtin_dir());
  return catalog;
}

}  // namespace hetsim::models
