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

/// How many bytes of entries are parsed at a time: enough for simdjson to
/// run at full speed, small enough that memory does not follow the file.
#define RECKON_CLEAN_INDEX_BATCH_BYTES ((size_t)1 << 19)

/// Counts an index.json with simdjson, by the seed's rule. Returns 0 and
/// fills `counts` only when the file is clean: schema version 1, only known
/// keys, every entry with a UUID id, ISO 8601 dates with a zone, no id twice.
/// Returns 1 for anything else: the caller then reads the file the careful
/// way, which names every problem. Never reports a problem itself.
/// `workers` threads count it (1: this thread, in order); 0: two to four.
int reckon_count_clean_index(const char *path, reckon_index_counts *counts, unsigned workers);

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
    /// The id's 128 bits, the same whatever case its hex digits are in.
    uint64_t id_high;
    uint64_t id_low;
} reckon_index_entry;

typedef struct reckon_clean_index reckon_clean_index;

/// Opens index.json for reading its entries with simdjson, `batch_bytes` of
/// entries at a time. NULL when the file cannot be read or does not start
/// like an index; the caller then reads it the careful way. Free with ..._close.
reckon_clean_index *reckon_clean_index_open(const char *path, size_t batch_bytes);
/// The next entry: 1 and `entry` filled (its text valid until the next
/// call), 0 after the last entry of a clean file, -1 as soon as anything is
/// not clean — the shape (schema version 1, "entries" and nothing else), an
/// unknown or repeated key, an id that is no UUID, a date that is no ISO
/// 8601 instant with a zone, or a value of the wrong type.
int reckon_clean_index_next(reckon_clean_index *index, reckon_index_entry *entry);
void reckon_clean_index_close(reckon_clean_index *index);

#ifdef __cplusplus
}
#endif

#endif
