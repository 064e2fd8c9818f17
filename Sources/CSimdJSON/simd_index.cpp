// The fast path for reading a clean index.json: the file is cut into batches
// of whole entries, and simdjson's DOM parser validates and walks one batch
// at a time, so memory stays near the file's own size however many entries
// it holds. Anything unusual sends the caller back to the careful reader, so
// both paths always give the same entries and counts.
#include "simd_index.h"
#include "checks.h"

#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <iterator>
#include <mutex>
#include <thread>
#include <cstring>
#include <string_view>
#include <vector>

namespace {

using reckon::isInstant;
using reckon::uuidBits;

// A string or (when `nullable`) null; a date field must also be an instant.
bool textField(simdjson::dom::element value, bool nullable, bool date, reckon_text &out) {
    if (nullable && value.is_null()) {
        out = {nullptr, 0};
        return true;
    }
    std::string_view view;
    if (value.get_string().get(view) != simdjson::SUCCESS || (date && !isInstant(view))) return false;
    out = {view.data(), view.size()};
    return true;
}

// One entry: only known keys, each once; an id that is a UUID, a
// modifiedTime that is an instant, the other dates instants or null, the
// change tag a string or null.
bool readEntry(simdjson::dom::element item, reckon_index_entry &entry) {
    simdjson::dom::object object;
    if (item.get_object().get(object) != simdjson::SUCCESS) return false;
    entry = {};
    bool seen[5] = {false, false, false, false, false};
    static const std::string_view names[5] = {"id", "modifiedTime", "archivedAt", "deletedAt", "changeTag"};
    reckon_text *slots[5] = {&entry.id, &entry.modified_time, &entry.archived_at, &entry.deleted_at, &entry.change_tag};
    for (auto member : object) {
        int which = -1;
        for (int k = 0; k < 5; k++) {
            if (member.key == names[k]) which = k;
        }
        if (which < 0 || seen[which] || !textField(member.value, which >= 2, which >= 1 && which <= 3, *slots[which])) return false;
        seen[which] = true;
    }
    return seen[0] && seen[1] && uuidBits(std::string_view(entry.id.data, entry.id.length), entry.id_high, entry.id_low);
}

// Where a JSON value's text ends, for cutting the file outside strings.
enum class Cut { comma, close, none };

// Moves `at` from a string's opening quote onto its closing one (or to `size`).
void skipString(const char *text, size_t size, size_t &at) {
    at++;
    while (at < size && text[at] != '"') at += text[at] == '\\' ? 2 : 1;
}

// Scans from `at` at nesting depth 0 (inside an array or object) for the next
// comma or closing bracket at that depth, skipping strings. `at` is left on it.
Cut scan(const char *text, size_t size, size_t &at) {
    int depth = 0;
    while (at < size) {
        char c = text[at];
        if (c == '"') {
            skipString(text, size, at);
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) return Cut::close;
            depth--;
        } else if (c == ',' && depth == 0) {
            return Cut::comma;
        }
        at++;
    }
    return Cut::none;
}

}  // namespace

struct reckon_clean_index {
    FILE *file = nullptr;
    size_t batchBytes = 1;
    // The part of the file read and not yet parsed: window[0..<filled].
    std::vector<char> window;
    size_t filled = 0;
    // The document up to and including the '[' of the entries array.
    std::string prefix;
    bool arrayDone = false;
    size_t batchesCut = 0;
    std::vector<char> batch;
    simdjson::dom::parser parser;
    simdjson::dom::array entries;
    simdjson::dom::array::iterator position, end;

    ~reckon_clean_index() {
        if (file != nullptr) fclose(file);
    }

    /// Drops the first `used` bytes of the window and reads more of the file
    /// after the rest, growing the window when it is full. False at the end.
    bool refill(size_t used) {
        std::memmove(window.data(), window.data() + used, filled - used);
        filled -= used;
        if (filled == window.size()) window.resize(window.size() * 2);
        size_t got = fread(window.data() + filled, 1, window.size() - filled, file);
        filled += got;
        return got > 0;
    }
};

