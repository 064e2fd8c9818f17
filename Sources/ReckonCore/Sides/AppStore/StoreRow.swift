import Foundation

/// Reads the values of one row of the memo entity as Core Data stores them:
/// dates as REAL seconds since 2001-01-01 UTC, ids as a 16-byte UUID BLOB or
/// text, bools as INTEGER, optional values as NULL, and tags as a binary
/// property list, a keyed archive or a JSON array.
enum StoreRow {
    /// Why one value cannot be used: a sentence naming the column and what was found.
    struct Failure: Error, CustomStringConvertible {
        var kind: Problem.Kind = .badEntry
        var message: String
        var description: String { message }
    }

    /// Seconds between 1970-01-01 and Core Data's reference date, 2001-01-01 UTC.
    static let referenceDate: Int64 = 978_307_200
    /// A date above this in magnitude is nanoseconds, not seconds.
    static let nanosecondThreshold = 1e11

    static func id(_ value: SQLite.Value, column: String) throws(Failure) -> MemoID {
        switch value {
        case .blob(let bytes) where bytes.count == 16:
            let words = bytes.withUnsafeBytes { raw in
                (raw.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, raw.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            }
            return MemoID(high: words.0, low: words.1)
        case .text(let text):
            guard let id = MemoID(text) else { throw Failure(kind: .invalidID, message: "\(column) holds \(quoted(text)), which is not a UUID") }
            return id
        case .null: throw Failure(kind: .invalidID, message: "\(column) is empty (NULL), so the row has no id")
        default: throw Failure(kind: .invalidID, message: "\(column) holds \(found(value)), not a UUID (16 bytes or text)")
        }
    }

    /// A date rounded to the millisecond, and whether it was read as nanoseconds.
    static func date(_ value: SQLite.Value, column: String) throws(Failure) -> (Timestamp, nanoseconds: Bool)? {
        let milliseconds: Int64
        var nanoseconds = false
        switch value {
        case .null: return nil
        case .integer(let number):
            nanoseconds = Double(number).magnitude > nanosecondThreshold
            milliseconds = nanoseconds ? (number + (number < 0 ? -500_000 : 500_000)) / 1_000_000 : number * 1000
        case .real(let number) where number.isFinite:
            nanoseconds = number.magnitude > nanosecondThreshold
            let scaled = (nanoseconds ? number / 1e6 : number * 1000).rounded()
            guard scaled.magnitude < 1e17 else { throw Failure(message: "\(column) holds \(number), too far from today to be a date") }
            milliseconds = Int64(scaled)
        default: throw Failure(message: "\(column) holds \(found(value)), not a date (a number of seconds since 2001)")
        }
        let unix = milliseconds + referenceDate * 1000
        let seconds = unix >= 0 ? unix / 1000 : (unix - 999) / 1000
        let date = Timestamp(seconds: seconds, nanoseconds: Int32(unix - seconds * 1000) * 1_000_000)
        guard Timestamp.years.contains(date.year) else {
            throw Failure(
                message:
                    "\(column) holds \(found(value)), a date in year \(date.year); reckon keeps dates from year 1 to 9999 only, the years it can write back"
            )
        }
        return (date, nanoseconds)
    }

    static func text(_ value: SQLite.Value, column: String) throws(Failure) -> String? {
        switch value {
        case .null: return nil
        case .text(let text): return text
        default: throw Failure(message: "\(column) holds \(found(value)), not text")
        }
    }

    static func bool(_ value: SQLite.Value, column: String) throws(Failure) -> Bool? {
        switch value {
        case .null: return nil
        case .integer(let number): return number != 0
        default: throw Failure(message: "\(column) holds \(found(value)), not a bool (an INTEGER 0 or 1)")
        }
    }

    /// Tags kept in one column: a binary property list of strings, an
    /// NSKeyedArchiver archive of them (Core Data's default for a
    /// Transformable attribute), or a JSON array of strings in text.
    static func tags(_ value: SQLite.Value, column: String) throws(Failure) -> [String] {
        let bytes: Data
        switch value {
        case .null: return []
        case .text(let text): bytes = Data(text.utf8)
        case .blob(let blob): bytes = blob
        default: throw Failure(message: "the memo's tags (column \(column)) are \(found(value)), not a list of tags")
        }
        if bytes.starts(with: Array("bplist00".utf8)) {
            let top = try? PropertyListSerialization.propertyList(from: bytes, format: nil)
            if let strings = top as? [String] { return strings }
            if let archive = top as? [String: Any], archive["$archiver"] as? String == "NSKeyedArchiver" {
                guard isFlatArrayOfStrings(archive),
                    let strings = (try? NSKeyedUnarchiver.unarchivedObject(ofClasses: [NSArray.self, NSString.self], from: bytes)) as? [String]
                else {
                    throw Failure(
                        message:
                            "the memo's tags (column \(column)) are saved as an archive (NSKeyedArchiver) that holds something other than a list of tags"
                    )
                }
                return strings
            }
            throw Failure(
                message: "the memo's tags (column \(column)) are saved as an Apple property list that holds something other than a list of tags")
        }
        if bytes.first == UInt8(ascii: "["), let document = try? JSONParser.parse(bytes), case .array(let items) = document.value {
            let strings = items.compactMap { item -> String? in if case .string(let text) = item { text } else { nil } }
            if strings.count == items.count { return strings }
            throw Failure(message: "the memo's tags (column \(column)) are a JSON list in which not every tag is text")
        }
        throw Failure(
            message:
                "the memo's tags (column \(column)) are \(found(value)) in no form the app saves tags in (a list saved as an Apple property list, an archive or JSON), so they cannot be read"
        )
    }

    /// Whether a keyed archive's root is an array whose every member is a
    /// string: checked before Foundation unarchives it, because Foundation
    /// follows an archive that holds itself until the stack runs out.
    static func isFlatArrayOfStrings(_ archive: [String: Any]) -> Bool {
        guard let objects = archive["$objects"] as? [Any], let top = archive["$top"] as? [AnyHashable: Any],
            let root = uid(top["root"]), root < objects.count,
            let array = objects[root] as? [AnyHashable: Any], let members = array["NS.objects"] as? [Any]
        else { return false }
        return members.allSatisfy { member in uid(member).map { $0 < objects.count && objects[$0] is String } ?? false }
    }

    /// The number a keyed archive's reference (a plist UID) holds.
    private static func uid(_ value: Any?) -> Int? {
        guard let value, String(describing: type(of: value)).hasSuffix("KeyedArchiverUID") else { return nil }
        return Mirror(reflecting: value).children.first { $0.label == "value" }.flatMap { Int(exactly: ($0.value as? UInt32) ?? UInt32.max) }
    }

    /// What a value is, in words, for messages.
    static func found(_ value: SQLite.Value) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let number): "the integer \(number)"
        case .real(let number): "the number \(number)"
        case .text(let text): text.count > 40 ? "\(text.count) characters of text" : "the text \(quoted(text))"
        case .blob(let bytes): bytes.count == 1 ? "1 byte" : "\(bytes.count) bytes"
        case .notUTF8(let bytes): "\(bytes.count) bytes of text that is not UTF-8"
        }
    }
}
