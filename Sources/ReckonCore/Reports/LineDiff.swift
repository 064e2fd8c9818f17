/// A line diff of two texts by Myers' algorithm (as `diff -u` and git's default):
/// the fewest lines removed and added that turn `old` (the local side) into `new`
/// (the remote side), with long runs of unchanged lines folded away.
///
/// - Lines are split on "\n". A last "\n" ends the last line rather than
///   starting an empty one, so "a" and "a\n" are the same text; a "\r" before
///   the "\n" stays part of its line. Lines are compared byte for byte, as
///   `diff` compares them.
/// - The search is Myers' linear-space variant (the middle snake, divide and
///   conquer): memory O(N+M), time O((N+M)·D) for N and M lines and D lines
///   removed and added. The same texts always give the same pieces.
/// - Cost guard: when D is more than `maxEditDistance` (4,096) the search gives
///   up at that cost, and everything between the lines both texts start and end
///   with is shown as all of `old` removed and all of `new` added: a correct
///   script, but not a minimal one. So however unlike two texts are, the work
///   is at most about (N+M)·4,096 steps.
/// - Within a changed block, removed lines come before added ones.
/// - A text longer than the limit is cut at a line break before it is compared,
///   and the other text's lines past the end of a cut one are left out: they
///   may be in its part not compared, so they are neither removed nor added.
package struct LineDiff: Sendable, Equatable {
    /// One line of the diff as shown, or a run of unchanged lines not shown.
    package enum Piece: Sendable, Equatable {
        /// An unchanged line shown as context.
        case same(String)
        /// A line only in `old`.
        case removed(String)
        /// A line only in `new`.
        case added(String)
        /// This many unchanged lines, not shown.
        case folded(Int)
    }

    package var pieces: [Piece]
    /// Lines removed and added (of what was compared, after any cut).
    package var removed: Int
    package var added: Int
    /// The size in bytes of `old` / `new` when it was longer than the limit and was cut; nil when whole.
    package var oldCutFrom: Int?
    package var newCutFrom: Int?
    /// Both texts are the same (after any cut).
    package var isEmpty: Bool { removed == 0 && added == 0 }
    /// The texts differ where these pieces cannot show it: past the cut, or
    /// only in a last line break.
    package var differsUnseen: Bool

    package static let contextLines = 3
    /// Unchanged runs longer than this are folded.
    package static let foldOver = 6
    /// Bytes per text compared.
    package static let sizeLimit = 256 << 10
    /// The most lines removed and added that the search looks for before it
    /// falls back to "all removed, all added" (see the type's comment).
    package static let maxEditDistance = 4_096

    package init(old: String, new: String, limit: Int = LineDiff.sizeLimit) {
        let compared = Comparison(old: old, new: new, limit: limit)
        pieces = Self.fold(compared)
        removed = compared.steps.count { if case .removed = $0 { true } else { false } }
        added = compared.steps.count { if case .added = $0 { true } else { false } }
        oldCutFrom = compared.old.cutFrom
        newCutFrom = compared.new.cutFrom
        differsUnseen = removed == 0 && added == 0 && old.utf8.elementsEqual(new.utf8) == false
    }

    /// The whole edit script, nothing folded: every line of `old` as `.same`
    /// or `.removed` and every line of `new` as `.same` or `.added`, in order.
    package static func editScript(old: String, new: String, limit: Int = LineDiff.sizeLimit) -> [Piece] {
        let compared = Comparison(old: old, new: new, limit: limit)
        return compared.steps.map { compared.piece($0) }
    }

    /// The diff for a terminal or a pipe: "- " removed, "+ " added, "  " same, and
    /// "  ⋯ N unchanged lines" for a fold; with `colour`, removed lines red and added green
    /// (ANSI SGR 31/32, reset 0) — the "-"/"+" marks are there with or without colour, so
    /// the change is never told by colour alone. Cut texts end with a line saying so and
    /// the original size. Ends with a newline unless empty. Lines are shown with control
    /// and format characters escaped, so nothing in a memo reaches the terminal raw.
    package func text(colour: Bool) -> String {
        var out = ""
        func line(_ mark: String, _ text: String, sgr: String? = nil) {
            let shown = mark + escapedForDisplay(text)
            if colour, let sgr { out += "\u{1B}[\(sgr)m" + shown + "\u{1B}[0m\n" } else { out += shown + "\n" }
        }
        for piece in pieces {
            switch piece {
            case .same(let text): line("  ", text)
            case .removed(let text): line("- ", text, sgr: "31")
            case .added(let text): line("+ ", text, sgr: "32")
            case .folded(let count): out += "  ⋯ \(count) unchanged \(count == 1 ? "line" : "lines")\n"
            }
        }
        for (side, size) in [("old", oldCutFrom), ("new", newCutFrom)] {
            if let size { out += "  ⋯ the \(side) text was cut here: it is \(size) bytes, more than is compared\n" }
        }
        return out
    }

    /// Folds each run of unchanged lines longer than `foldOver`, keeping
    /// `contextLines` next to each change (and none away from the changes at
    /// the start and the end).
    private static func fold(_ compared: Comparison) -> [Piece] {
        let steps = compared.steps
        var pieces: [Piece] = []
        var start = 0
        while start < steps.count {
            guard case .same = steps[start] else {
                pieces.append(compared.piece(steps[start]))
                start += 1
                continue
            }
            var end = start
            while end < steps.count, case .same = steps[end] { end += 1 }
            // Lines kept before and after a fold: context next to a change, none elsewhere.
            let atStart = start == 0
            let atEnd = end == steps.count
            let head = atStart ? 0 : contextLines
            let tail = atEnd ? 0 : contextLines
            let length = end - start
            // The longest run shown whole; a fold always hides at least one line.
            let longestWhole =
                switch (atStart, atEnd) {
                case (true, true): foldOver
                case (false, false): max(foldOver, head + tail)
                default: head + tail
                }
            if length <= longestWhole {
                pieces += steps[start..<end].map { compared.piece($0) }
            } else {
                pieces += steps[start..<start + head].map { compared.piece($0) }
                pieces.append(.folded(length - head - tail))
                pieces += steps[end - tail..<end].map { compared.piece($0) }
            }
            start = end
        }
        return pieces
    }
}

