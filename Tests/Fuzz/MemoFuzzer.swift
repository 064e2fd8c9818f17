import Foundation

/// libFuzzer entry point for the memo readers: any bytes must give a `Memo`
/// or a `Failure`, never a crash or a hang; and the readers must agree
/// (`ReaderDifferential.checkMemo`: whenever the simdjson path takes a file,
/// it gives exactly what the careful reader gives; simdjson never takes as
/// JSON what reckon's parser refuses; the memos.json entry is what the
/// general JSON writer writes).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMemoReader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    if let differs = ReaderDifferential.checkMemo(Data(bytes: start, count: count), parser: parser) {
        preconditionFailure(differs)
    }
    return 0
}

/// The fuzzer's one parser: libFuzzer calls the entry point on one thread.
nonisolated(unsafe) let parser = MemoParser()
