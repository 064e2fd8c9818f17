import Foundation

/// A memo as two exports (or an export and a side) are compared: every
/// field the deep check compares, and its unknown keys when they are known.
package struct MemoState: Sendable {
    package var summary: MemoSummary
    /// The memo's unknown keys; nil when the side does not keep them (a
    /// side's listing holds summaries only), so they are not compared.
    package var otherFields: [String: JSONValue]?

    package init(_ memo: Memo) {
        summary = MemoSummary(memo)
        otherFields = memo.otherFields
    }

    package init(_ summary: MemoSummary) {
        self.summary = summary
        otherFields = nil
    }
}

/// One memo that is not the same in an earlier export and a later one.
package struct ExportChange: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        case added
        case removed
        case edited
        case archived
        case unarchived
    }

    package var id: MemoID
    package var kind: Kind
    /// The fields that changed besides the archived state (unknown keys by
    /// their names), for `edited`, `archived` and `unarchived`.
    package var fields: [String]
    /// The memo's title, the later one when it has one.
    package var title: String?

    /// In words, as `reckon diff` prints it: `added`, `edited (title, body)`,
    /// `archived, edited (body)`.
    package var words: String {
        let edited = fields.isEmpty ? nil : "edited (\(fields.joined(separator: ", ")))"
        switch kind {
        case .added, .removed: return kind.rawValue
        case .edited: return edited ?? kind.rawValue
        case .archived, .unarchived: return [kind.rawValue, edited].compactMap { $0 }.joined(separator: ", ")
        }
    }

    /// The change as `diff --json` and `verify --json` write it.
    var json: JSONValue {
        .object([
            "id": .string(id.value), "change": .string(kind.rawValue), "fields": .array(fields.map(JSONValue.string)),
            "title": title.map(JSONValue.string) ?? .null
        ])
    }
}

/// What changed from one set of memos to another, memo by memo.
package enum ExportDiff {
    /// Every memo added, removed, edited, archived or unarchived from `old`
    /// to `new`, sorted by id. Fields are compared as the deep check
    /// compares them (`toMillisecond` when one side is a store); a change of
    /// the modification time alone is named, but beside other fields it
    /// goes without saying.
    package static func changes(from old: [MemoID: MemoState], to new: [MemoID: MemoState], toMillisecond: Bool = false) -> [ExportChange] {
        var result: [ExportChange] = []
        for id in Set(old.keys).union(new.keys).sorted() {
            switch (old[id], new[id]) {
            case (nil, let added?):
                result.append(ExportChange(id: id, kind: .added, fields: [], title: added.summary.title))
            case (let removed?, nil):
                result.append(ExportChange(id: id, kind: .removed, fields: [], title: removed.summary.title))
            case (let before?, let after?):
                var fields = before.summary.differingFields(from: after.summary, toMillisecond: toMillisecond).filter { $0 != "archivedAt" }
                if let a = before.otherFields, let b = after.otherFields {
                    fields += Set(a.keys).union(b.keys).sorted().filter { a[$0] != b[$0] }
                }
                if fields.count > 1 { fields.removeAll { $0 == "modifiedAt" } }
                let wasArchived = before.summary.archivedAt != nil
                let isArchived = after.summary.archivedAt != nil
                let kind: ExportChange.Kind = wasArchived == isArchived ? .edited : isArchived ? .archived : .unarchived
                if kind == .edited && fields.isEmpty { continue }
                if kind != .edited { fields.removeAll { $0 == "modifiedAt" } }
                result.append(ExportChange(id: id, kind: kind, fields: fields, title: after.summary.title ?? before.summary.title))
            case (nil, nil):
                continue
            }
        }
        return result
    }

    /// How many changes of each kind, in the order the kinds are named.
    package static func totals(_ changes: [ExportChange]) -> [(ExportChange.Kind, Int)] {
        let kinds: [ExportChange.Kind] = [.added, .removed, .edited, .archived, .unarchived]
        return kinds.map { kind in (kind, changes.count { $0.kind == kind }) }
    }
}

extension ExportDiff {
    /// One export as `diff` reads it: its name as given, its manifest and its memos.
    package struct Side {
        package var shown: String
        package var manifest: ExportManifest
        package var memos: [MemoID: MemoState]

        /// Reads every memo of `export`, named `shown`, on `workers`' threads.
        package init(_ export: ExportOnDisk, shown: String, on workers: Workers = Workers()) throws {
            var memos: [MemoID: MemoState] = [:]
            (manifest, _) = try export.readMemos(on: workers) { memos[$0.id] = MemoState($0) }
            self.shown = shown
            self.memos = memos
        }

        /// The export as `diff --json` names it: its path, time and counts.
        var json: JSONValue {
            .object([
                "export": .string(shown), "exportedAt": manifest.exportedAt.map { .string($0.iso8601) } ?? .null,
                "counts": .object(["active": .integer(manifest.counts.active), "archived": .integer(manifest.counts.archived)])
            ])
        }
    }

    /// `reckon diff`: what changed from one export to a later one.
    package struct Comparison {
        package var old: Side
        package var new: Side
        package var changes: [ExportChange]

        package init(old: Side, new: Side) {
            self.old = old
            self.new = new
            changes = ExportDiff.changes(from: old.memos, to: new.memos)
        }

        /// What `diff` prints.
        package var text: String {
            guard !changes.isEmpty else { return "No memo changed: \(counted(new.memos.count, "memo")) in both.\n" }
            return ExportChange.lines(changes)
                + "\n\(ExportChange.totalsText(changes)) (\(counted(old.memos.count, "memo")) before, \(new.memos.count) after).\n"
        }

        /// What `diff --json` prints (schema version 1, on <doc:Formats#verify-json-and-diff-json>).
        package var json: JSONValue {
            .object([
                "schemaVersion": .integer(1), "old": old.json, "new": new.json, "changes": .array(changes.map(\.json)),
                "totals": .object(Dictionary(uniqueKeysWithValues: totals(changes).map { ($0.0.rawValue, JSONValue.integer($0.1)) }))
            ])
        }
    }
}
