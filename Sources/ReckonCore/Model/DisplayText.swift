/// A file name's bytes as text: valid UTF-8 as it is, and each byte that is
/// not part of valid UTF-8 as `\x{ff}`, so the real bytes can still be found
/// (`String(decoding:as:)` would turn them all into U+FFFD).
package func displayName<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
    let bytes = Array(bytes)
    var text = ""
    var start = 0
    while start < bytes.count {
        let length = validUTF8Length(bytes, at: start)
        if length == 0 {
            text += "\\x{" + hex(bytes[start]) + "}"
            start += 1
        } else {
            text += String(decoding: bytes[start..<start + length], as: UTF8.self)
            start += length
        }
    }
    return text
}

/// The length of the one well-formed UTF-8 sequence starting at `start`, or 0.
private func validUTF8Length(_ bytes: [UInt8], at start: Int) -> Int {
    let lead = bytes[start]
    let (length, low, high): (Int, UInt8, UInt8) = switch lead {
    case 0x00...0x7F: (1, 0x80, 0xBF)
    case 0xC2...0xDF: (2, 0x80, 0xBF)
    case 0xE0: (3, 0xA0, 0xBF)
    case 0xE1...0xEC, 0xEE...0xEF: (3, 0x80, 0xBF)
    case 0xED: (3, 0x80, 0x9F)
    case 0xF0: (4, 0x90, 0xBF)
    case 0xF1...0xF3: (4, 0x80, 0xBF)
    case 0xF4: (4, 0x80, 0x8F)
    default: (0, 0, 0)
    }
    guard length > 0, start + length <= bytes.count else { return 0 }
    for offset in 1..<length {
        let byte = bytes[start + offset]
        let (min, max): (UInt8, UInt8) = offset == 1 ? (low, high) : (0x80, 0xBF)
        guard byte >= min && byte <= max else { return 0 }
    }
    return length
}

private func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16)
    return digits.count == 1 ? "0" + digits : digits
}

/// Text from a file, a name or a path made safe to show on a terminal or a
/// page: control characters (ESC, BEL, CR, LF, …), format characters
/// (bidi overrides such as U+202E, zero-width characters: Unicode's Cf) and
/// line or paragraph separators are shown escaped, as `\u{1b}`, so nothing
/// read from a source can move the cursor, reorder a line or hide itself.
public func escapedForDisplay(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var shown = ""
    for scalar in text.unicodeScalars {
        if needsEscape(scalar) {
            shown += "\\u{" + String(scalar.value, radix: 16) + "}"
        } else {
            shown.unicodeScalars.append(scalar)
        }
    }
    return shown
}

private func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .control, .format, .lineSeparator, .paragraphSeparator: true
    default: false
    }
}
