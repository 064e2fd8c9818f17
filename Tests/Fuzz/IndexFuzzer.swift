import Foundation

/// libFuzzer entry point for the index readers: any bytes must give a
/// `MemoIndex` or a `Failure`, never a crash or a hang; and the readers must
/// agree (`ReaderDifferential.checkIndex`: whenever the simdjson path, cut
/// into batches of any size, or the fast count takes a file, it gives
/// exactly what the careful reader gives).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIndexReader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("reckon-fuzz-index-\(getpid()).json").path
    if let differs = ReaderDifferential.checkIndex(Data(bytes: start, count: count), scratchPath: path, parser: parser) {
        preconditionFailure(differs)
    }
    return 0
}

/// The fuzzer's one parser: libFuzzer calls the entry point on one thread.
nonisolated(unsafe) let parser = MemoParser()
