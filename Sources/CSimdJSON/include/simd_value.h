#ifndef RECKON_SIMD_VALUE_H
#define RECKON_SIMD_VALUE_H

#include "simd_index.h"

#ifdef __cplusplus
extern "C" {
#endif

/// What one token of a walked JSON object is.
typedef enum {
    RECKON_JSON_NULL,
    RECKON_JSON_FALSE,
    RECKON_JSON_TRUE,
    RECKON_JSON_NUMBER,
    RECKON_JSON_STRING,
    RECKON_JSON_KEY,
    RECKON_JSON_ARRAY_START,
    RECKON_JSON_ARRAY_END,
    RECKON_JSON_OBJECT_START,
    RECKON_JSON_OBJECT_END,
} reckon_json_kind;

/// One token: a string or key unescaped, a number as the text it was written with.
typedef struct {
    reckon_json_kind kind;
    reckon_text text;
} reckon_json_token;

/// Walks a JSON document whose root is an object with simdjson's On-Demand
/// parser, using a walker of the calling thread's own, and records it as
/// tokens in document order. Returns how many, or -1 when the document is not
/// such an object, is not valid JSON, or nests deeper than `depth_limit`.
/// The tokens stay valid until the same thread walks the next document.
long reckon_json_walk_object(const void *data, size_t length, size_t depth_limit);

/// The token at `position` (< the count returned) of this thread's last walk.
reckon_json_token reckon_json_token_at(size_t position);

#ifdef __cplusplus
}
#endif

#endif
