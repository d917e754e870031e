#include "engine/grammar/grammar.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <span>

#include "engine/grammar/gbnf_syntax.h"
#include "engine/grammar/gbnf_text.h"

namespace infertune {

// Compiles the syntax tree into a Grammar: rule ids, flat element runs, groups and repetitions as rules of
// their own; then refuses undefined rules and left recursion.
class GrammarBuilder {
 public:
  Result<Grammar> build(const std::vector<GbnfRule>& rules, std::string_view root) {
    for (const GbnfRule& rule : rules) {
      if (Status st = define(rule); !st) return st.error();
    }
    if (Status st = check_defined(); !st) return st.error();
    const auto root_id = ids_.find(std::string(root));
    if (root_id == ids_.end()) return fail("grammar: no rule named '{}' (the rule generation starts from)", root);
    grammar_.root_ = root_id->second;
    if (Status st = check_left_recursion(); !st) return st.error();
    return std::move(grammar_);
  }

 private:
  struct RuleInfo {
    bool defined = false;
    SourcePosition position{};   // where it is defined, or first used while undefined
    uint32_t n_synthesized = 0;  // groups and repetitions named after it so far
  };

  uint32_t rule_id(const std::string& name, SourcePosition used_at) {
    const auto [it, inserted] = ids_.try_emplace(name, static_cast<uint32_t>(grammar_.names_.size()));
    if (inserted) {
      grammar_.names_.push_back(name);
      grammar_.alternatives_.emplace_back();
      info_.push_back({.position = used_at});
    }
    return it->second;
  }

  Status define(const GbnfRule& rule) {
    const uint32_t id = rule_id(rule.name, rule.position);
    if (info_[id].defined) {
      return fail("grammar line {}, column {}: rule '{}' is defined twice (first on line {})", rule.position.line,
                  rule.position.column, rule.name, info_[id].position.line);
    }
    info_[id].defined = true;
    info_[id].position = rule.position;
    return define_alternatives(id, rule.alternatives, rule.name);
  }

  Status define_alternatives(uint32_t id, const std::vector<GbnfSequence>& alternatives, const std::string& base) {
    std::vector<std::vector<GrammarElement>> compiled;
    for (const GbnfSequence& sequence : alternatives) {
      std::vector<GrammarElement> elements;
      for (const GbnfItem& item : sequence.items) {
        if (Status st = emit_item(item, base, elements); !st) return st;
      }
      compiled.push_back(std::move(elements));
    }
    for (const auto& elements : compiled) add_alternative(id, elements);
    return {};
  }

  void add_alternative(uint32_t id, const std::vector<GrammarElement>& elements) {
    grammar_.alternatives_[id].push_back(static_cast<uint32_t>(grammar_.elements_.size()));
    grammar_.elements_.insert(grammar_.elements_.end(), elements.begin(), elements.end());
    grammar_.elements_.push_back({.kind = GrammarElement::Kind::End});
  }

  // A rule of its own for a group or a repetition, named "base_N" as llama.cpp names them.
  uint32_t synthesize(const std::string& base, SourcePosition position) {
    const uint32_t base_id = ids_.at(base);
    const std::string name = fmt::format("{}_{}", base, ++info_[base_id].n_synthesized);
    const uint32_t id = rule_id(name, position);
    info_[id].defined = true;
    return id;
  }

  GrammarElement reference(uint32_t rule) const { return {.kind = GrammarElement::Kind::RuleRef, .rule = rule}; }

  GrammarElement chars(const std::vector<CodePointRange>& ranges, bool negated) {
    const auto first = static_cast<uint32_t>(grammar_.ranges_.size());
    grammar_.ranges_.insert(grammar_.ranges_.end(), ranges.begin(), ranges.end());
    return {.kind = GrammarElement::Kind::Chars,
            .negated = negated,
            .first_range = first,
            .n_ranges = static_cast<uint32_t>(ranges.size())};
  }

  // The item once, as elements.
  Result<std::vector<GrammarElement>> atom(const GbnfItem& item, const std::string& base) {
    switch (item.kind) {
      case GbnfItem::Kind::Literal: {
        std::vector<GrammarElement> out;
        for (uint32_t cp : item.literal) out.push_back(chars({{cp, cp}}, false));
        return out;
      }
      case GbnfItem::Kind::Chars:
        return std::vector<GrammarElement>{chars(item.ranges, item.negated)};
      case GbnfItem::Kind::RuleRef:
        return std::vector<GrammarElement>{reference(rule_id(item.name, item.position))};
      case GbnfItem::Kind::Group: {
        const uint32_t id = synthesize(base, item.position);
        if (Status st = define_alternatives(id, item.alternatives, base); !st) return st.error();
        return std::vector<GrammarElement>{reference(id)};
      }
    }
    return std::vector<GrammarElement>{};
  }

