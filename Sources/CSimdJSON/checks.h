// The text checks both fast paths share: an ISO 8601 instant as
// Timestamp(iso8601:) accepts it, and a UUID as its 128 bits.
#ifndef RECKON_CHECKS_H
#define RECKON_CHECKS_H

#include <cstdint>
#include <string_view>

namespace reckon {

inline bool digits(std::string_view s, size_t at, size_t count) {
    if (at + count > s.size()) return false;
    for (size_t i = at; i < at + count; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
    }
    return true;
}

inline int number(std::string_view s, size_t at, size_t count) {
    int value = 0;
    for (size_t i = at; i < at + count; i++) value = value * 10 + (s[i] - '0');
    return value;
}

// The grammar Timestamp(iso8601:) accepts: YYYY-MM-DDTHH:MM:SS[.f+](Z|±HH[:]MM),
// with t or a space for T and z for Z (RFC 3339 §5.6), in the years 0001–9999
// in UTC. Year 0 and the first and last day of that range, which an offset may
// take out of it, are left to the careful reader (Swift's Timestamp), as is
// second 60 (a leap second), so that it says why.
inline bool isInstant(std::string_view s) {
    if (!(digits(s, 0, 4) && s.size() > 19 && s[4] == '-' && digits(s, 5, 2) && s[7] == '-' && digits(s, 8, 2) && (s[10] == 'T' || s[10] == 't' || s[10] == ' ') &&
          digits(s, 11, 2) && s[13] == ':' && digits(s, 14, 2) && s[16] == ':' && digits(s, 17, 2))) return false;
    int year = number(s, 0, 4), month = number(s, 5, 2), day = number(s, 8, 2);
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12 || day < 1) return false;
    if (year == 0 || (year == 1 && month == 1 && day == 1) || (year == 9999 && month == 12 && day == 31)) return false;
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > days[month - 1] + (month == 2 && leap ? 1 : 0)) return false;
    if (number(s, 11, 2) > 23 || number(s, 14, 2) > 59 || number(s, 17, 2) > 59) return false;
    size_t i = 19;
    if (s[i] == '.') {
        size_t start = ++i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') i++;
        if (i == start) return false;
    }
    if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) return i + 1 == s.size();
    if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return false;
    i++;
    if (!digits(s, i, 2) || number(s, i, 2) > 23) return false;
    i += 2;
    if (i < s.size() && s[i] == ':') i++;
    return digits(s, i, 2) && number(s, i, 2) <= 59 && i + 2 == s.size();
}

// A UUID in any case, as 128 bits, so ids compare case-insensitively.
inline bool uuidBits(std::string_view s, uint64_t &high, uint64_t &low) {
    static const struct Nibbles {
        int8_t of[256];
        Nibbles() {
            for (int c = 0; c < 256; c++) of[c] = -1;
            for (int c = '0'; c <= '9'; c++) of[c] = int8_t(c - '0');
            for (int c = 'a'; c <= 'f'; c++) of[c] = int8_t(c - 'a' + 10);
            for (int c = 'A'; c <= 'F'; c++) of[c] = int8_t(c - 'A' + 10);
        }
    } nibbles;
    if (s.size() != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') return false;
    uint64_t words[2] = {0, 0};
    int bad = 0, n = 0;
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) continue;
        int v = nibbles.of[static_cast<unsigned char>(s[i])];
        bad |= v;
        words[n >> 4] = (words[n >> 4] << 4) | uint64_t(v & 15);
        n++;
    }
    high = words[0];
    low = words[1];
    return bad >= 0;
}

}  // namespace reckon

#endif
