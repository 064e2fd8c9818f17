#ifndef RECKON_SIMD_INDEX_H
#define RECKON_SIMD_INDEX_H

#include <stddef.h>
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

/// A piece of text inside a parsed index; `data` is NULL for null or absent.
typedef struct {
    const char *data;
    size_t length;
} reckon_text;

/// One entry of a clean index, as text; the caller parses ids and dates.
typedef struct {
    reckon_text id;
    reckon_text modified_time;
    reckon_text archived_at;
    reckon_text deleted_at;
    reckon_text change_tag;
} reckon_index_entry;

typedef struct reckon_clean_index reckon_clean_index;

/// Parses index.json with simdjson when its shape is clean: schema version 1,
/// only known keys, each entry's id and modifiedTime strings, its archivedAt,
/// deletedAt and changeTag strings or null. Returns NULL for anything else,
/// and the caller reads the file the careful way. Free with ..._close.
reckon_clean_index *reckon_clean_index_open(const char *path);
size_t reckon_clean_index_count(const reckon_clean_index *index);
/// The text stays valid until the index is closed.
reckon_index_entry reckon_clean_index_entry(const reckon_clean_index *index, size_t position);
void reckon_clean_index_close(reckon_clean_index *index);

#ifdef __cplusplus
}
#endif

#endif
