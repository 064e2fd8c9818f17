/// An instant read from an ISO 8601 string, exact to the nanosecond.
///
/// Two spellings of one instant (`2026-04-19T14:32:00Z`,
/// `2026-04-19T23:32:00.000+09:00`) give equal values. A string without a
/// time zone is rejected: reckon does not guess which zone was meant.
package struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Seconds since 1970-01-01T00:00:00Z.
    package let seconds: Int64
    /// Nanoseconds within the second, 0..<1_000_000_000.
    package let nanoseconds: Int32

    package init(seconds: Int64, nanoseconds: Int32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// Why a text is not an instant reckon keeps.
    package enum Refusal: Error, Sendable, Equatable {
        /// Not `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, or no such day or time.
        case notADate
        /// Second 60, a leap second: reckon's times, like POSIX's, have no second 60.
        case leapSecond
        /// In this year in UTC, outside 0001–9999, which reckon could not write back.
        case year(Int)
    }

    /// The years an instant may lie in (in UTC): those reckon writes back as it read them.
    package static let years = 1...9999

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)`, as `parse` does.
    package init?(iso8601 text: String) {
        guard case .success(let value) = Self.parse(text) else { return nil }
        self = value
    }

    /// Parses the UTF-8 bytes of an ISO 8601 instant, as `init?(iso8601:)` does.
    init?(iso8601Bytes bytes: UnsafeRawBufferPointer) {
        guard case .success(let value) = Self.parse(bytes) else { return nil }
        self = value
    }

    /// Parses an RFC 3339 instant: `YYYY-MM-DDTHH:MM:SS[.fraction]` then
    /// `Z` or an offset (`±HH:MM`, or `±HHMM`); `t` and `z` in small letters
    /// and a space for `T` too (RFC 3339 §5.6). A leap second, and an
    /// instant outside the years 0001–9999 in UTC, are refused with that reason.
    package static func parse(_ text: String) -> Result<Timestamp, Refusal> {
        text.utf8.withContiguousStorageIfAvailable { parse($0) } ?? parse(Array(text.utf8))
    }

    private static func parse<Bytes: RandomAccessCollection>(_ b: Bytes) -> Result<Timestamp, Refusal>
    where Bytes.Element == UInt8, Bytes.Index == Int {
        guard let (value, second) = parseFields(b) else { return .failure(.notADate) }
        if second == 60 { return .failure(.leapSecond) }
        guard years.contains(value.year) else { return .failure(.year(value.year)) }
        return .success(value)
    }

    /// The instant and the second as written (60 is kept, for its own refusal); nil when the text is no date.
    private static func parseFields<Bytes: RandomAccessCollection>(_ b: Bytes) -> (Timestamp, Int)?
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var i = b.startIndex
        func digits(_ count: Int) -> Int? {
            guard i + count <= b.count else { return nil }
            var value = 0
            for k in 0..<count {
                let c = b[i + k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            i += count
            return value
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(UInt8(ascii: "-")),
            let month = digits(2), expect(UInt8(ascii: "-")),
            let day = digits(2), expect(UInt8(ascii: "T")) || expect(UInt8(ascii: "t")) || expect(UInt8(ascii: " ")),
            let hour = digits(2), expect(UInt8(ascii: ":")),
            let minute = digits(2), expect(UInt8(ascii: ":")),
            let second = digits(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year),
            hour < 24, minute < 60, second <= 60
        else { return nil }
        var nanos = 0
        if expect(UInt8(ascii: ".")) {
            var count = 0
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                if count < 9 { nanos = nanos * 10 + Int(b[i] - 0x30) }
                count += 1
                i += 1
            }
            guard count > 0 else { return nil }
            for _ in min(count, 9)..<9 { nanos *= 10 }
        }
        var offset = 0
        if expect(UInt8(ascii: "Z")) || expect(UInt8(ascii: "z")) {
        } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let oh = digits(2) else { return nil }
            _ = expect(UInt8(ascii: ":"))
            guard let om = digits(2), oh < 24, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offset)
        return (Timestamp(seconds: seconds, nanoseconds: Int32(nanos)), second)
    }

    /// The instant's year in UTC.
    package var year: Int { Self.civilFromDays(Int(seconds.floorDivided(by: 86_400))).0 }

    /// The start of a run from its id (`20261201T173000Z`, perhaps with `-2` after it); nil for another text.
    package init?(runID: String) {
        let text = Array(runID.prefix(16))
        guard text.count == 16, text[8] == "T", text[15] == "Z" else { return nil }
        let s = String(text)
        func part(_ from: Int, _ length: Int) -> Substring { s.dropFirst(from).prefix(length) }
        self.init(iso8601: "\(part(0, 4))-\(part(4, 2))-\(part(6, 2))T\(part(9, 2)):\(part(11, 2)):\(part(13, 2))Z")
    }

    /// The day of the instant in UTC, `2026-11-28`, as a sentence names it.
    package var day: String { String(iso8601.prefix(10)) }

    /// The instant in UTC, `Z`, with a fraction only when there is one.
    package var iso8601: String {
        let days = Int(seconds.floorDivided(by: 86_400))
        let secondOfDay = Int(seconds - Int64(days) * 86_400)
        let (y, m, d) = Self.civilFromDays(days)
        guard (0...9999).contains(y) else { return slowISO8601(secondOfDay: secondOfDay) }
        // Built as bytes: this runs for every date of every memo exported.
        return String(unsafeUninitializedCapacity: 30) { buffer in
            var i = 0
            func put(_ value: Int, _ width: Int) {
                var divisor = 1
                for _ in 1..<width { divisor *= 10 }
                while divisor > 0 {
                    buffer[i] = UInt8(0x30 + value / divisor % 10)
                    i += 1
                    divisor /= 10
                }
            }
            func put(_ byte: Character) {
                buffer[i] = byte.asciiValue!
                i += 1
            }
            put(y, 4)
            put("-")
            put(m, 2)
            put("-")
            put(d, 2)
            put("T")
            put(secondOfDay / 3600, 2)
            put(":")
            put(secondOfDay / 60 % 60, 2)
            put(":")
            put(secondOfDay % 60, 2)
            if nanoseconds != 0 {
                var fraction = Int(nanoseconds)
                var width = 9
                while fraction % 1000 == 0 {
                    fraction /= 1000
                    width -= 3
                }
                put(".")
                put(fraction, width)
            }
            put("Z")
            return i
        }
    }

    /// `iso8601` for a year outside 0…9999, spelled as it always was.
    private func slowISO8601(secondOfDay: Int) -> String {
        var text = dayAndMinute(separator: "T") + ":" + Self.pad(secondOfDay % 60, 2)
        if nanoseconds != 0 {
            var fraction = Self.pad(Int(nanoseconds), 9)
            while fraction.hasSuffix("000") { fraction.removeLast(3) }
            text += "." + fraction
        }
        return text + "Z"
    }

    package var description: String { iso8601 }

    /// The date and the time to the minute, read as UTC: `2026-04-19 14:32` with a space.
    func dayAndMinute(separator: String = " ") -> String {
        let days = Int(seconds.floorDivided(by: 86_400))
        let secondOfDay = Int(seconds - Int64(days) * 86_400)
        let (y, m, d) = Self.civilFromDays(days)
        return
            "\(Self.pad(y, 4))-\(Self.pad(m, 2))-\(Self.pad(d, 2))\(separator)\(Self.pad(secondOfDay / 3600, 2)):\(Self.pad(secondOfDay / 60 % 60, 2))"
    }

    private static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// The instant rounded to the millisecond, the precision a store keeps:
    /// instants are compared so across kinds of side.
    package var toMillisecond: Timestamp {
        let milliseconds = (Int64(nanoseconds) + 500_000) / 1_000_000
        return milliseconds == 1000 ? Timestamp(seconds: seconds + 1) : Timestamp(seconds: seconds, nanoseconds: Int32(milliseconds) * 1_000_000)
    }

    package static func < (a: Timestamp, b: Timestamp) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

extension Timestamp: Codable {
    package init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Timestamp(iso8601: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 date: \(text)"))
        }
        self = value
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}

extension Int64 {
    fileprivate func floorDivided(by d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}

extension Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z, with the fraction.
    package var secondsSince1970: Double { Double(seconds) + Double(nanoseconds) / 1e9 }
}

extension Duration {
    /// The duration in seconds, with the fraction.
    package var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
