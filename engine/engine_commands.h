#pragma once
// The subcommands owned by engine/: inspect, synth (and later run, serve, tokenize, ...).
#include "engine/cli/subcommands.h"

namespace infertune {

void add_inspect_command(Subcommands& commands);
void add_synth_command(Subcommands& commands);
void add_quantize_command(Subcommands& commands);    // engine/quantize/quantize_command.cpp
void add_perplexity_command(Subcommands& commands);  // engine/quality/perplexity_command.cpp
void add_imatrix_command(Subcommands& commands);     // engine/quality/imatrix_command.cpp
void add_tokenize_command(Subcommands& commands);
void add_embedding_command(Subcommands& commands);  // engine/embedding/embedding_command.cpp
void add_grammar_command(Subcommands& commands);    // engine/grammar/grammar_command.cpp
void add_run_command(Subcommands& commands);
void add_serve_command(Subcommands& commands);     // engine/server/serve_command.cpp
void add_settings_command(Subcommands& commands);  // engine/settings/settings_command.cpp

inline void register_engine_commands(Subcommands& commands) {
  add_inspect_command(commands);
  add_synth_command(commands);
  add_quantize_command(commands);
  add_perplexity_command(commands);
  add_imatrix_command(commands);
  add_tokenize_command(commands);
  add_embedding_command(commands);
  add_grammar_command(commands);
  add_run_command(commands);
  add_serve_command(commands);
  add_settings_command(commands);
}

}  // namespace infertune