/// One step of the edit script, by line number.
private enum Step {
    case same(old: Int)
    case removed(Int)
    case added(Int)
}

/// Both texts as compared, and the edit script between them.
private struct Comparison {
    let old: Lines
    let new: Lines
    let steps: [Step]

    init(old oldText: String, new newText: String, limit: Int) {
        old = Lines(oldText, limit: limit)
        new = Lines(newText, limit: limit)
        // Each distinct line becomes a number, so the search compares integers.
        var numbers: [ArraySlice<UInt8>: Int32] = [:]
        func intern(_ lines: Lines) -> [Int32] {
            var ids: [Int32] = []
            ids.reserveCapacity(lines.ranges.count)
            for range in lines.ranges {
                let key = lines.bytes[range]
                if let id = numbers[key] {
                    ids.append(id)
                } else {
                    let id = Int32(numbers.count)
                    numbers[key] = id
                    ids.append(id)
                }
            }
            return ids
        }
        let a = intern(old)
        let b = intern(new)
        let search = MyersSearch(a, b, maxCost: LineDiff.maxEditDistance)
        // Unmarked lines pair up in order; between two pairs, removed before added.
        var steps: [Step] = []
        steps.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            if i < a.count, j < b.count, !search.removed[i], !search.added[j] {
                steps.append(.same(old: i))
                i += 1
                j += 1
                continue
            }
            let before = (i, j)
            while i < a.count, search.removed[i] {
                steps.append(.removed(i))
                i += 1
            }
            while j < b.count, search.added[j] {
                steps.append(.added(j))
                j += 1
            }
            if before == (i, j) {
                // Cannot happen (as many lines are unmarked on each side); kept
                // correct anyway by showing what is left as removed and added.
                assertionFailure("unpaired unchanged line")
                steps += (i..<a.count).map { .removed($0) } + (j..<b.count).map { .added($0) }
                break
            }
        }
        // Past the end of a cut text, the other text's lines may be in the part
        // not compared: they are left out rather than shown as removed or added.
        var end = steps.count
        if new.cutFrom != nil { end = min(end, steps.lastIndex { if case .removed = $0 { false } else { true } }.map { $0 + 1 } ?? 0) }
        if old.cutFrom != nil { end = min(end, steps.lastIndex { if case .added = $0 { false } else { true } }.map { $0 + 1 } ?? 0) }
        self.steps = Array(steps[..<end])
    }

    func piece(_ step: Step) -> LineDiff.Piece {
        switch step {
        case .same(let line): .same(old.line(line))
        case .removed(let line): .removed(old.line(line))
        case .added(let line): .added(new.line(line))
        }
    }
}

/// One text as compared: its bytes after any cut, and where each line lies in them.
private struct Lines {
    let bytes: [UInt8]
    let ranges: [Range<Int>]
    /// The text's size when it was cut.
    let cutFrom: Int?

    init(_ text: String, limit: Int) {
        let limit = max(0, limit)
        let size = text.utf8.count
        if size > limit {
            bytes = Array(text.utf8.prefix(Self.cutLength(text, limit: limit)))
            cutFrom = size
        } else {
            bytes = Array(text.utf8)
            cutFrom = nil
        }
        var ranges: [Range<Int>] = []
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            ranges.append(start..<index)
            start = index + 1
        }
        if start < bytes.count { ranges.append(start..<bytes.count) }
        self.ranges = ranges
    }

    /// How many bytes of `text` (longer than `limit`) to keep: up to the last
    /// line break at or before `limit`, else as many whole characters as fit.
    static func cutLength(_ text: String, limit: Int) -> Int {
        let head = Array(text.utf8.prefix(limit + 1))
        if let lastBreak = head.lastIndex(of: UInt8(ascii: "\n")) {
            // A break just past the limit still ends a whole line within it.
            return lastBreak == limit ? limit : lastBreak + 1
        }
        var kept = 0
        for character in text {
            let length = character.utf8.count
            if kept + length > limit { break }
            kept += length
        }
        return kept
    }

    func line(_ index: Int) -> String { String(decoding: bytes[ranges[index]], as: UTF8.self) }
}

