#ifndef RECKON_SIMD_MEMO_H
#define RECKON_SIMD_MEMO_H

#include "simd_index.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The fields of one clean memo file, as text inside the parser. Absent and
/// null are alike (`data` NULL).
typedef struct {
    uint64_t id_high;
    uint64_t id_low;
    reckon_text title;
    reckon_text body;
    reckon_text created_at;
    reckon_text modified_at;
    reckon_text archived_at;
    reckon_text deleted_at;
    reckon_text change_tag;
    /// -1 when absent or null, else 0 or 1.
    int pinned;
    size_t tag_count;
} reckon_memo_fields;

/// Reads one memo file's bytes with simdjson, using a parser of the calling
/// thread's own. Returns 0 and fills `fields` only when the memo is clean:
/// one JSON object with only the keys reckon knows, each at most once, of
/// the right types (an id that is a UUID, dates that are ISO 8601 instants
/// with a zone, tags an array of strings, pinned true, false or null).
/// Returns 1 for anything else; the caller then reads the file the careful
/// way, which names every problem. The text stays valid until the same
/// thread reads the next file.
int reckon_memo_parse(const void *data, size_t length, reckon_memo_fields *fields);

/// The tag at `position` (< tag_count) of the memo this thread read last.
reckon_text reckon_memo_tag(size_t position);

#ifdef __cplusplus
}
#endif

#endif
