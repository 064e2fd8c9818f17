/// A memo's id: a UUID, compared case-insensitively and written in small letters.
///
/// Only strings of the form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (hex digits)
/// are ids, so an id is always safe to use as part of a file name.
public struct MemoID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The id in small letters.
    public let value: String

    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return nil }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else {
                let isHex = (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
                guard isHex else { return nil }
            }
        }
        value = text.lowercased()
    }

    public var description: String { value }

    public static func < (a: MemoID, b: MemoID) -> Bool { a.value < b.value }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = MemoID(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a UUID: \(text)"))
        }
        self = id
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
