import Foundation

/// A count and its noun in English, singular for 1: `1 memo`, `2 memos`;
/// `plural` where an added s is wrong (`entries`). Every English sentence
/// that says how many uses this (Japanese has no plural).
package func counted(_ n: some BinaryInteger, _ noun: String, _ plural: String? = nil) -> String {
    "\(n) " + (n == 1 ? noun : plural ?? noun + "s")
}

/// A file name's bytes as text: valid UTF-8 as it is, and each byte that is
/// not part of valid UTF-8 as `\x{ff}`, so the real bytes can still be found
/// (`String(decoding:as:)` would turn them all into U+FFFD).
package func displayName<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
    Array(bytes).withUnsafeBytes { bytes in
        var text = ""
        var start = 0
        while start < bytes.count {
            if let length = utf8SequenceLength(bytes, at: start) {
                text += String(decoding: bytes[start..<start + length], as: UTF8.self)
                start += length
            } else {
                text += "\\x{" + hex(bytes[start]) + "}"
                start += 1
            }
        }
        return text
    }
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
package func escapedForDisplay(_ text: String) -> String {
    // Most text is printable ASCII, told byte by byte without asking Unicode's tables.
    if text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) { return text }
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

/// Whether a terminal or a page would obey `scalar` rather than show it.
package func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    if scalar.isASCII { return scalar.value < 0x20 || scalar.value == 0x7F }
    switch scalar.properties.generalCategory {
    case .control, .format, .lineSeparator, .paragraphSeparator: return true
    default: return false
    }
}

/// JSON for stdout, and so perhaps a terminal: every character that
/// `escapedForDisplay` would escape is written as a `\u` escape instead,
/// which JSON allows in any string and which keeps the value the same.
/// Outside strings the writer puts only spaces and line breaks, which stay.
package func escapedJSONForDisplay(_ data: Data) -> String {
    var text = ""
    for scalar in String(decoding: data, as: UTF8.self).unicodeScalars {
        guard scalar != "\n", needsEscape(scalar) else {
            text.unicodeScalars.append(scalar)
            continue
        }
        for unit in String(scalar).utf16 {
            let digits = String(unit, radix: 16)
            text += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
        }
    }
    return text
}
