import Foundation
import ReckonCore
import SeededGenerator

/// A generated pair of memo folders of 100,000 memos and its sibling of
/// 10,000, and how the rows run on it are named: every row on a pair runs
/// on each data set, its name ending in the set's label.
struct DataSet: Sendable {
    /// The 100k pair's label in row names ("100k", "100k short").
    var label: String
    /// The 10k pair's label in row names.
    var smallLabel: String
    /// The folders under the data folder.
    var folder: String
    var smallFolder: String
    var drift: Double
    var bodyWords: Range<Int>
    /// What the set is, for the table's heading.
    var description: String

    static let long = DataSet(
        label: "100k", smallLabel: "10k", folder: "pair-100k", smallFolder: "pair-10k", drift: 0.015, bodyWords: 30..<430,
        description: "memos of 30–429 words, ~1.5% drift")
    /// The issue's data: memos of 20–300 words, ~1% drift.
    static let short = DataSet(
        label: "100k short", smallLabel: "10k short", folder: "pair-short-100k", smallFolder: "pair-short-10k", drift: 0.01,
        bodyWords: 20..<301, description: "memos of 20–300 words, ~1% drift")
    static let all = [long, short]

    func generator(memos: Int, seed: UInt64) -> Generator {
        Generator(memos: memos, seed: seed, drift: drift, bodyWords: bodyWords)
    }
}

/// Generated memo folders: a Drive copy and a device copy with controlled drift.
struct Generator {
    var memos: Int
    var seed: UInt64
    /// Share of memos that differ on the device (missing, edited, archived on one side).
    var drift = 0.015
    /// How many words a memo's body has (the first data set's 30 to 429).
    var bodyWords = 30..<430

    static let words = [
        "memo", "note", "idea", "trip", "book", "list", "meeting", "draft", "plan", "sync", "drive", "device",
        "coffee", "train", "Kyoto", "garden", "letter", "recipe", "budget", "weekend", "京都", "旅行", "買い物", "会議"
    ]

    func uuid(_ random: inout SeededRandom) -> String {
        let a = random.next()
        let b = random.next()
        let hex = String(format: "%016llX%016llX", a, b)
        let chars = Array(hex)
        return "\(String(chars[0..<8]))-\(String(chars[8..<12]))-4\(String(chars[13..<16]))-8\(String(chars[17..<20]))-\(String(chars[20..<32]))"
    }

    func date(_ seconds: Int64) -> String {
        Timestamp(seconds: seconds).iso8601
    }

    /// One memo; instants are Unix seconds, written out as ISO 8601 in a
    /// folder and as seconds since 2001 in a store.
    struct Memo {
        var id: String
        var title: String
        var body: String
        var created: Int64
        var modified: Int64
        var archived: Int64?
        var deleted: Int64?
    }

    func memo(_ random: inout SeededRandom, withBody: Bool) -> Memo {
        let created = 1_767_225_600 + Int64(random.next() % 9_000_000)
        let modified = created + Int64(random.next() % 2_000_000)
        let roll = random.next() % 100
        let title = (0..<3).map { _ in Self.words[Int(random.next() % UInt64(Self.words.count))] }.joined(separator: " ")
        var body = ""
        if withBody {
            let length = bodyWords.lowerBound + Int(random.next() % UInt64(bodyWords.count))
            body = (0..<length).map { _ in Self.words[Int(random.next() % UInt64(Self.words.count))] }.joined(separator: " ")
        }
        return Memo(
            id: uuid(&random), title: title, body: body, created: created, modified: modified,
            archived: roll < 12 ? modified : nil, deleted: (12..<20).contains(roll) ? modified : nil)
    }

    /// A JSON string literal (the generated text has no control characters).
    static func json(_ text: String?) -> String {
        guard let text else { return "null" }
        return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    func indexLine(_ memo: Memo) -> String {
        #"{"id":"\#(memo.id)","modifiedTime":"\#(date(memo.modified))","archivedAt":\#(Self.json(memo.archived.map(date))),"deletedAt":\#(Self.json(memo.deleted.map(date)))}"#
    }

    func memoFile(_ memo: Memo) -> String {
        #"{"id":"\#(memo.id)","title":\#(Self.json(memo.title)),"body":\#(Self.json(memo.body)),"createdAt":"\#(date(memo.created))","modifiedAt":"\#(date(memo.modified))","archivedAt":\#(Self.json(memo.archived.map(date))),"deletedAt":\#(Self.json(memo.deleted.map(date))),"tags":["bench"],"pinned":false}"#
    }

    /// Writes `index.json` only, for the counting benchmark.
    func writeIndexOnly(to folder: URL) throws {
        var random = SeededRandom(seed: seed)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var lines: [String] = []
        lines.reserveCapacity(memos)
        for _ in 0..<memos { lines.append(indexLine(memo(&random, withBody: false))) }
        try Data(("{\"schemaVersion\":1,\"entries\":[\n" + lines.joined(separator: ",\n") + "\n]}\n").utf8)
            .write(to: folder.appendingPathComponent("index.json"))
    }

    /// The memos of a pair: the Drive copy's, and the device copy's, which
    /// lacks, edits or archives `drift` of them.
    func pairMemos() -> (drive: [Memo], device: [Memo]) {
        var random = SeededRandom(seed: seed)
        let all = (0..<memos).map { _ in memo(&random, withBody: true) }
        var device: [Memo] = []
        for (n, memo) in all.enumerated() {
            let bucket = Double(n % 1000) / 1000
            if bucket < drift / 3 { continue }
            var copy = memo
            if bucket < drift * 2 / 3 {
                copy.body += " edited on the device"
                copy.modified = Int64(1_777_000_000 + n)
            } else if bucket < drift, copy.deleted == nil {
                copy.archived = copy.archived == nil ? copy.modified : nil
            }
            device.append(copy)
        }
        return (all, device)
    }

    /// Writes `drive/60dMemo` and `device/60dMemo` (see `pairMemos`).
    func writePair(to folder: URL) throws {
        let (all, device) = pairMemos()
        for (name, memos) in [("drive", all), ("device", device)] {
            let root = folder.appendingPathComponent(name).appendingPathComponent("60dMemo")
            try FileManager.default.createDirectory(at: root.appendingPathComponent("memos"), withIntermediateDirectories: true)
            try Data(("{\"schemaVersion\":1,\"entries\":[\n" + memos.map(indexLine).joined(separator: ",\n") + "\n]}\n").utf8)
                .write(to: root.appendingPathComponent("index.json"))
            for memo in memos {
                try Data(memoFile(memo).utf8).write(to: root.appendingPathComponent("memos/\(memo.id).json"))
            }
        }
    }
}
