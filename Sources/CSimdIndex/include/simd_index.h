#ifndef RECKON_SIMD_INDEX_H
#define RECKON_SIMD_INDEX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Active and Archived memos counted from a clean index.json.
typedef struct {
    int64_t active;
    int64_t archived;
} reckon_index_counts;

/// Counts an index.json with simdjson, by the seed's rule. Returns 0 and
/// fills `counts` only when the file is clean: schema version 1, only known
/// keys, every entry with a UUID id, ISO 8601 dates with a zone, no id twice.
/// Returns 1 for anything else: the caller then reads the file the careful
/// way, which names every problem. Never reports a problem itself.
int reckon_count_clean_index(const char *path, reckon_index_counts *counts);

#ifdef __cplusplus
}
#endif

#endif
