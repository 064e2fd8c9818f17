import Foundation

/// The name and time rules of a zip entry, which the export's writer
/// follows and verify checks.
package enum ZipEntryRules {
    /// Refuses a name that is absolute, climbs with `..`, holds a backslash,
    /// an empty part or a control character.
    package static func checkName(_ name: String) throws(ArchiveError) {
        // Over the UTF-8 bytes, part by part: it runs for every entry.
        func isSafe(length: Int, dots: Int) -> Bool { length > 0 && !(dots == length && length <= 2) }
        var length = 0
        var dots = 0
        var safe = !containsControlCharacter(name)
        for byte in name.utf8 where safe {
            switch byte {
            case UInt8(ascii: "/"):
                safe = isSafe(length: length, dots: dots)
                length = 0
                dots = 0
            case UInt8(ascii: "\\"): safe = false
            case UInt8(ascii: "."):
                length += 1
                dots += 1
            default: length += 1
            }
        }
        guard safe, isSafe(length: length, dots: dots) else { throw ArchiveError(message: "unsafe entry name \(quoted(name))") }
    }

    /// Whether `text` holds a control character (general category Cc:
    /// U+0000–U+001F and U+007F–U+009F), found in its UTF-8 bytes: U+0080–U+009F
    /// are the only scalars encoded as 0xC2 followed by 0x80–0x9F.
    package static func containsControlCharacter(_ text: String) -> Bool {
        var afterC2 = false
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F || (afterC2 && byte < 0xA0) { return true }
            afterC2 = byte == 0xC2
        }
        return false
    }

    /// The earliest and latest instants a zip entry can carry.
    package static let earliest = Timestamp(iso8601: "1980-01-01T00:00:00Z")!
    package static let latest = Timestamp(iso8601: "2107-12-31T23:59:58Z")!
}
