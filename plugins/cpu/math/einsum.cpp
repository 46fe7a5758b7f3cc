#include "einsum.h"

#include <algorithm>
#include <cctype>

#include "shape.h"

namespace ephost::cpu::math {

namespace {

// One side of the equation split into letters and the position of its ellipsis.
struct Term {
  std::string letters;   // the labels in order, ellipsis removed
  int ellipsis_at = -1;  // index in `letters` where the ellipsis stands, -1 without one
};

Term parse_term(const std::string& s, const std::string& equation) {
  Term t;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 3, "...") == 0) {
      if (t.ellipsis_at >= 0) invalid("equation '" + equation + "' has two ellipses in one term");
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 3;
    } else if (std::isalpha(static_cast<unsigned char>(s[i]))) {
      t.letters += s[i++];
    } else {
      invalid("equation '" + equation + "' has an unexpected character '" + std::string(1, s[i]) + "'");
    }
  }
  return t;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

}  // namespace

EinsumSpec parse_einsum(const std::string& equation, const std::vector<int64_t>& ranks) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  for (const std::string& s : split(lhs, ',')) terms.push_back(parse_term(s, equation));
  if (terms.size() != ranks.size())
    invalid("equation '" + equation + "' has " + std::to_string(terms.size()) + " input terms for " +
            std::to_string(ranks.size()) + " inputs");

  // Axes the ellipsis covers: the most any input leaves to it.
  int64_t ell = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const int64_t n = static_cast<int64_t>(terms[i].letters.size());
    if (terms[i].ellipsis_at < 0 ? ranks[i] != n : ranks[i] < n)
      invalid("term " + std::to_string(i) + " of '" + equation + "' does not match an input of rank " +
              std::to_string(ranks[i]));
    ell = std::max(ell, ranks[i] - n);
  }

  // Ids: the ellipsis axes first (0 .. ell-1), then each letter in order of first appearance.
  EinsumSpec spec;
  int letter_id[128];
  std::fill(std::begin(letter_id), std::end(letter_id), -1);
  spec.labels = static_cast<int>(ell);
  int count[128] = {};
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    const int64_t covered = ranks[i] - static_cast<int64_t>(t.letters.size());
    std::vector<int>& axes = spec.inputs.emplace_back();
    for (size_t j = 0; j <= t.letters.size(); ++j) {
      if (static_cast<int>(j) == t.ellipsis_at)
        for (int64_t k = 0; k < covered; ++k) axes.push_back(static_cast<int>(ell - covered + k));  // right-aligned
      if (j == t.letters.size()) break;
      const unsigned char c = static_cast<unsigned char>(t.letters[j]);
      if (letter_id[c] < 0) letter_id[c] = spec.labels++;
      ++count[c];
      axes.push_back(letter_id[c]);
    }
  }

  if (arrow == std::string::npos) {
    for (int k = 0; k < ell; ++k) spec.output.push_back(k);
    for (int c = 0; c < 128; ++c)  // ASCII order: upper case before lower case, as numpy
      if (count[c] == 1) spec.output.push_back(letter_id[c]);
    return spec;
  }
  const Term out = parse_term(eq.substr(arrow + 2), equation);
  // An output without the ellipsis sums over its axes (numpy accepts that only for size-1 axes).
  std::vector<bool> used(static_cast<size_t>(spec.labels), false);
  for (size_t j = 0; j <= out.letters.size(); ++j) {
    if (static_cast<int>(j) == out.ellipsis_at)
      for (int k = 0; k < ell; ++k) spec.output.push_back(k);
    if (j == out.letters.size()) break;
    const unsigned char c = static_cast<unsigned char>(out.letters[j]);
    if (letter_id[c] < 0) invalid("output label '" + std::string(1, out.letters[j]) + "' of '" + equation + "' is in no input");
    if (used[letter_id[c]]) invalid("output label '" + std::string(1, out.letters[j]) + "' of '" + equation + "' repeats");
    used[letter_id[c]] = true;
    spec.output.push_back(letter_id[c]);
  }
  return spec;
}

}  // namespace ephost::cpu::math