namespace {

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The file's first '[' outside strings at the top object's level opens the
// entries array; whether it really belongs to "entries" is checked at the end.
bool findArray(reckon_clean_index &index) {
    for (;;) {
        const char *text = index.window.data();
        size_t at = 0;
        while (at < index.filled && isSpace(text[at])) at++;
        if (at < index.filled && text[at] != '{') return false;
        for (at++; at < index.filled; at++) {
            char c = text[at];
            if (c == '"') {
                skipString(text, index.filled, at);
            } else if (c == '[') {
                index.prefix.assign(text, at + 1);
                index.refill(at + 1);
                return true;
            } else if (c == '{' || c == ']' || c == '}') {
                return false;
            }
        }
        if (!index.refill(0)) return false;
    }
}

// `[` + window[0..<length] + `]`, padded as simdjson needs, into `batch`.
void copyBatch(const reckon_clean_index &index, size_t length, std::vector<char> &batch) {
    size_t size = length + 2;
    batch.resize(size + simdjson::SIMDJSON_PADDING);
    batch[0] = '[';
    std::memcpy(batch.data() + 1, index.window.data(), length);
    batch[size - 1] = ']';
    std::memset(batch.data() + size, ' ', simdjson::SIMDJSON_PADDING);
}

// Parses `[` + window[0..<length] + `]` into the current batch; an empty
// batch ("[x, , y]" or "[, x]") is not clean.
bool parseBatch(reckon_clean_index &index, size_t length) {
    copyBatch(index, length, index.batch);
    if (index.parser.parse(index.batch.data(), length + 2, false).get_array().get(index.entries) != simdjson::SUCCESS) return false;
    if (index.entries.size() == 0) return false;
    index.position = index.entries.begin();
    index.end = index.entries.end();
    return true;
}

// The document with the entries array emptied — the prefix, then the rest of
// the file from the array's ']' — must be an object with exactly
// schemaVersion 1 and that empty array as "entries", and nothing after it.
bool skeletonIsClean(reckon_clean_index &index, size_t arrayClose) {
    std::string skeleton = index.prefix;
    skeleton.append(index.window.data() + arrayClose, index.filled - arrayClose);
    char more[65536];
    size_t got;
    while ((got = fread(more, 1, sizeof more, index.file)) > 0) skeleton.append(more, got);
    simdjson::dom::parser parser;
    simdjson::dom::object root;
    if (parser.parse(skeleton).get_object().get(root) != simdjson::SUCCESS || root.size() != 2) return false;
    int64_t version;
    simdjson::dom::array entries;
    return root["schemaVersion"].get_int64().get(version) == simdjson::SUCCESS && version == 1 &&
           root["entries"].get_array().get(entries) == simdjson::SUCCESS && entries.size() == 0;
}

enum class Next { batch, end, unclean };

// Finds where the next batch of whole entries ends: `length` bytes from the
// window's start. With `guess`, the cut is first guessed without reading every
// byte — the first "}" followed by "," after `batchBytes` — and `guessed`
// says so. A wrong guess (inside a string, or inside an entry) leaves a batch
// with an open string or object, which cannot parse; the caller then asks
// again without guessing, and every byte is scanned. The file's last batch is
// always scanned, and the document around the array checked.
Next cutBatch(reckon_clean_index &index, bool guess, size_t &length, bool &guessed) {
    guessed = false;
    while (index.filled < index.window.size() && index.refill(0)) {}
    const char *text = index.window.data();
    for (size_t at = index.batchBytes; guess && at < index.filled;) {
        auto brace = static_cast<const char *>(std::memchr(text + at, '}', index.filled - at));
        if (brace == nullptr) break;
        size_t comma = brace - text + 1;
        while (comma < index.filled && isSpace(text[comma])) comma++;
        if (comma < index.filled && text[comma] == ',') {
            length = comma;
            guessed = true;
            return Next::batch;
        }
        at = comma;
    }

    size_t at = 0;
    for (;;) {
        text = index.window.data();
        Cut cut = scan(text, index.filled, at);
        if (cut == Cut::none) {
            // The window ends inside a batch: read on and look again.
            if (!index.refill(0)) return Next::unclean;
            at = 0;
            continue;
        }
        if (cut == Cut::close) {
            if (text[at] != ']') return Next::unclean;
            index.arrayDone = true;
            if (!skeletonIsClean(index, at)) return Next::unclean;
            bool blank = true;
            for (size_t i = 0; i < at && blank; i++) blank = isSpace(text[i]);
            if (blank) return index.batchesCut == 0 ? Next::end : Next::unclean;  // "[]" is clean; "[x, ]" is not
            length = at;
            return Next::batch;
        }
        if (at >= index.batchBytes) {
            length = at;
            return Next::batch;
        }
        at++;
    }
}

// Forgets the batch just cut, and the comma after it.
void dropBatch(reckon_clean_index &index, size_t length) {
    index.batchesCut++;
    if (!index.arrayDone) index.refill(length + 1);
}

// Cuts and parses the next batch: 1 when one is ready, 0 at the end of a
// clean file, -1 when the file is not clean.
int nextBatch(reckon_clean_index &index) {
    size_t length;
    bool guessed;
    Next next = cutBatch(index, true, length, guessed);
    if (next == Next::batch && !parseBatch(index, length)) {
        if (!guessed) return -1;
        next = cutBatch(index, false, length, guessed);
        if (next == Next::batch && !parseBatch(index, length)) return -1;
    }
    if (next != Next::batch) return next == Next::end ? 0 : -1;
    dropBatch(index, length);
    return 1;
}

}  // namespace

extern "C" reckon_clean_index *reckon_clean_index_open(const char *path, size_t batch_bytes) {
    auto *index = new reckon_clean_index();
    index->batchBytes = batch_bytes > 0 ? batch_bytes : 1;
    index->window.resize(std::max<size_t>(index->batchBytes * 2, 4096));
    index->file = fopen(path, "rb");
    if (index->file != nullptr && index->refill(0)) {
        bool bom = index->filled >= 3 && std::memcmp(index->window.data(), "\xEF\xBB\xBF", 3) == 0;
        if (!bom && findArray(*index)) return index;
    }
    delete index;
    return nullptr;
}

extern "C" int reckon_clean_index_next(reckon_clean_index *index, reckon_index_entry *entry) {
    // Until a batch is cut, `position` and `end` point at nothing.
    while (index->batchesCut == 0 || index->position == index->end) {
        if (index->arrayDone) return 0;
        int batch = nextBatch(*index);
        if (batch <= 0) return batch;
    }
    simdjson::dom::element item = *index->position;
    ++index->position;
    return readEntry(item, *entry) ? 1 : -1;
}

extern "C" void reckon_clean_index_close(reckon_clean_index *index) { delete index; }

namespace {

// What counting keeps: the counts, and every id as 128 bits (once sorted, a
// repeated id sits beside its twin).
struct Tally {
    int64_t active = 0, archived = 0;
    std::vector<std::pair<uint64_t, uint64_t>> ids;

