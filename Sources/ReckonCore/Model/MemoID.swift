/// A memo's id: a UUID, compared case-insensitively and written in small letters.
///
/// Only strings of the form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (hex digits)
/// are ids, so an id is always safe to use as part of a file name. Held as
/// its 128 bits, so a side's ids cost no allocation each.
package struct MemoID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    let high: UInt64
    let low: UInt64

    package init?<Text: StringProtocol>(_ text: Text) {
        let parsed =
            text.utf8.withContiguousStorageIfAvailable { MemoID(utf8: UnsafeRawBufferPointer($0)) }
            ?? Array(text.utf8).withUnsafeBytes { MemoID(utf8: $0) }
        guard let parsed else { return nil }
        self = parsed
    }

    /// Parses `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (hex digits of either case) from UTF-8.
    init?(utf8 bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 36 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for position in 0..<36 {
            let byte = bytes[position]
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let nibble: UInt8
            switch byte {
            case 0x30...0x39: nibble = byte - 0x30
            case 0x41...0x46: nibble = byte - 0x41 + 10
            case 0x61...0x66: nibble = byte - 0x61 + 10
            default: return nil
            }
            if position < 19 { high = high << 4 | UInt64(nibble) } else { low = low << 4 | UInt64(nibble) }
        }
        self.init(high: high, low: low)
    }

    /// The id whose 128 bits a fast reader has already taken apart.
    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The id in small letters.
    package var value: String { text(capitals: false) }

    /// The id in capitals or small letters, made as one string.
    func text(capitals: Bool, then suffix: StaticString = "") -> String {
        let count = 36 + suffix.utf8CodeUnitCount
        return String(unsafeUninitializedCapacity: count) { buffer in
            write(into: buffer, capitals: capitals)
            suffix.withUTF8Buffer { tail in _ = UnsafeMutableBufferPointer(rebasing: buffer[36...]).initialize(from: tail) }
            return count
        }
    }

    /// Appends the id in small letters, as UTF-8, with no string made.
    package func append(to bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { buffer in
            write(into: buffer, capitals: false)
            bytes.append(contentsOf: buffer)
        }
    }

    /// Writes the id's 36 bytes at the start of `buffer`.
    func write(into buffer: UnsafeMutableBufferPointer<UInt8>, capitals: Bool) {
        let letters: UInt8 = capitals ? 0x37 : 0x57
        var position = 0
        for index in 0..<32 {
            let word = index < 16 ? high : low
            let shift = UInt64(60 - (index % 16) * 4)
            if index == 8 || index == 12 || index == 16 || index == 20 {
                buffer[position] = UInt8(ascii: "-")
                position += 1
            }
            let nibble = UInt8((word >> shift) & 15)
            buffer[position] = nibble < 10 ? 0x30 + nibble : letters + nibble
            position += 1
        }
    }

    package var description: String { value }

    /// Ordered as their small-letter spellings are.
    package static func < (a: MemoID, b: MemoID) -> Bool { (a.high, a.low) < (b.high, b.low) }

    package init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = MemoID(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a UUID: \(text)"))
        }
        self = id
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