/// Myers' linear-space search, after GNU diff's `diffseq.h` (with its
/// heuristics left out, so the script is minimal): marks the lines of `a`
/// removed and of `b` added.
private struct MyersSearch {
    private let a: [Int32]
    private let b: [Int32]
    private(set) var removed: [Bool]
    private(set) var added: [Bool]
    /// The furthest x reached on each diagonal x − y, from the top-left and from the bottom-right.
    private var forward: [Int]
    private var backward: [Int]
    /// The index of diagonal 0 in `forward` and `backward`.
    private let zero: Int

    init(_ a: [Int32], _ b: [Int32], maxCost: Int) {
        self.a = a
        self.b = b
        removed = Array(repeating: false, count: a.count)
        added = Array(repeating: false, count: b.count)
        // Diagonals run from −M to N, with one more each side for the edge values.
        forward = Array(repeating: 0, count: a.count + b.count + 3)
        backward = forward
        zero = b.count + 1
        compare(0, a.count, 0, b.count, maxCost: maxCost)
    }

    /// Marks the changes between a[xoff..<xlim] and b[yoff..<ylim]. The cost
    /// limit can only stop the first call: each part of a split costs less than
    /// the whole.
    private mutating func compare(_ xoff: Int, _ xlim: Int, _ yoff: Int, _ ylim: Int, maxCost: Int) {
        var (xoff, xlim, yoff, ylim) = (xoff, xlim, yoff, ylim)
        while xoff < xlim, yoff < ylim, a[xoff] == b[yoff] {
            xoff += 1
            yoff += 1
        }
        while xoff < xlim, yoff < ylim, a[xlim - 1] == b[ylim - 1] {
            xlim -= 1
            ylim -= 1
        }
        if xoff < xlim, yoff < ylim, let split = middle(xoff, xlim, yoff, ylim, maxCost: maxCost) {
            compare(xoff, split.x, yoff, split.y, maxCost: maxCost)
            compare(split.x, xlim, split.y, ylim, maxCost: maxCost)
        } else {
            for x in xoff..<xlim { removed[x] = true }
            for y in yoff..<ylim { added[y] = true }
        }
    }

    /// A point on a shortest edit path from (xoff, yoff) to (xlim, ylim) about
    /// half way along it, found by searching from both ends until the searches
    /// meet; nil when the path costs more than `maxCost`. The first lines differ
    /// and so do the last.
    private mutating func middle(_ xoff: Int, _ xlim: Int, _ yoff: Int, _ ylim: Int, maxCost: Int) -> (x: Int, y: Int)? {
        let dmin = xoff - ylim
        let dmax = xlim - yoff
        let fmid = xoff - yoff
        let bmid = xlim - ylim
        var fmin = fmid
        var fmax = fmid
        var bmin = bmid
        var bmax = bmid
        let odd = (fmid - bmid) & 1 != 0
        forward[zero + fmid] = xoff
        backward[zero + bmid] = xlim
        var cost = 1
        while true {
            // Every path costs at least 2·cost − 1 now: the searches have not met below it.
            if 2 * cost - 1 > maxCost { return nil }
            if fmin > dmin {
                fmin -= 1
                forward[zero + fmin - 1] = -1
            } else {
                fmin += 1
            }
            if fmax < dmax {
                fmax += 1
                forward[zero + fmax + 1] = -1
            } else {
                fmax -= 1
            }
            for d in stride(from: fmax, through: fmin, by: -2) {
                let low = forward[zero + d - 1]
                let high = forward[zero + d + 1]
                var x = low < high ? high : low + 1
                var y = x - d
                while x < xlim, y < ylim, a[x] == b[y] {
                    x += 1
                    y += 1
                }
                forward[zero + d] = x
                if odd, bmin <= d, d <= bmax, backward[zero + d] <= x { return (x, y) }
            }
            if bmin > dmin {
                bmin -= 1
                backward[zero + bmin - 1] = Int.max
            } else {
                bmin += 1
            }
            if bmax < dmax {
                bmax += 1
                backward[zero + bmax + 1] = Int.max
            } else {
                bmax -= 1
            }
            for d in stride(from: bmax, through: bmin, by: -2) {
                let low = backward[zero + d - 1]
                let high = backward[zero + d + 1]
                var x = low < high ? low : high - 1
                var y = x - d
                while x > xoff, y > yoff, a[x - 1] == b[y - 1] {
                    x -= 1
                    y -= 1
                }
                backward[zero + d] = x
                if !odd, fmin <= d, d <= fmax, x <= forward[zero + d] { return (x, y) }
            }
            cost += 1
        }
    }
}
