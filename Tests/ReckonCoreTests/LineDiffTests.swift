import Foundation
import TestSupport
import Testing

@testable import ReckonCore

@Suite struct LineDiffTests {
    /// A text of these lines, each ended by "\n".
    static func text(_ lines: [String]) -> String { lines.map { $0 + "\n" }.joined() }
    static func text(_ lines: String...) -> String { text(lines) }
    /// Lines "prefix1" … "prefixN".
    static func numbered(_ prefix: String, _ count: Int) -> [String] { (0..<count).map { "\(prefix)\($0 + 1)" } }
    static func same(_ lines: [String]) -> [LineDiff.Piece] { lines.map { .same($0) } }

    // MARK: - Small edits

    @Test func insertInTheMiddle() {
        let diff = LineDiff(old: Self.text("a", "b", "c"), new: Self.text("a", "b", "x", "c"))
        #expect(diff.pieces == [.same("a"), .same("b"), .added("x"), .same("c")])
        #expect(diff.removed == 0 && diff.added == 1 && !diff.isEmpty)
    }

    @Test func deleteAtTheStart() {
        let diff = LineDiff(old: Self.text("a", "b", "c"), new: Self.text("b", "c"))
        #expect(diff.pieces == [.removed("a"), .same("b"), .same("c")])
        #expect(diff.removed == 1 && diff.added == 0)
    }

    @Test func changeAtTheEnd() {
        let diff = LineDiff(old: Self.text("a", "b", "c"), new: Self.text("a", "b", "d"))
        #expect(diff.pieces == [.same("a"), .same("b"), .removed("c"), .added("d")])
        #expect(diff.removed == 1 && diff.added == 1)
    }

    @Test func removedLinesComeBeforeAddedOnesInABlock() {
        let diff = LineDiff(old: Self.text("k", "a1", "a2", "a3", "k"), new: Self.text("k", "b1", "b2", "k"))
        #expect(diff.pieces == [.same("k"), .removed("a1"), .removed("a2"), .removed("a3"), .added("b1"), .added("b2"), .same("k")])
    }

    @Test func theEditScriptIsMinimal() {
        // Keeping "b c d" (three lines) beats keeping "a" (one): 2 removed and 2 added, not 4 and 4.
        let diff = LineDiff(old: Self.text("a", "b", "c", "d", "x"), new: Self.text("y", "b", "c", "d", "a"))
        #expect(diff.removed == 2 && diff.added == 2)
        #expect(diff.pieces == [.removed("a"), .added("y"), .same("b"), .same("c"), .same("d"), .removed("x"), .added("a")])
    }

    // MARK: - Identical texts

    @Test func identicalShortTextIsShownWhole() {
        let lines = Self.numbered("line", 6)
        let diff = LineDiff(old: Self.text(lines), new: Self.text(lines))
        #expect(diff.pieces == Self.same(lines))
        #expect(diff.isEmpty && diff.removed == 0 && diff.added == 0)
    }

    @Test func identicalLongTextIsOneFold() {
        let lines = Self.numbered("line", 7)
        let diff = LineDiff(old: Self.text(lines), new: Self.text(lines))
        #expect(diff.pieces == [.folded(7)])
        #expect(diff.isEmpty)
        #expect(diff.text(colour: false) == "  ⋯ 7 unchanged lines\n")
    }

    @Test func aLastLineBreakMakesNoEmptyLine() {
        #expect(LineDiff(old: "a\nb", new: "a\nb\n").isEmpty)
        #expect(LineDiff(old: "a\n\n", new: "a\n").pieces == [.same("a"), .removed("")])
    }

    // MARK: - Folding

    @Test func foldingAtTheStartKeepsThreeLinesBeforeTheChange() {
        let before = Self.numbered("s", 10)
        let diff = LineDiff(old: Self.text(before + ["old"]), new: Self.text(before + ["new"]))
        #expect(diff.pieces == [.folded(7), .same("s8"), .same("s9"), .same("s10"), .removed("old"), .added("new")])
    }

