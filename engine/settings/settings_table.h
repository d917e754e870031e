#pragma once
// Every tuning knob of the engine, once (setting.h says what an entry holds). The order is the order of the
// help texts and of printed command lines, llama.cpp's usual one.
#include <span>
#include <string_view>
#include <vector>

#include "engine/settings/setting.h"

namespace infertune {

std::span<const Setting> all_settings();

// The settings `command` takes, in table order.
std::vector<const Setting*> settings_of(Command command);

// By spec key ("threads"), config field ("n_ctx") or flag ("-t", "--threads", "-ctk"); null when unknown.
const Setting* find_setting(std::string_view key);
const Setting* find_setting_by_config_key(std::string_view config_key);
const Setting* find_setting_by_flag(std::string_view flag);

}  // namespace infertune
