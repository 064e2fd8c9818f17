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

/// A simdjson parser for memo files, owned by one worker and reused from
/// file to file; never shared between threads. Free with ..._destroy.
typedef struct reckon_memo_parser reckon_memo_parser;

/// Whether `length` bytes at `data` are valid UTF-8 (simdjson's validator).
int reckon_valid_utf8(const char *data, size_t length);

/// A new parser; NULL only when memory runs out.
reckon_memo_parser *reckon_memo_parser_create(void);
void reckon_memo_parser_destroy(reckon_memo_parser *parser);

/// Reads one memo file's bytes with `parser`. Returns 0 and fills `fields`
/// only when the memo is clean: one JSON object (valid UTF-8, no byte order
/// mark) with only the keys reckon knows, each at most once, of the right
/// types (an id that is a UUID, dates that are ISO 8601 instants with a
/// zone, tags an array of strings, pinned true, false or null). Returns 1
/// for anything else; the caller then reads the file the careful way, which
/// names every problem. The text stays valid until `parser` reads the next file.
int reckon_memo_parse(reckon_memo_parser *parser, const void *data, size_t length, reckon_memo_fields *fields);

/// 1 when simdjson reads `data` as one JSON document (any value, nested at
/// most 1024 deep), else 0. For tests that hold reckon's own JSON parser to
/// simdjson's verdict.
int reckon_memo_parser_accepts(reckon_memo_parser *parser, const void *data, size_t length);

/// Reads an export's manifest.json bytes (`data`, after any byte order mark)
/// with `parser` for the two names that tell a run folder reckon made:
/// returns 0 when the bytes are one JSON object, as strictly as a memo's,
/// and neither "generator" nor "pipeline" appears twice in it, and fills
/// `generator` and `pipeline` with those members' text (`data` NULL when a
/// member is absent or not a string); returns 1 for anything else. Nothing
/// else of the manifest is turned into values, and the bytes are copied
/// into a buffer `parser` keeps, so a 100k export's 37 MB manifest is read
/// in a few hundredths of a second, the pages for it made once. The text
/// stays valid until `parser` reads the next file.
int reckon_manifest_names(reckon_memo_parser *parser, const void *data, size_t length, reckon_text *generator,
                          reckon_text *pipeline);

/// The tag at `position` (< tag_count) of the memo `parser` read last.
reckon_text reckon_memo_tag(const reckon_memo_parser *parser, size_t position);

#ifdef __cplusplus
}
#endif

#endif
