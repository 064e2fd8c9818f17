// The fast path for reading a clean memo file: simdjson's DOM parser over
// its bytes, handing back its fields as text. Anything unusual sends the
// caller back to the careful reader, so both give the same memo.
#include "simd_memo.h"
#include "checks.h"

#include <simdjson.h>

#include <cstring>
#include <new>
#include <string_view>
#include <vector>

namespace {

// A string or null; a date must also be an instant.
bool textField(simdjson::dom::element value, bool date, reckon_text &out) {
    if (value.is_null()) {
        out = {nullptr, 0};
        return true;
    }
    std::string_view view;
    if (value.get_string().get(view) != simdjson::SUCCESS || (date && !reckon::isInstant(view))) return false;
    out = {view.data(), view.size()};
    return true;
}

bool tagsField(simdjson::dom::element value, std::vector<reckon_text> &tags) {
    tags.clear();
    if (value.is_null()) return true;
    simdjson::dom::array array;
    if (value.get_array().get(array) != simdjson::SUCCESS) return false;
    for (simdjson::dom::element item : array) {
        std::string_view view;
        if (item.get_string().get(view) != simdjson::SUCCESS) return false;
        tags.push_back({view.data(), view.size()});
    }
    return true;
}

}  // namespace

// A parser and the tags of the memo it read last, reused from file to file
// by the one worker that owns it.
struct reckon_memo_parser {
    simdjson::dom::parser parser;
    std::vector<reckon_text> tags;
    // A manifest's bytes, with the padding simdjson reads past the end:
    // kept from one manifest to the next, so their pages are made once.
    std::vector<char> manifestBytes;
};

extern "C" reckon_memo_parser *reckon_memo_parser_create(void) { return new (std::nothrow) reckon_memo_parser(); }

extern "C" void reckon_memo_parser_destroy(reckon_memo_parser *parser) { delete parser; }

extern "C" int reckon_memo_parse(reckon_memo_parser *memo, const void *data, size_t length, reckon_memo_fields *fields) try {
    using namespace simdjson;
    if (length >= 3 && std::memcmp(data, "\xEF\xBB\xBF", 3) == 0) return 1;
    dom::object object;
    if (memo->parser.parse(static_cast<const char *>(data), length).get_object().get(object) != SUCCESS) return 1;
    *fields = {};
    fields->pinned = -1;
    memo->tags.clear();
    enum Key { id, title, body, createdAt, modifiedAt, archivedAt, deletedAt, tags, pinned, changeTag, count };
    static const std::string_view names[count] = {"id", "title", "body", "createdAt", "modifiedAt",
                                                  "archivedAt", "deletedAt", "tags", "pinned", "changeTag"};
    reckon_text *texts[count] = {nullptr, &fields->title, &fields->body, &fields->created_at, &fields->modified_at,
                                 &fields->archived_at, &fields->deleted_at, nullptr, nullptr, &fields->change_tag};
    bool seen[count] = {};
    reckon_text idText = {nullptr, 0};
    for (auto member : object) {
        int which = -1;
        for (int k = 0; k < count; k++) {
            if (member.key == names[k]) which = k;
        }
        if (which < 0 || seen[which]) return 1;  // an unknown or repeated key: the careful reader decides
        seen[which] = true;
        bool ok;
        switch (which) {
        case id: ok = textField(member.value, false, idText); break;
        case tags: ok = tagsField(member.value, memo->tags); break;
        case pinned:
            ok = member.value.is_null() || member.value.is_bool();
            if (member.value.is_bool()) fields->pinned = bool(member.value) ? 1 : 0;
            break;
        default: ok = textField(member.value, which >= createdAt && which <= deletedAt, *texts[which]); break;
        }
        if (!ok) return 1;
    }
    if (idText.data == nullptr || fields->modified_at.data == nullptr) return 1;
    if (!reckon::uuidBits(std::string_view(idText.data, idText.length), fields->id_high, fields->id_low)) return 1;
    fields->tag_count = memo->tags.size();
    return 0;
} catch (...) {
    return 1;  // out of memory: the careful reader decides
}

extern "C" int reckon_memo_parser_accepts(reckon_memo_parser *parser, const void *data, size_t length) try {
    return parser->parser.parse(static_cast<const char *>(data), length).error() == simdjson::SUCCESS ? 1 : 0;
} catch (...) {
    return 0;
}

extern "C" int reckon_manifest_names(reckon_memo_parser *parser, const void *data, size_t length,
                                     reckon_text *generator, reckon_text *pipeline) try {
    using namespace simdjson;
    // Copied where simdjson may read past the end, rather than into a new buffer of its own each time.
    std::vector<char> &bytes = parser->manifestBytes;
    bytes.resize(length + SIMDJSON_PADDING);
    if (length > 0) std::memcpy(bytes.data(), data, length);
    dom::object object;
    if (parser->parser.parse(bytes.data(), length, false).get_object().get(object) != SUCCESS) return 1;
    *generator = {nullptr, 0};
    *pipeline = {nullptr, 0};
    bool seenGenerator = false, seenPipeline = false;
    for (auto member : object) {
        bool isGenerator = member.key == "generator";
        if (!isGenerator && member.key != "pipeline") continue;
        bool &seen = isGenerator ? seenGenerator : seenPipeline;
        if (seen) return 1;  // which of two would count is a guess: neither does
        seen = true;
        std::string_view view;
        if (member.value.get_string().get(view) == SUCCESS) *(isGenerator ? generator : pipeline) = {view.data(), view.size()};
    }
    return 0;
} catch (...) {
    return 1;  // out of memory: not taken as reckon's
}

extern "C" reckon_text reckon_memo_tag(const reckon_memo_parser *parser, size_t position) { return parser->tags[position]; }

extern "C" int reckon_valid_utf8(const char *data, size_t length) {
    return simdjson::validate_utf8(data, length) ? 1 : 0;
}