  // The item with its repetition: x{2,4} -> x x (x (x)?)?, x{1,} -> x x*, with x* -> rule ::= x rule | (empty).
  Status emit_item(const GbnfItem& item, const std::string& base, std::vector<GrammarElement>& out) {
    auto once = atom(item, base);
    if (!once) return once.error();
    if (item.min == 1 && item.max == 1) {
      out.insert(out.end(), once->begin(), once->end());
      return {};
    }
    if (once->size() != 1) {  // a literal of several characters repeats as one
      const uint32_t id = synthesize(base, item.position);
      add_alternative(id, *once);
      *once = {reference(id)};
    }
    const GrammarElement x = once->front();
    for (uint32_t i = 0; i < item.min; ++i) out.push_back(x);
    if (item.max == kUnbounded) {
      const uint32_t star = synthesize(base, item.position);
      add_alternative(star, {x, reference(star)});
      add_alternative(star, {});
      out.push_back(reference(star));
    } else if (item.max > item.min) {
      std::optional<uint32_t> inner;
      for (uint32_t k = item.min; k < item.max; ++k) {
        const uint32_t optional = synthesize(base, item.position);
        std::vector<GrammarElement> body{x};
        if (inner) body.push_back(reference(*inner));
        add_alternative(optional, body);
        add_alternative(optional, {});
        inner = optional;
      }
      out.push_back(reference(*inner));
    }
    return {};
  }

  Status check_defined() const {
    for (size_t id = 0; id < info_.size(); ++id) {
      if (!info_[id].defined) {
        return fail("grammar: rule '{}' is used (line {}, column {}) but never defined", grammar_.names_[id],
                    info_[id].position.line, info_[id].position.column);
      }
    }
    return {};
  }

  // Rules that can match the empty text. A worklist, linear in the grammar's size: a rule becomes nullable when one
  // of its alternatives has no character and every rule it refers to is nullable. (Passes over every rule until
  // nothing changes would be quadratic in a chain of thousands of rules, which x{0,9000} makes.)
  std::vector<bool> nullable_rules() const {
    const size_t n_rules = grammar_.n_rules();
    std::vector<uint32_t> owner;                          // [alternative] its rule
    std::vector<uint32_t> pending;                        // [alternative] references to rules not yet known nullable
    std::vector<std::vector<uint32_t>> used_by(n_rules);  // [rule] the alternatives referring to it, per reference
    std::vector<uint32_t> ready;                          // rules found nullable, not yet propagated
    for (uint32_t r = 0; r < n_rules; ++r) {
      for (uint32_t start : grammar_.alternatives_[r]) {
        const auto alternative = static_cast<uint32_t>(owner.size());
        owner.push_back(r);
        pending.push_back(0);
        bool has_chars = false;
        for (uint32_t e = start; grammar_.elements_[e].kind != GrammarElement::Kind::End; ++e) {
          const GrammarElement& element = grammar_.elements_[e];
          has_chars = has_chars || element.kind == GrammarElement::Kind::Chars;
          if (element.kind == GrammarElement::Kind::RuleRef) {
            ++pending[alternative];
            used_by[element.rule].push_back(alternative);
          }
        }
        if (has_chars) pending[alternative] = kNever;
        if (pending[alternative] == 0) ready.push_back(r);
      }
    }
    std::vector<bool> nullable(n_rules, false);
    while (!ready.empty()) {
      const uint32_t rule = ready.back();
      ready.pop_back();
      if (nullable[rule]) continue;
      nullable[rule] = true;
      for (uint32_t alternative : used_by[rule]) {
        if (pending[alternative] != kNever && --pending[alternative] == 0) ready.push_back(owner[alternative]);
      }
    }
    return nullable;
  }

  static constexpr uint32_t kNever = std::numeric_limits<uint32_t>::max();  // an alternative with a character

