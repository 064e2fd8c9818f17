import CSimdJSON
import Foundation

// The fuzzers (Tests/Fuzz/run.sh) compile this file into the core itself.
#if !RECKON_FUZZER
    @testable import ReckonCore
#endif

/// The differential checks the fuzzers (`Tests/Fuzz`) and `DifferentialTests`
/// run on one input: whenever a simdjson fast path takes a file, it must
/// give exactly what the careful reader gives, and simdjson must never
/// take as JSON what reckon's strict parser calls damaged. Each check
/// gives nil when the readers agree, else what differs.
enum ReaderDifferential {
    /// Checks `data` as an index.json, written to `scratchPath` for the
    /// readers that take a path: cut into batches of 1, 7, 64 bytes and the
    /// default, and counted on every core.
    static func checkIndex(_ data: Data, scratchPath: String, parser: MemoParser) -> String? {
        if let differs = checkParser(data, parser: parser) { return differs }
        let careful = try? IndexReader.read(data)
        guard FileManager.default.createFile(atPath: scratchPath, contents: data) else { return nil }
        for batchBytes in [1, 7, 64, Int(RECKON_CLEAN_INDEX_BATCH_BYTES)] {
            if let fast = IndexReader.readClean(atPath: scratchPath, batchBytes: batchBytes),
                careful.map({ $0.problems.isEmpty && $0.entries == fast.entries }) != true
            {
                return "readClean (batches of \(batchBytes) bytes) takes an index the careful reader reads otherwise"
            }
        }
        var counts = reckon_index_counts()
        if reckon_count_clean_index(scratchPath, &counts, 0) == 0 {
            let expected = careful.map { MemoCounts.aggregate($0.entries) }
            if careful?.problems.isEmpty != true || expected != MemoCounts(active: Int(counts.active), archived: Int(counts.archived)) {
                return "the fast count differs from the careful reader's"
            }
        }
        return nil
    }

    /// Checks `data` as a memo file. Every memo the careful reader reads is
    /// also written as `memos.json` holds it, field by field and by the
    /// general JSON writer, and the two must agree.
    static func checkMemo(_ data: Data, parser: MemoParser) -> String? {
        if let differs = checkParser(data, parser: parser) { return differs }
        let careful = try? MemoReader.readCarefully(data)
        if var memo = careful {
            memo.otherFields = [:]
            var general = JSONWriter(depth: 2)
            general.value(JSONExport.value(of: memo))
            if JSONExport.entry(of: memo) != general.take() { return "the memos.json entry differs from the general writer's" }
        }
        if let fast = MemoReader.readClean(data, parser: parser) {
            if fast != careful { return "readClean differs from the careful reader" }
            if (try? MemoReader.readSummary(data, parser: parser))?.1 != careful.map(MemoSummary.init) {
                return "readSummary differs from the careful reader"
            }
        }
        return nil
    }

    /// Whatever simdjson takes as JSON, reckon's parser takes too (a byte
    /// order mark aside, which only reckon's skips). The other way need not
    /// hold: simdjson also refuses numbers too large for a Double or an
    /// Int64, which reckon keeps as text.
    static func checkParser(_ data: Data, parser: MemoParser) -> String? {
        let outcome = Result { () throws(JSONSyntaxError) in try JSONParser.parse(data) }
        if case .failure(let error) = outcome, error.kind == .tooDeep { return nil }
        let bytes = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...]
        let simdjson = bytes.withUnsafeBytes { reckon_memo_parser_accepts(parser.handle, $0.baseAddress, $0.count) } == 1
        if simdjson, case .failure(let error) = outcome { return "simdjson takes what reckon's parser refuses: \(error)" }
        return nil
    }
}
