/// A memo's id as a person types it (`reckon show ID`, `--take ID=side`):
/// the whole id, or its first hex digits, at least 8 of them. Either case;
/// written as the id is written, with its dashes where they fall
/// (`3f2504e0-4f89`), or with no dash at all (`3f2504e04f89`). It names
/// the one memo, among the ids either side holds, whose id starts so.
package struct MemoIDPrefix: Sendable, Hashable, CustomStringConvertible {
    /// The fewest hex digits that name a memo: 8, as an id's first group.
    package static let fewestDigits = 8

    /// Why a text is not a prefix of an id, in words that start with the text.
    package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// The text as typed.
    package let text: String
    /// The hex digits' values, in order, dashes left out.
    private let digits: [UInt8]

    package var description: String { text }

    /// Whether the whole id was given.
    package var isWhole: Bool { digits.count == 32 }

    package init(_ text: String) throws(Refusal) {
        self.text = text
        let dashed = text.contains("-")
        var digits: [UInt8] = []
        for (position, character) in text.utf8.enumerated() {
            let dashPlace = [8, 13, 18, 23].contains(position)
            if dashed && dashPlace {
                guard character == UInt8(ascii: "-") else { throw Self.notAnID(text) }
                continue
            }
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits.append(character - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digits.append(character - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digits.append(character - UInt8(ascii: "A") + 10)
            default: throw Self.notAnID(text)
            }
        }
        guard digits.count <= 32 else { throw Self.notAnID(text) }
        guard digits.count >= Self.fewestDigits else {
            throw Refusal(
                description: "'\(escapedForDisplay(text))' is too short to name a memo: give at least \(Self.fewestDigits) hex digits of its id")
        }
        self.digits = digits
    }

    private static func notAnID(_ text: String) -> Refusal {
        Refusal(
            description:
                "'\(escapedForDisplay(text))' is not a memo id: give its id, or at least its first \(fewestDigits) hex digits (with the id's dashes, or none)"
        )
    }

    /// Whether `id` starts with these digits.
    package func matches(_ id: MemoID) -> Bool {
        for (index, digit) in digits.enumerated() {
            let word = index < 16 ? id.high : id.low
            guard UInt8((word >> UInt64(60 - (index % 16) * 4)) & 15) == digit else { return false }
        }
        return true
    }

    /// What the prefix names among some ids.
    package enum Match: Sendable, Equatable {
        case one(MemoID)
        case none
        /// Every id that starts so, in order.
        case several([MemoID])
    }

    /// The ids of `ids` that start with this prefix.
    package func match(among ids: [MemoID]) -> Match {
        let found = ids.filter(matches)
        switch found.count {
        case 0: return .none
        case 1: return .one(found[0])
        default: return .several(found)
        }
    }

    /// The one id among `ids` that starts with this prefix; else why not,
    /// naming `sides` ("this device or Google Drive") and, when several
    /// match, the first 10 of them.
    package func resolve(among ids: [MemoID], sides: String) -> Result<MemoID, Refusal> {
        switch match(among: ids) {
        case .one(let id): return .success(id)
        case .none:
            return .failure(
                Refusal(
                    description: isWhole
                        ? "'\(escapedForDisplay(text))' is not the id of any memo on \(sides)"
                        : "'\(escapedForDisplay(text))' is not the start of the id of any memo on \(sides)"))
        case .several(let found):
            var lines = ["'\(escapedForDisplay(text))' starts the ids of \(counted(found.count, "memo")); give more of its digits:"]
            lines += found.prefix(10).map { "  \($0.value)" }
            if found.count > 10 { lines.append("  and \(found.count - 10) more") }
            return .failure(Refusal(description: lines.joined(separator: "\n")))
        }
    }
}
