/// How an id is written, in index.json or in a memo file's name: in
/// capitals (as the app writes ids), in small letters, or mixed. Held
/// without a string unless the letters are mixed, so a side's 100,000
/// spellings cost no allocation each.
package enum IDSpelling: Sendable, Equatable {
    case capital
    case small
    case mixed(String)

    /// The spelling of `text` (UTF-8), which must hold the id it spells.
    init(_ text: UnsafeRawBufferPointer) {
        let capitals = text.contains { (0x41...0x46).contains($0) }
        let smalls = text.contains { (0x61...0x66).contains($0) }
        if capitals && smalls {
            self = .mixed(String(decoding: text, as: UTF8.self))
        } else {
            self = capitals ? .capital : .small
        }
    }

    /// The spelling of `text`, which must hold the id it spells.
    package init(_ text: String) {
        var text = text
        self = text.withUTF8 { IDSpelling(UnsafeRawBufferPointer($0)) }
    }

    /// `id` written this way.
    package func text(of id: MemoID) -> String { text(of: id, then: "") }

    /// The memo file's name for `id` written this way: `<id>.json`.
    package func fileName(of id: MemoID) -> String { text(of: id, then: ".json") }

    private func text(of id: MemoID, then suffix: StaticString) -> String {
        switch self {
        case .small: id.text(capitals: false, then: suffix)
        case .capital: id.text(capitals: true, then: suffix)
        case .mixed(let text): text + suffix.description
        }
    }

    func write(to record: inout Record) {
        switch self {
        case .capital: record.add(UInt8(0))
        case .small: record.add(UInt8(1))
        case .mixed(let text):
            record.add(UInt8(2))
            record.add(text)
        }
    }

    init(from reader: inout RecordReader) {
        switch reader.byte() {
        case 0: self = .capital
        case 1: self = .small
        default: self = .mixed(reader.text()!)
        }
    }
}
