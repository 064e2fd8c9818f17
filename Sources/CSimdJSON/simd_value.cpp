// Walks a JSON object into tokens that keep each number's text, so a value
// reckon does not know is written back with every digit it had.
#include "simd_value.h"

#include <simdjson.h>

#include <string_view>
#include <vector>

namespace {

struct Walker {
    simdjson::ondemand::parser parser;
    simdjson::padded_string input;
    std::vector<reckon_json_token> tokens;
};
thread_local Walker walker;

reckon_text textOf(std::string_view view) { return {view.data(), view.size()}; }

// RFC 8259's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool isNumber(std::string_view s) {
    size_t i = 0;
    auto digits = [&] {
        size_t start = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') i++;
        return i > start;
    };
    if (i < s.size() && s[i] == '-') i++;
    if (i < s.size() && s[i] == '0') {
        i++;
    } else if (!digits()) {
        return false;
    }
    if (i < s.size() && s[i] == '.') {
        i++;
        if (!digits()) return false;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) i++;
        if (!digits()) return false;
    }
    return i == s.size();
}

bool walk(simdjson::ondemand::value value, size_t depth, size_t limit);

bool walkObject(simdjson::ondemand::object object, size_t depth, size_t limit) {
    if (depth > limit) return false;
    walker.tokens.push_back({RECKON_JSON_OBJECT_START, {nullptr, 0}});
    for (auto field : object) {
        std::string_view key;
        if (field.unescaped_key().get(key) != simdjson::SUCCESS) return false;
        walker.tokens.push_back({RECKON_JSON_KEY, textOf(key)});
        simdjson::ondemand::value child;
        if (field.value().get(child) != simdjson::SUCCESS || !walk(child, depth, limit)) return false;
    }
    walker.tokens.push_back({RECKON_JSON_OBJECT_END, {nullptr, 0}});
    return true;
}

bool walk(simdjson::ondemand::value value, size_t depth, size_t limit) {
    using namespace simdjson;
    ondemand::json_type type;
    if (value.type().get(type) != SUCCESS) return false;
    switch (type) {
    case ondemand::json_type::object: {
        ondemand::object object;
        return value.get_object().get(object) == SUCCESS && walkObject(object, depth + 1, limit);
    }
    case ondemand::json_type::array: {
        ondemand::array array;
        if (depth + 1 > limit || value.get_array().get(array) != SUCCESS) return false;
        walker.tokens.push_back({RECKON_JSON_ARRAY_START, {nullptr, 0}});
        for (auto item : array) {
            ondemand::value child;
            if (item.get(child) != SUCCESS || !walk(child, depth + 1, limit)) return false;
        }
        walker.tokens.push_back({RECKON_JSON_ARRAY_END, {nullptr, 0}});
        return true;
    }
    case ondemand::json_type::number: {
        std::string_view text = value.raw_json_token();
        while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' || text.back() == '\r')) {
            text.remove_suffix(1);
        }
        if (!isNumber(text)) return false;
        walker.tokens.push_back({RECKON_JSON_NUMBER, textOf(text)});
        return true;
    }
    case ondemand::json_type::string: {
        std::string_view text;
        if (value.get_string().get(text) != SUCCESS) return false;
        walker.tokens.push_back({RECKON_JSON_STRING, textOf(text)});
        return true;
    }
    case ondemand::json_type::boolean: {
        bool flag;
        if (value.get_bool().get(flag) != SUCCESS) return false;
        walker.tokens.push_back({flag ? RECKON_JSON_TRUE : RECKON_JSON_FALSE, {nullptr, 0}});
        return true;
    }
    case ondemand::json_type::null:
        if (!value.is_null()) return false;
        walker.tokens.push_back({RECKON_JSON_NULL, {nullptr, 0}});
        return true;
    }
    return false;
}

}  // namespace

extern "C" long reckon_json_walk_object(const void *data, size_t length, size_t depth_limit) {
    using namespace simdjson;
    walker.tokens.clear();
    walker.input = padded_string(static_cast<const char *>(data), length);
    ondemand::document document;
    ondemand::object object;
    if (walker.parser.iterate(walker.input).get(document) != SUCCESS || document.get_object().get(object) != SUCCESS) return -1;
    if (!walkObject(object, 1, depth_limit)) return -1;
    return static_cast<long>(walker.tokens.size());
}

extern "C" reckon_json_token reckon_json_token_at(size_t position) { return walker.tokens[position]; }
