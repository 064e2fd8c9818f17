import CSimdJSON

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
}

@available(*, unavailable, message: "a parser belongs to one worker; make one per worker")
extension MemoParser: Sendable {}
