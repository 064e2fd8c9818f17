import Foundation

/// Splits a `memos.json` as its bytes arrive: each element of its `memos`
/// array is handed over as its own bytes, to be read as a memo, and the
/// rest of the file (the array emptied) is kept to be read at the end. So
/// a file of any size is read in little memory, and one damaged memo
/// spoils only itself.
struct MemosSplitter {
    /// The most bytes one memo, or the file outside its memos, may take:
    /// the manifest's `memoBytes`.
    var memoBytes = ExportManifest.defaultMemoBytes
    private var depth = 0
    private var inString = false
    private var escaped = false
    /// Inside the `memos` array, between its brackets.
    private var inMemos = false
    private var sawMemos = false
    /// The string being read at the top level, and the last one read.
    private var topString: [UInt8] = []
    private var lastTopString: [UInt8] = []
    private var key: [UInt8] = []
    private var element: [UInt8] = []
    private var skeleton: [UInt8] = []
    private var elements = 0
    /// Why the file's structure is broken, once found.
    private(set) var failure: String?
    /// Bytes read so far, for messages.
    private var offset = 0

    /// Reads the next bytes, handing over each whole element of `memos`.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, each: ([UInt8]) throws -> Void) rethrows {
        guard failure == nil else { return }
        var runStart = 0
        /// Adds the bytes since `runStart` to the element or the skeleton.
        func flush(upTo end: Int, into target: inout [UInt8]) {
            if end > runStart { target.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<end])) }
            runStart = end
        }
        var index = 0
        let count = bytes.count
        while index < count {
            if inString && !escaped && depth != 1 {
                // Inside a memo's string only a quote or a backslash matters.
                index = Self.quoteOrBackslash(in: bytes, from: index)
                guard index < count else { break }
            }
            let byte = bytes[index]
            defer { index += 1 }
            if inString {
                readInString(byte)
                continue
            }
            if inMemos && depth == 2 && (byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09) {
                // Space around a memo is not part of it, and is not kept.
                flush(upTo: index, into: &element)
                runStart = index + 1
                continue
            }
            switch byte {
            case 0x22:
                inString = true
                if depth == 1 { topString.removeAll(keepingCapacity: true) }
            case 0x3A where depth == 1:
                key = lastTopString
            case 0x7B, 0x5B:
                if depth == 1 && byte == 0x5B && !inMemos && !sawMemos && key == Array("memos".utf8) {
                    flush(upTo: index + 1, into: &skeleton)
                    inMemos = true
                    sawMemos = true
                    depth += 1
                    continue
                }
                depth += 1
            case 0x2C where inMemos && depth == 2:
                flush(upTo: index, into: &element)
                runStart = index + 1
                try emit(each, last: false)
            case 0x7D, 0x5D:
                if inMemos && depth == 2 {
                    guard byte == 0x5D else {
                        failure = "not valid JSON (a '}' closes the memos array at byte \(offset + index))"
                        return
                    }
                    flush(upTo: index, into: &element)
                    try emit(each, last: true)
                    inMemos = false
                }
                guard depth > 0 else {
                    failure = "not valid JSON (a closing bracket too many at byte \(offset + index))"
                    return
                }
                depth -= 1
            default:
                break
            }
        }
        if inMemos { flush(upTo: count, into: &element) } else { flush(upTo: count, into: &skeleton) }
        offset += count
        checkSizes()
    }

    /// Takes one byte inside a string: an escape, the closing quote, or a
    /// byte of a top-level string (a key).
    @inline(__always)
    private mutating func readInString(_ byte: UInt8) {
        if escaped {
            escaped = false
        } else if byte == 0x5C {
            escaped = true
        } else if byte == 0x22 {
            inString = false
            if depth == 1 { lastTopString = topString }
        } else if depth == 1 {
            topString.append(byte)
        }
    }

    /// Fails when the memo being read, or the file outside its memos, is
    /// longer than `memoBytes`: memory stays bounded whatever the file
    /// holds (gigabytes of spaces between two brackets).
    private mutating func checkSizes() {
        if element.count > memoBytes || skeleton.count > memoBytes {
            failure =
                "holds a memo, or bytes outside the memos, longer than \(counted(memoBytes, "byte")) (by byte \(offset)), "
                + "the most manifest.json allows one (memoBytes); reckon never writes one"
        }
    }

    /// Where the next `"` or `\` is at or after `start`, or the end:
    /// 32 bytes a step, as most of a memos.json is its memos' text.
    private static func quoteOrBackslash(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        var index = start
        let quote = SIMD32<UInt8>(repeating: 0x22)
        let backslash = SIMD32<UInt8>(repeating: 0x5C)
        while index + 32 <= bytes.count {
            let chunk = bytes.loadUnaligned(fromByteOffset: index, as: SIMD32<UInt8>.self)
            if any((chunk .== quote) .| (chunk .== backslash)) { break }
            index += 32
        }
        while index < bytes.count && bytes[index] != 0x22 && bytes[index] != 0x5C { index += 1 }
        return index
    }

    /// Hands over the element read so far; an empty one is a stray comma,
    /// but an empty array has none.
    private mutating func emit(_ each: ([UInt8]) throws -> Void, last: Bool) rethrows {
        defer { element.removeAll(keepingCapacity: true) }
        if element.isEmpty && last && elements == 0 { return }
        elements += 1
        try each(element)
    }

    /// The file without its memos (`"memos": []`), once every byte is read;
    /// nil with `failure` set when the file is broken or cut short.
    mutating func finish() -> [UInt8]? {
        if failure == nil && (depth != 0 || inString) { failure = "is cut short (a string or bracket is never closed)" }
        if failure == nil && !sawMemos { failure = "has no \"memos\" array" }
        return failure == nil ? skeleton : nil
    }
}
