// The fast path for counting: simdjson's DOM parser over index.json,
// counting without building entries. Anything unusual sends the caller back
// to the careful reader, so both paths always give the same counts.
#include "simd_index.h"

#include <simdjson.h>

#include <cstring>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace {

bool digits(std::string_view s, size_t at, size_t count) {
    if (at + count > s.size()) return false;
    for (size_t i = at; i < at + count; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
    }
    return true;
}

int number(std::string_view s, size_t at, size_t count) {
    int value = 0;
    for (size_t i = at; i < at + count; i++) value = value * 10 + (s[i] - '0');
    return value;
}

// The grammar Timestamp(iso8601:) accepts: YYYY-MM-DDTHH:MM:SS[.f+](Z|±HH[:]MM).
bool isInstant(std::string_view s) {
    if (!(digits(s, 0, 4) && s.size() > 19 && s[4] == '-' && digits(s, 5, 2) && s[7] == '-' && digits(s, 8, 2) && s[10] == 'T' &&
          digits(s, 11, 2) && s[13] == ':' && digits(s, 14, 2) && s[16] == ':' && digits(s, 17, 2))) return false;
    int year = number(s, 0, 4), month = number(s, 5, 2), day = number(s, 8, 2);
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12 || day < 1) return false;
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > days[month - 1] + (month == 2 && leap ? 1 : 0)) return false;
    if (number(s, 11, 2) > 23 || number(s, 14, 2) > 59 || number(s, 17, 2) > 59) return false;
    size_t i = 19;
    if (s[i] == '.') {
        size_t start = ++i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') i++;
        if (i == start) return false;
    }
    if (i < s.size() && s[i] == 'Z') return i + 1 == s.size();
    if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return false;
    i++;
    if (!digits(s, i, 2) || number(s, i, 2) > 23) return false;
    i += 2;
    if (i < s.size() && s[i] == ':') i++;
    return digits(s, i, 2) && number(s, i, 2) <= 59 && i + 2 == s.size();
}

// A UUID in any case, as 128 bits, so ids compare case-insensitively.
bool uuidBits(std::string_view s, uint64_t &high, uint64_t &low) {
    if (s.size() != 36) return false;
    high = low = 0;
    int n = 0;
    for (size_t i = 0; i < 36; i++) {
        char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-') return false;
            continue;
        }
        uint64_t v;
        if (c >= '0' && c <= '9') v = c - '0';
        else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
        else return false;
        if (n < 16) high = (high << 4) | v; else low = (low << 4) | v;
        n++;
    }
    return true;
}

struct PairHash {
    size_t operator()(const std::pair<uint64_t, uint64_t> &p) const { return p.first ^ (p.second * 0x9E3779B97F4A7C15ull); }
};

// A date field: null (false in `set`) or a valid instant. False when neither.
bool dateField(simdjson::dom::element value, bool &set) {
    if (value.is_null()) {
        set = false;
        return true;
    }
    std::string_view text;
    if (value.get_string().get(text) != simdjson::SUCCESS || !isInstant(text)) return false;
    set = true;
    return true;
}

}  // namespace