    void add(const reckon_index_entry &entry) {
        ids.emplace_back(entry.id_high, entry.id_low);
        if (entry.deleted_at.data == nullptr) (entry.archived_at.data != nullptr ? archived : active)++;
    }
};

// Counts one entry after another on this thread: exact wherever cuts are guessed wrong.
bool countInOrder(const char *path, Tally &tally) {
    reckon_clean_index *index = reckon_clean_index_open(path, RECKON_CLEAN_INDEX_BATCH_BYTES);
    if (index == nullptr) return false;
    reckon_index_entry entry;
    int result;
    while ((result = reckon_clean_index_next(index, &entry)) == 1) tally.add(entry);
    reckon_clean_index_close(index);
    std::sort(tally.ids.begin(), tally.ids.end());
    return result == 0;
}

// Counts on every core: this thread cuts batches (guessing cuts) and hands
// them to workers, which parse and count them. False when anything is not
// clean — including a wrong guess, which only countInOrder gets right.
bool countOnAllCores(const char *path, Tally &tally, unsigned workerCount) {
    reckon_clean_index *index = reckon_clean_index_open(path, RECKON_CLEAN_INDEX_BATCH_BYTES);
    if (index == nullptr) return false;
    std::mutex lock;
    std::condition_variable changed;
    std::deque<std::vector<char>> batches;
    bool finished = false;
    std::atomic<bool> unclean{false};

    std::vector<Tally> tallies(workerCount);
    std::vector<std::thread> workers;
    for (unsigned w = 0; w < workerCount; w++) {
        workers.emplace_back([&, w] {
            simdjson::dom::parser parser;
            for (;;) {
                std::vector<char> batch;
                {
                    std::unique_lock<std::mutex> held(lock);
                    changed.wait(held, [&] { return !batches.empty() || finished; });
                    if (batches.empty()) break;
                    batch = std::move(batches.front());
                    batches.pop_front();
                }
                changed.notify_all();
                simdjson::dom::array items;
                size_t length = batch.size() - simdjson::SIMDJSON_PADDING;
                if (parser.parse(batch.data(), length, false).get_array().get(items) != simdjson::SUCCESS || items.size() == 0) {
                    unclean = true;
                    continue;
                }
                for (simdjson::dom::element item : items) {
                    reckon_index_entry entry;
                    if (!readEntry(item, entry)) {
                        unclean = true;
                        break;
                    }
                    tallies[w].add(entry);
                }
            }
            std::sort(tallies[w].ids.begin(), tallies[w].ids.end());
        });
    }

    for (;;) {
        size_t length;
        bool guessed;
        Next next = cutBatch(*index, true, length, guessed);
        if (next != Next::batch) {
            if (next == Next::unclean) unclean = true;
            break;
        }
        std::vector<char> batch;
        copyBatch(*index, length, batch);
        dropBatch(*index, length);
        {
            std::unique_lock<std::mutex> held(lock);
            changed.wait(held, [&] { return batches.size() < 2 * workerCount || unclean; });
            batches.push_back(std::move(batch));
        }
        changed.notify_all();
        if (index->arrayDone || unclean) break;
    }
    {
        std::lock_guard<std::mutex> held(lock);
        finished = true;
    }
    changed.notify_all();
    for (auto &worker : workers) worker.join();
    reckon_clean_index_close(index);
    if (unclean) return false;
    // The first worker's ids are taken as they are, and each other's merged in, into storage
    // that is reserved, not cleared first.
    tally = std::move(tallies[0]);
    for (unsigned w = 1; w < workerCount; w++) {
        Tally &part = tallies[w];
        tally.active += part.active;
        tally.archived += part.archived;
        std::vector<std::pair<uint64_t, uint64_t>> merged;
        merged.reserve(tally.ids.size() + part.ids.size());
        std::merge(tally.ids.begin(), tally.ids.end(), part.ids.begin(), part.ids.end(), std::back_inserter(merged));
        tally.ids.swap(merged);
    }
    return true;
}

}  // namespace

extern "C" int reckon_count_clean_index(const char *path, reckon_index_counts *counts, unsigned workers) {
    // Two to four workers: more would add parsers (each some MB) faster than
    // speed. A caller's `workers` (tests only) sets how many; with 1, this
    // thread counts alone, in order.
    unsigned workerCount = workers > 0 ? workers : std::min(4u, std::max(2u, std::thread::hardware_concurrency()));
    Tally tally;
    if (workerCount == 1 || !countOnAllCores(path, tally, workerCount)) {
        tally = Tally();
        if (!countInOrder(path, tally)) return 1;
    }
    if (std::adjacent_find(tally.ids.begin(), tally.ids.end()) != tally.ids.end()) return 1;
    counts->active = tally.active;
    counts->archived = tally.archived;
    return 0;
}
