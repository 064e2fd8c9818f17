import CSimdJSON
import Foundation

/// simdjson's parser for clean memo files (`reckon_memo_parser`), reused
/// from file to file. One worker owns one: it is not `Sendable`, and a
/// memo's text from `MemoReader` stays inside it only until its next file.
package final class MemoParser {
    let handle: OpaquePointer

    package init() {
        guard let handle = reckon_memo_parser_create() else { fatalError("out of memory making a simdjson parser") }
        self.handle = handle
    }

    deinit { reckon_memo_parser_destroy(handle) }

    /// The "generator" and "pipeline" strings of an export's manifest.json
    /// (nil for one absent or not a string), read without making values of
    /// the rest; nil when the bytes are no JSON object, or name either twice.
    package func manifestNames(_ data: Data) -> (generator: String?, pipeline: String?)? {
        let body = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...]
        var generator = reckon_text()
        var pipeline = reckon_text()
        let read = body.withUnsafeBytes { reckon_manifest_names(handle, $0.baseAddress, $0.count, &generator, &pipeline) }
        guard read == 0 else { return nil }
        func string(_ text: reckon_text) -> String? {
            text.data.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: text.length), as: UTF8.self) }
        }
        return (string(generator), string(pipeline))
    }
}

@available(*, unavailable, message: "a parser belongs to one worker; make one per worker")
extension MemoParser: Sendable {}
