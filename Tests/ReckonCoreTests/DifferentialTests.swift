import Foundation
import SeededGenerator
import TestSupport
import Testing

@testable import ReckonCore

/// The fuzzers' differential checks (`ReaderDifferential`), run inside
/// `swift test` on a fixed number of inputs made by mutating the seeds in
/// `Samples/` and `Tests/ReckonCLITests/Fixtures/` with the run's seed
/// (`TestSeed`), so each run tries other inputs and a printed seed tries
/// the same ones again.
@Suite struct DifferentialTests {
    static let inputsPerReader = 20_000
    static let seed = TestSeed.value

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every file under the seed folders that `keep` wants, in a fixed order.
    static func seeds(_ keep: (String) -> Bool) -> [[UInt8]] {
        var paths: [String] = []
        for folder in ["Samples", "Tests/ReckonCLITests/Fixtures"] {
            let base = root.appendingPathComponent(folder)
            let walker = FileManager.default.enumerator(atPath: base.path)
            while let relative = walker?.nextObject() as? String {
                if keep(relative) { paths.append(base.path + "/" + relative) }
            }
        }
        return paths.sorted().compactMap { path in
            guard let data = FileManager.default.contents(atPath: path), data.count < 64 << 10 else { return nil }
            return Array(data)
        }
    }

    /// Runs `check` on `inputsPerReader` mutated seeds, recording the first few differences with their input.
    func run(_ reader: String, salt: UInt64, seeds: [[UInt8]], _ check: (Data, MemoParser) -> String?) {
        #expect(!seeds.isEmpty)
        print(
            "DifferentialTests (\(reader)): \(Self.inputsPerReader) inputs from \(seeds.count) seed files; RECKON_TEST_SEED=\(Self.seed) replays it")
        var random = SeededRandom(seed: Self.seed &+ salt)
        let parser = MemoParser()
        var found = 0
        for number in 0..<Self.inputsPerReader where found < 5 {
            let input = Mutator.mutate(seeds[Int.random(in: 0..<seeds.count, using: &random)], seeds: seeds, using: &random)
            if let differs = check(Data(input), parser) {
                found += 1
                Issue.record("\(reader) input \(number) (seed \(Self.seed)): \(differs); base64 \(Data(input).base64EncodedString())")
            }
        }
    }

    @Test func indexReadersAgreeOnMutatedSeeds() {
        let scratch = testScratch.appendingPathComponent("reckon-differential-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        run("index", salt: 1, seeds: Self.seeds { $0.hasSuffix("index.json") }) { data, parser in
            ReaderDifferential.checkIndex(data, scratchPath: scratch, parser: parser)
        }
    }

    @Test func memoReadersAgreeOnMutatedSeeds() {
        run("memo", salt: 2, seeds: Self.seeds { $0.contains("memos/") && $0.hasSuffix(".json") }) { data, parser in
            ReaderDifferential.checkMemo(data, parser: parser)
        }
    }
}

/// libFuzzer's kinds of mutation, and some aimed at what strict reading
/// refuses: a repeated line (a key or an entry twice), a trailing comma,
/// UTF-16, bytes that are not UTF-8, surrogate escapes.
enum Mutator {
    static let tokens: [[UInt8]] =
        [
            #""id": "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "#, #""title": "x", "#, #""modifiedTime": "2026-04-19T14:32:00Z", "#,
            #""color": "x", "#, ",", "\"", ":", "{}", "[]", "}", "]", "null", "true", "-0", "1e400", "12345678901234567890",
            "\\u", "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\u0000", "\\n", " ", "\t", "\u{0C}", "\u{0}", "é", "\u{FEFF}"
        ].map { Array($0.utf8) } + [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80]]
    static let interesting: [UInt8] = [
        0x00, 0x1F, 0x20, 0x22, 0x2C, 0x2F, 0x3A, 0x5B, 0x5C, 0x5D, 0x7B, 0x7D, 0x7F, 0x80, 0xBF, 0xC3, 0xED, 0xEF, 0xF4, 0xFF
    ]

    static func mutate(_ input: [UInt8], seeds: [[UInt8]], using random: inout SeededRandom) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            func at(_ extra: Int = 0) -> Int { Int.random(in: 0..<(bytes.count + extra), using: &random) }
            let lines = bytes.indices.filter { bytes[$0] == 0x0A }
            switch Int.random(in: 0..<12, using: &random) {
            case 0 where !bytes.isEmpty: bytes[at()] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            case 1 where !bytes.isEmpty: bytes[at()] = UInt8.random(in: 0...255, using: &random)
            case 2 where !bytes.isEmpty: bytes[at()] = interesting.randomElement(using: &random)!
            case 3, 4: bytes.insert(contentsOf: tokens.randomElement(using: &random)!, at: at(1))
            case 5 where !bytes.isEmpty:
                let start = at()
                bytes.removeSubrange(start..<min(bytes.count, start + Int.random(in: 1...16, using: &random)))
            case 6 where lines.count >= 2:
                // A whole line again: in the pretty-printed seeds, a key written twice.
                let line = Int.random(in: 0..<(lines.count - 1), using: &random)
                bytes.insert(contentsOf: bytes[(lines[line] + 1)...lines[line + 1]], at: lines[line + 1] + 1)
            case 7 where lines.count >= 2:
                let line = Int.random(in: 0..<(lines.count - 1), using: &random)
                bytes.removeSubrange((lines[line] + 1)...lines[line + 1])
            case 8:
                // A comma before a closing bracket.
                let closers = bytes.indices.filter { bytes[$0] == 0x7D || bytes[$0] == 0x5D }
                if let closer = closers.randomElement(using: &random) { bytes.insert(0x2C, at: closer) }
            case 9:
                let other = seeds.randomElement(using: &random)!
                let cut = at(1)
                bytes = Array(bytes[..<cut]) + other[Int.random(in: 0...other.count, using: &random)...]
            case 10 where !bytes.isEmpty:
                let start = at()
                let chunk = bytes[start..<min(bytes.count, start + Int.random(in: 1...64, using: &random))]
                bytes.insert(contentsOf: chunk, at: at(1))
            case 11:
                // The same text in UTF-16, big-endian without a byte order mark or little-endian with one.
                let text = String(decoding: bytes, as: UTF8.self)
                let bigEndian = Bool.random(using: &random)
                bytes = bigEndian ? [] : [0xFF, 0xFE]
                for unit in text.utf16 {
                    bytes += bigEndian ? [UInt8(unit >> 8), UInt8(unit & 0xFF)] : [UInt8(unit & 0xFF), UInt8(unit >> 8)]
                }
            default: break
            }
        }
        return Array(bytes.prefix(64 << 10))
    }
}
