import Foundation

/// The 64-bit FNV-1a hash, words taken whole: cheap, stable across runs and machines (Swift's
/// own `Hasher` is seeded per process), and enough to notice a change.
struct FNV64 {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    /// A whole word in one step, as FNV-1a takes a byte: every step is a
    /// one-to-one map of the hash for a given input, so two inputs that
    /// differ in one word never meet.
    mutating func add(word: UInt64) {
        value = (value ^ word) &* 0x0000_0100_0000_01b3
    }

    mutating func add(text: String?) {
        guard let text else { return add(byte: 0) }
        add(byte: 1)
        add(word: UInt64(text.utf8.count))
        for byte in text.utf8 { add(byte: byte) }
    }

    mutating func add(time: Timestamp?) {
        guard let time else { return add(byte: 0) }
        add(byte: 1)
        add(word: UInt64(bitPattern: time.seconds))
        add(word: UInt64(UInt32(bitPattern: time.nanoseconds)))
    }

    static func of(_ text: String) -> UInt64 {
        var hash = FNV64()
        hash.add(text: text)
        return hash.value
    }
}
