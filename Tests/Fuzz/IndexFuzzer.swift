import CSimdJSON
import Foundation

/// libFuzzer entry point for the index readers: any bytes must give a
/// `MemoIndex` or a `Failure`, never a crash or a hang; and whenever the
/// simdjson path (cut into batches of any size) or the fast count takes a
/// file, it must give exactly what the careful reader gives.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIndexReader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let careful = try? IndexReader.read(data)
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("reckon-fuzz-index-\(getpid()).json").path
    guard FileManager.default.createFile(atPath: path, contents: data) else { return 0 }
    for batchBytes in [1, 7, 64, 1 << 19] {
        if let fast = IndexReader.readClean(atPath: path, batchBytes: batchBytes) {
            precondition(careful.map { $0.problems.isEmpty && $0.entries == fast.entries } == true, "readClean differs (batch \(batchBytes))")
        }
    }
    var counts = reckon_index_counts()
    if reckon_count_clean_index(path, &counts) == 0 {
        let expected = careful.map { MemoCounts.aggregate($0.entries) }
        precondition(careful?.problems.isEmpty == true && expected == MemoCounts(active: Int(counts.active), archived: Int(counts.archived)),
                     "the fast count differs")
    }
    return 0
}