    @Test func foldingAtTheEndKeepsThreeLinesAfterTheChange() {
        let after = Self.numbered("e", 10)
        let diff = LineDiff(old: Self.text(["old"] + after), new: Self.text(["new"] + after))
        #expect(diff.pieces == [.removed("old"), .added("new"), .same("e1"), .same("e2"), .same("e3"), .folded(7)])
    }

    @Test func foldingInTheMiddleKeepsThreeLinesEachSide() {
        let middle = Self.numbered("m", 10)
        let diff = LineDiff(old: Self.text(["x"] + middle + ["y"]), new: Self.text(middle))
        #expect(
            diff.pieces == [.removed("x"), .same("m1"), .same("m2"), .same("m3"), .folded(4), .same("m8"), .same("m9"), .same("m10"), .removed("y")])
    }

    @Test func shortRunsAtTheEndsAreShownWhole() {
        // Three lines at either end: shown whole. Four: one folded, never a fold of nothing.
        let three = LineDiff(old: Self.text(["a", "b", "c", "x", "d", "e", "f"]), new: Self.text(["a", "b", "c", "d", "e", "f"]))
        #expect(three.pieces == [.same("a"), .same("b"), .same("c"), .removed("x"), .same("d"), .same("e"), .same("f")])
        let four = LineDiff(old: Self.text(["a", "b", "c", "d", "x", "e", "f", "g", "h"]), new: Self.text(["a", "b", "c", "d", "e", "f", "g", "h"]))
        #expect(
            four.pieces == [.folded(1), .same("b"), .same("c"), .same("d"), .removed("x"), .same("e"), .same("f"), .same("g"), .folded(1)])
    }

    @Test func aRunOfSixBetweenChangesIsShownWhole() {
        let six = Self.numbered("m", 6)
        let diff = LineDiff(old: Self.text(["x"] + six + ["y"]), new: Self.text(six))
        #expect(diff.pieces == [.removed("x")] + Self.same(six) + [.removed("y")])
    }

    @Test func aRunOfSevenBetweenChangesFoldsOneLine() {
        let seven = Self.numbered("m", 7)
        let diff = LineDiff(old: Self.text(["x"] + seven + ["y"]), new: Self.text(seven))
        #expect(
            diff.pieces == [.removed("x"), .same("m1"), .same("m2"), .same("m3"), .folded(1), .same("m5"), .same("m6"), .same("m7"), .removed("y")])
        #expect(diff.text(colour: false).contains("  ⋯ 1 unchanged line\n"))
    }

    // MARK: - Line ends and empty texts

    @Test func carriageReturnsStayInTheLine() {
        let toLF = LineDiff(old: "a\r\nb\r\n", new: "a\nb\n")
        #expect(toLF.pieces == [.removed("a\r"), .removed("b\r"), .added("a"), .added("b")])
        let same = LineDiff(old: "a\r\nb\r\n", new: "a\r\nc\r\n")
        #expect(same.pieces == [.same("a\r"), .removed("b\r"), .added("c\r")])
        // The CR is shown, escaped, so a change of line ends alone is visible.
        #expect(toLF.text(colour: false) == "- a\\u{d}\n- b\\u{d}\n+ a\n+ b\n")
    }

    @Test func emptyAgainstNonEmpty() {
        let added = LineDiff(old: "", new: "a\nb")
        #expect(added.pieces == [.added("a"), .added("b")])
        #expect(added.removed == 0 && added.added == 2)
        let removed = LineDiff(old: "a\nb\n", new: "")
        #expect(removed.pieces == [.removed("a"), .removed("b")])
        let none = LineDiff(old: "", new: "")
        #expect(none.pieces.isEmpty && none.isEmpty)
        #expect(none.text(colour: true) == "")
    }

    // MARK: - The cut

    @Test func aLongTextIsCutAtTheLastLineBreakWithinTheLimit() {
        // 19,200 lines of 16 bytes: 300 KiB. The limit (256 KiB) ends exactly after line 16,384.
        let lines = (1...19_200).map { "line \(String(repeating: "0", count: 10 - String($0).count))\($0)" }
        let old = Self.text(lines)
        #expect(old.utf8.count == 300 << 10)
        // A change after the limit is not seen; one before it is.
        let changedLate = Self.text(Array(lines.dropLast()) + ["changed"])
        let late = LineDiff(old: old, new: changedLate)
        #expect(late.oldCutFrom == 300 << 10 && late.newCutFrom == changedLate.utf8.count)
        #expect(late.isEmpty)
        #expect(late.pieces == [.folded(16_384)])
        let text = late.text(colour: false)
        #expect(text.contains("old text was cut") && text.contains("\(300 << 10) bytes"))
        #expect(text.contains("new text was cut") && text.contains("\(changedLate.utf8.count) bytes"))

        let early = LineDiff(old: old, new: Self.text(["first"] + lines.dropFirst()))
        #expect(early.removed == 1 && early.added == 1)
        #expect(early.pieces == [.removed(lines[0]), .added("first"), .same(lines[1]), .same(lines[2]), .same(lines[3]), .folded(16_380)])
        let script = LineDiff.editScript(old: old, new: old)
        #expect(script.count == 16_384)
        #expect(script.last == .same(lines[16_383]))
    }

    @Test func theCutKeepsWholeLines() {
        // The break exactly at the limit ends the line before it; one before the limit keeps its line only.
        #expect(LineDiff(old: "ab\ncd\n", new: "", limit: 2).pieces == [.removed("ab")])
        #expect(LineDiff(old: "ab\ncd\n", new: "", limit: 4).pieces == [.removed("ab")])
        #expect(LineDiff(old: "ab\ncd\n", new: "", limit: 5).pieces == [.removed("ab"), .removed("cd")])
        #expect(LineDiff(old: "ab\ncd\n", new: "", limit: 5).oldCutFrom == 6)
        #expect(LineDiff(old: "ab\ncd\n", new: "", limit: 6).oldCutFrom == nil)
        // A first line longer than the limit is cut between characters.
        #expect(LineDiff(old: "héllo", new: "", limit: 2).pieces == [.removed("h")])
        #expect(LineDiff(old: "héllo", new: "", limit: 3).pieces == [.removed("hé")])
        #expect(LineDiff(old: "ae\u{301}b", new: "", limit: 3).pieces == [.removed("a")])
    }

    // MARK: - Text

    @Test func colourMarksRemovedRedAndAddedGreenButTheMarksStay() {
        let diff = LineDiff(old: Self.text("a", "b", "\u{1B}[2J"), new: Self.text("a", "c"))
        let plain = diff.text(colour: false)
        #expect(plain == "  a\n- b\n- \\u{1b}[2J\n+ c\n")
        #expect(!plain.contains("\u{1B}"))
        let coloured = diff.text(colour: true)
        #expect(coloured == "  a\n\u{1B}[31m- b\u{1B}[0m\n\u{1B}[31m- \\u{1b}[2J\u{1B}[0m\n\u{1B}[32m+ c\u{1B}[0m\n")
    }

    // MARK: - Against GNU diff

    /// Random pairs of texts over a few lines (so there are many matches):
    /// as many lines removed and added as `diff --minimal` gives, the script
    /// turns old into new, the folded pieces are that script folded, and the
    /// same texts give the same diff again.
    @Test func randomPairsAgreeWithGNUDiff() throws {
        var random = TestSeed.generator()
        let seed = TestSeed.value
        let folder = scratchFolder("line-diff")
        let oldPath = folder.appendingPathComponent("old").path
        let newPath = folder.appendingPathComponent("new").path
        let alphabet = ["a", "b", "c", "d", ""]
        var failures = 0
        for round in 0..<200 where failures < 5 {
            let old = (0..<Int.random(in: 0...30, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            var new = old
            if Bool.random(using: &random) {
                new = (0..<Int.random(in: 0...30, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            } else {
                for _ in 0..<Int.random(in: 0...6, using: &random) {
                    let at = Int.random(in: 0...new.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: new.insert(alphabet.randomElement(using: &random)!, at: at)
                    case 1: if at < new.count { new.remove(at: at) }
                    default: if at < new.count { new[at] = alphabet.randomElement(using: &random)! }
                    }
                }
            }
            let oldText = Self.text(old)
            let newText = Self.text(new)
            try Data(oldText.utf8).write(to: URL(fileURLWithPath: oldPath))
            try Data(newText.utf8).write(to: URL(fileURLWithPath: newPath))
            let gnu = try Self.gnuDiffChanges(oldPath, newPath)

            let diff = LineDiff(old: oldText, new: newText)
            let script = LineDiff.editScript(old: oldText, new: newText)
            var wrong: [String] = []
            if diff.removed + diff.added != gnu { wrong.append("\(diff.removed) removed + \(diff.added) added, diff --minimal \(gnu)") }
            if diff != LineDiff(old: oldText, new: newText) { wrong.append("a second diff differs") }
            if Self.apply(script, to: old) != new { wrong.append("the script does not turn old into new: \(script)") }
            if script.count(where: { if case .removed = $0 { true } else { false } }) != diff.removed
                || script.count(where: { if case .added = $0 { true } else { false } }) != diff.added
            {
                wrong.append("the script counts other changes: \(script)")
            }
            if Self.unfold(diff.pieces, by: script) != script { wrong.append("the pieces are not the script folded: \(diff.pieces)") }
            if !wrong.isEmpty {
                Issue.record("round \(round) (RECKON_TEST_SEED=\(seed)): old \(old), new \(new): \(wrong.joined(separator: "; "))")
                failures += 1
            }
        }
    }

    /// How many lines GNU diff (with `--minimal`) says are removed or added.
    static func gnuDiffChanges(_ oldPath: String, _ newPath: String) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/diff")
        process.arguments = ["--minimal", oldPath, newPath]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 || process.terminationStatus == 1)
        return String(decoding: output, as: UTF8.self).split(separator: "\n").count { $0.hasPrefix("<") || $0.hasPrefix(">") }
    }

    /// `old` with the script applied, or nil when the script does not fit `old`.
    static func apply(_ script: [LineDiff.Piece], to old: [String]) -> [String]? {
        var result: [String] = []
        var index = 0
        for piece in script {
            switch piece {
            case .same(let line), .removed(let line):
                guard index < old.count, old[index] == line else { return nil }
                index += 1
                if case .same = piece { result.append(line) }
            case .added(let line): result.append(line)
            case .folded: return nil
            }
        }
        return index == old.count ? result : nil
    }

    /// The folded pieces with each fold replaced by the lines it hides, taken
    /// from `script`; nil when a fold would hide a changed line or none.
    static func unfold(_ pieces: [LineDiff.Piece], by script: [LineDiff.Piece]) -> [LineDiff.Piece]? {
        var result: [LineDiff.Piece] = []
        for piece in pieces {
            guard case .folded(let count) = piece else {
                result.append(piece)
                continue
            }
            guard count > 0, result.count + count <= script.count else { return nil }
            let hidden = script[result.count..<result.count + count]
            guard hidden.allSatisfy({ if case .same = $0 { true } else { false } }) else { return nil }
            result += hidden
        }
        return result
    }

    // MARK: - Cost

    @Test func tenThousandLinesAllDifferentFinish() {
        let diff = LineDiff(old: Self.text(Self.numbered("old ", 10_000)), new: Self.text(Self.numbered("new ", 10_000)))
        #expect(diff.removed == 10_000 && diff.added == 10_000)
    }

    /// k lines kept between k changed lines cost 2k: minimal up to the bound,
    /// all removed and added (but for the common first line) past it.
    @Test(arguments: [LineDiff.maxEditDistance / 2, LineDiff.maxEditDistance / 2 + 1])
    func theSearchStopsPastTheBound(changes: Int) {
        let kept = Self.numbered("kept ", changes)
        let old = zip(kept, Self.numbered("old ", changes)).flatMap { [$0, $1] }
        let new = zip(kept, Self.numbered("new ", changes)).flatMap { [$0, $1] }
        let diff = LineDiff(old: Self.text(old), new: Self.text(new))
        if 2 * changes <= LineDiff.maxEditDistance {
            #expect(diff.removed == changes && diff.added == changes)
        } else {
            #expect(diff.removed == 2 * changes - 1 && diff.added == 2 * changes - 1)
            #expect(diff.pieces.first == .same("kept 1"))
        }
        #expect(Self.apply(LineDiff.editScript(old: Self.text(old), new: Self.text(new)), to: old) == new)
    }
}