  // Rules each rule can begin with: the references before its alternatives' first character.
  std::vector<std::vector<uint32_t>> leading_rules(const std::vector<bool>& nullable) const {
    std::vector<std::vector<uint32_t>> leading(grammar_.n_rules());
    for (uint32_t r = 0; r < grammar_.n_rules(); ++r) {
      for (uint32_t start : grammar_.alternatives_[r]) {
        for (uint32_t e = start; grammar_.elements_[e].kind == GrammarElement::Kind::RuleRef; ++e) {
          leading[r].push_back(grammar_.elements_[e].rule);
          if (!nullable[grammar_.elements_[e].rule]) break;
        }
      }
    }
    return leading;
  }

  Status check_left_recursion() const {
    const std::vector<std::vector<uint32_t>> leading = leading_rules(nullable_rules());
    enum class Mark : uint8_t { New, Open, Done };
    std::vector<Mark> marks(grammar_.n_rules(), Mark::New);
    std::vector<uint32_t> path;
    // Depth-first, iteratively: a deep chain of rules must not overflow the stack.
    for (uint32_t start = 0; start < grammar_.n_rules(); ++start) {
      if (marks[start] != Mark::New) continue;
      std::vector<std::pair<uint32_t, size_t>> todo{{start, 0}};
      marks[start] = Mark::Open;
      while (!todo.empty()) {
        auto& [rule, next] = todo.back();
        if (next == leading[rule].size()) {
          marks[rule] = Mark::Done;
          todo.pop_back();
          continue;
        }
        const uint32_t to = leading[rule][next++];
        if (marks[to] == Mark::Open) return left_recursion_error(todo, to);
        if (marks[to] == Mark::New) {
          marks[to] = Mark::Open;
          todo.emplace_back(to, 0);
        }
      }
    }
    return {};
  }

  Error left_recursion_error(const std::vector<std::pair<uint32_t, size_t>>& todo, uint32_t again) const {
    std::string cycle;
    bool in_cycle = false;
    for (const auto& [rule, next] : todo) {
      in_cycle = in_cycle || rule == again;
      if (in_cycle) cycle += fmt::format("{} -> ", grammar_.names_[rule]);
    }
    cycle += grammar_.names_[again];
    const SourcePosition at = info_[again].position;
    return fail(
        "grammar line {}, column {}: rule '{}' can begin with itself ({}): left recursion, or a repetition "
        "of something that can match nothing, would never end",
        at.line, at.column, grammar_.names_[again], cycle);
  }

  Grammar grammar_;
  std::map<std::string, uint32_t> ids_;
  std::vector<RuleInfo> info_;
};

Result<Grammar> Grammar::parse(std::string_view gbnf, std::string_view root) {
  auto rules = parse_gbnf(gbnf);
  if (!rules) return rules.error();
  return GrammarBuilder().build(*rules, root);
}

bool Grammar::matches(const GrammarElement& chars, uint32_t code_point) const {
  bool inside = false;
  for (uint32_t i = 0; i < chars.n_ranges && !inside; ++i) {
    const CodePointRange& range = ranges_[chars.first_range + i];
    inside = range.first <= code_point && code_point <= range.last;
  }
  return inside != chars.negated;
}

bool Grammar::may_match_any(const GrammarElement& chars, uint32_t first, uint32_t last) const {
  for (uint32_t i = 0; i < chars.n_ranges; ++i) {
    const CodePointRange& range = ranges_[chars.first_range + i];
    const bool overlaps = range.first <= last && first <= range.last;
    const bool covers = range.first <= first && last <= range.last;
    if (!chars.negated && overlaps) return true;
    if (chars.negated && covers) return false;
  }
  return chars.negated;
}

std::string Grammar::describe() const {
  std::string out;
  for (uint32_t r = 0; r < n_rules(); ++r) {
    out += names_[r] + " ::=";
    for (size_t a = 0; a < alternatives_[r].size(); ++a) {
      if (a > 0) out += " |";
      for (uint32_t e = alternatives_[r][a]; elements_[e].kind != GrammarElement::Kind::End; ++e) {
        const GrammarElement& element = elements_[e];
        out += ' ';
        if (element.kind == GrammarElement::Kind::RuleRef) {
          out += names_[element.rule];
          continue;
        }
        out += gbnf_class(std::span<const CodePointRange>(ranges_).subspan(element.first_range, element.n_ranges),
                          element.negated);
      }
    }
    out += '\n';
  }
  return out;
}

}  // namespace infertune
