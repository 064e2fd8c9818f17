import Foundation
import Testing

/// Outside `Sources/ReckonCore/Sides/`, the folder that holds the kinds of
/// side, no code asks which kind a side is: it neither tests a side's kind
/// against one of the kind types (`is`, `as`, `as?`, a `case` of them), nor
/// matches the cases of the old location enum, nor compares with a kind's
/// name as a string, nor calls a named kind's statics or types (its
/// registration in `SideKinds.all` is inside the folder). Message text may
/// name a kind. A fourth kind is then a new folder and one line in the
/// registry, not edits across the tree.
@Suite struct SideKindRuleTests {
    static let kindsFolder = "ReckonCore/Sides/"

    static let kindTypes = "(MemoFolderSide|AppStoreSide|RcloneSide)"
    static let kindNames = "\"(folder|store|rclone)\""
    /// The kinds' own types: their sides, stores, file access and readers.
    static let kindOwnTypes =
        "(MemoFolderSide|MemoFolder|DiskFileAccess|AppStoreSide|CoreDataStore|PhoneBackup|StoreSchema|StoreModel|RcloneSide|Rclone|RcloneStore|RcloneFileAccess)"
    /// What asking a side's kind looks like, each with the words for it.
    static let rules: [(pattern: String, what: String)] = [
        ("\\b(is|as[?!]?)\\s+\(kindTypes)\\b", "tests a value against a kind type"),
        ("(==|!=)\\s*\(kindTypes)\\.(self|name)\\b|\(kindTypes)\\.(self|name)\\s*(==|!=)", "compares with a kind type"),
        ("case\\s+\\.(folder|store|rclone)\\b|\\bSideLocation\\b", "matches a case of a kind"),
        (
            "(==|!=)\\s*\(kindNames)|\(kindNames)\\s*(==|!=)|case\\s+\(kindNames)|[\\[,]\\s*\(kindNames)\\s*:",
            "compares with a kind's name as a string"
        ),
        ("\\b\(kindOwnTypes)\\s*[.(]", "calls a named kind's statics or types")
    ]

    /// Every offending line as `file:line: what: text`.
    static func offences() throws -> [String] {
        try offendingLines(in: [""], skipping: { $0.hasPrefix(kindsFolder) }, rules: rules)
    }

    @Test func noCodeOutsideTheSideKindsAsksWhichKindASideIs() throws {
        let found = try Self.offences()
        for line in found { print(line) }
        #expect(found.isEmpty, "\(found.count) lines outside Sources/\(Self.kindsFolder) ask which kind a side is:\n\(found.joined(separator: "\n"))")
    }

    /// The rule finds what it forbids: each pattern catches the line it was written for.
    @Test func theRulesCatchWhatTheyForbid() throws {
        let forbidden = [
            "if side.kind is AppStoreSide { return }", "guard let source = spec.kind as? RcloneSide else { return }",
            "if type(of: kind) == MemoFolderSide.self {}", "case .rclone(let source):", "guard planned.kind != \"store\" else {",
            "let kinds = [\"folder\": \"memo folder\"]", "let shown = Rclone.masked(side.path)", "if RcloneSide.isRemote(path) {",
            "let known = Set(StoreSchema.Field.allCases.map(\\.rawValue))", "let side = MemoFolderSide(url)"
        ]
        for line in forbidden {
            #expect(try Self.rules.contains { line.contains(try Regex($0.pattern)) }, "\(line)")
        }
        let allowed = [
            "throw Refusal(description: \"is the app's store, which reckon never writes\")", "case .stored:", "run([\"rclone\", \"check\"])",
            "let what = isFolder ? \"folder\" : \"file\"", "let reader = try MemoFolderReader(side)", "label: SideKinds.shown(path)",
            "throw MemoFolderError(path: shown, reason: why)"
        ]
        for line in allowed {
            #expect(try !Self.rules.contains { line.contains(try Regex($0.pattern)) }, "\(line)")
        }
    }
}
