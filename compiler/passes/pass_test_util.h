// Test helpers: parse IR text, run a pass (verifying before and after), return the new text.
#pragma once
#include <memory>
#include <string>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_verifier.h"
#include "compiler/passes/hlo_dce.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo {

inline std::unique_ptr<HloModule> ParseAndVerify(const std::string& text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  Status v = VerifyHloModule(**m);
  EXPECT_TRUE(v.ok()) << v;
  return std::move(m).value();
}

struct PassResult {
  bool changed = false;
  std::string text;
  std::unique_ptr<HloModule> module;
};

// Runs Pass (then DCE when `dce`) on `text`; the module must verify afterwards.
template <typename Pass>
PassResult RunPassOnText(const std::string& text, bool dce = true) {
  PassResult r;
  r.module = ParseAndVerify(text);
  if (!r.module) return r;
  auto changed = Pass::Run(r.module.get());
  EXPECT_TRUE(changed.ok()) << changed.status();
  r.changed = changed.ok() && *changed;
  if (dce) EXPECT_TRUE(HloDCE::Run(r.module.get()).ok());
  Status v = VerifyHloModule(*r.module);
  EXPECT_TRUE(v.ok()) << v << "\n" << r.module->ToString();
  r.text = r.module->ToString();
  return r;
}

inline bool Contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

}  // namespace oneflow_like::hlo
