# The results store as the read-only commands open it: ResultsStore::open_read_only, the migration of an
# older schema in an in-memory copy, and the read methods. record_sources.cpp (the host probe and build
# facts), store_merge.cpp and stable_hash.cpp are not on that path: left out. SQLite is the system library,
# not instrumented: coverage comes from the store's code, plus the target's own extra counters.
infertune_fuzz_library(fuzz_store
  SOURCES sweeps/store/results_store.cpp sweeps/store/migrations.cpp sweeps/store/schema.cpp
          sweeps/store/sqlite_database.cpp sweeps/store/sqlite_statement.cpp sweeps/store/sqlite_transaction.cpp
          sweeps/store/store_records.cpp sweeps/store/statistics.cpp sweeps/store/student_t.cpp
          sweeps/store/time_text.cpp
  LIBS fmt::fmt SQLite::SQLite3)

infertune_fuzzer(results_store_fuzz fuzz_store)