extern "C" int reckon_count_clean_index(const char *path, reckon_index_counts *counts) {
    using namespace simdjson;
    padded_string json;
    if (padded_string::load(path).get(json) != SUCCESS) return 1;
    if (json.size() >= 3 && std::memcmp(json.data(), "\xEF\xBB\xBF", 3) == 0) return 1;
    // The DOM parser validates the whole document and uses the best
    // instructions this processor has (chosen when it runs).
    dom::parser parser;
    dom::object root;
    if (parser.parse(json).get_object().get(root) != SUCCESS) return 1;

    bool sawVersion = false, sawEntries = false;
    int64_t active = 0, archived = 0;
    std::unordered_set<std::pair<uint64_t, uint64_t>, PairHash> seen;
    for (auto field : root) {
        if (field.key == "schemaVersion" && !sawVersion) {
            int64_t version;
            if (field.value.get_int64().get(version) != SUCCESS || version != 1) return 1;
            sawVersion = true;
        } else if (field.key == "entries" && !sawEntries) {
            dom::array entries;
            if (field.value.get_array().get(entries) != SUCCESS) return 1;
            seen.reserve(entries.size());
            for (dom::element item : entries) {
                dom::object entry;
                if (item.get_object().get(entry) != SUCCESS) return 1;
                bool hasID = false, hasModified = false, hasArchived = false, hasDeleted = false, hasTag = false;
                bool isArchived = false, isDeleted = false;
                uint64_t high = 0, low = 0;
                for (auto member : entry) {
                    if (member.key == "id" && !hasID) {
                        std::string_view id;
                        if (member.value.get_string().get(id) != SUCCESS || !uuidBits(id, high, low)) return 1;
                        hasID = true;
                    } else if (member.key == "modifiedTime" && !hasModified) {
                        bool set = false;
                        if (!dateField(member.value, set) || !set) return 1;
                        hasModified = true;
                    } else if (member.key == "archivedAt" && !hasArchived) {
                        if (!dateField(member.value, isArchived)) return 1;
                        hasArchived = true;
                    } else if (member.key == "deletedAt" && !hasDeleted) {
                        if (!dateField(member.value, isDeleted)) return 1;
                        hasDeleted = true;
                    } else if (member.key == "changeTag" && !hasTag) {
                        if (!member.value.is_null() && !member.value.is_string()) return 1;
                        hasTag = true;
                    } else {
                        return 1;  // an unknown or repeated key: the careful reader decides
                    }
                }
                if (!hasID || !hasModified || !seen.insert({high, low}).second) return 1;
                if (!isDeleted) (isArchived ? archived : active)++;
            }
            sawEntries = true;
        } else {
            return 1;
        }
    }
    if (!sawVersion || !sawEntries) return 1;
    counts->active = active;
    counts->archived = archived;
    return 0;
}

struct reckon_clean_index {
    simdjson::dom::parser parser;
    std::vector<reckon_index_entry> entries;
};

namespace {

bool text(simdjson::dom::element value, bool nullable, reckon_text &out) {
    if (nullable && value.is_null()) {
        out = {nullptr, 0};
        return true;
    }
    std::string_view view;
    if (value.get_string().get(view) != simdjson::SUCCESS) return false;
    out = {view.data(), view.size()};
    return true;
}

bool readEntries(reckon_clean_index &index, const char *path) {
    using namespace simdjson;
    dom::object root;
    if (index.parser.load(path).get_object().get(root) != SUCCESS) return false;
    bool sawVersion = false, sawEntries = false;
    for (auto field : root) {
        if (field.key == "schemaVersion" && !sawVersion) {
            int64_t version;
            if (field.value.get_int64().get(version) != SUCCESS || version != 1) return false;
            sawVersion = true;
        } else if (field.key == "entries" && !sawEntries) {
            dom::array items;
            if (field.value.get_array().get(items) != SUCCESS) return false;
            index.entries.reserve(items.size());
            for (dom::element item : items) {
                dom::object object;
                if (item.get_object().get(object) != SUCCESS) return false;
                reckon_index_entry entry = {};
                bool seen[5] = {false, false, false, false, false};
                for (auto member : object) {
                    static const std::string_view names[5] = {"id", "modifiedTime", "archivedAt", "deletedAt", "changeTag"};
                    reckon_text *slots[5] = {&entry.id, &entry.modified_time, &entry.archived_at, &entry.deleted_at, &entry.change_tag};
                    int which = -1;
                    for (int k = 0; k < 5; k++) if (member.key == names[k]) which = k;
                    if (which < 0 || seen[which] || !text(member.value, which >= 2, *slots[which])) return false;
                    seen[which] = true;
                }
                if (!seen[0] || !seen[1]) return false;
                index.entries.push_back(entry);
            }
            sawEntries = true;
        } else {
            return false;
        }
    }
    return sawVersion && sawEntries;
}

}  // namespace

extern "C" reckon_clean_index *reckon_clean_index_open(const char *path) {
    auto *index = new reckon_clean_index();
    if (readEntries(*index, path)) return index;
    delete index;
    return nullptr;
}

extern "C" size_t reckon_clean_index_count(const reckon_clean_index *index) { return index->entries.size(); }

extern "C" reckon_index_entry reckon_clean_index_entry(const reckon_clean_index *index, size_t position) {
    return index->entries[position];
}

extern "C" void reckon_clean_index_close(reckon_clean_index *index) { delete index; }
