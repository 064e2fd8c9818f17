import Foundation

/// One memo on both sides, for `reckon show`: each side's version as read
/// through its store, whether the two are the same as reconcile judges it,
/// the fields that differ, and the body's line diff (old: the local side,
/// new: the remote). Each side's fingerprint is there too, as a choices
/// file carries it.
package struct MemoShow: Sendable {
    /// What one side holds of the memo.
    package struct Side: Sendable {
        package var spec: SideSpec
        /// Its index entry (a store's row); nil when it has none.
        package var entry: IndexEntry?
        /// The memo as read; nil when the side has no file or row of it, or it could not be read.
        package var memo: Memo?
        /// The fingerprint a plan compares with a choices file's (`Fingerprint.token`); nil without an entry.
        package var fingerprint: Fingerprint?
        /// What is wrong with the memo on this side: a damaged file, a missing one, a duplicate.
        package var problems: [Problem]
        /// Whether the side holds the memo in any form: an entry, a file, or a problem naming it.
        package var holds: Bool

        /// Whether the side has the memo but its version could not be read.
        var unread: Bool { holds && memo == nil }
    }

    package var id: MemoID
    /// The pipeline's name (`reconcile` for a one-shot pair), as a choices file names it.
    package var pipeline: String
    package var local: Side
    package var remote: Side
    /// How the two compare, as reconcile compares them; nil when they are the same.
    package var difference: Difference?
    /// The memo file's keys whose values differ, in the order `MemoShow.keys` lists them.
    package var differing: [String]
    /// The body's line diff; nil when a side holds the memo but it could
    /// not be read, or neither side has a version to compare.
    package var diff: LineDiff?

    /// Every key compared, in the order shown: the body's as the diff, the change tag only in the verdict.
    package static let keys = ["title", "tags", "createdAt", "modifiedAt", "archivedAt", "deletedAt", "pinned", "body", "changeTag"]
    /// The keys shown side by side, with their names there.
    static let rows: [(key: String, name: String)] = [
        ("title", "title"), ("tags", "tags"), ("createdAt", "created"), ("modifiedAt", "modified"), ("archivedAt", "archived"),
        ("deletedAt", "deleted"), ("pinned", "pinned")
    ]

    package var same: Bool { difference == nil }
    /// Whether a side could not give its version whole: exit 2.
    package var hasTrouble: Bool { [local, remote].contains { side in side.problems.contains { $0.severity == .error } } }

    package func side(_ role: SideRole) -> Side { role == .local ? local : remote }
}

/// Why a memo cannot be shown.
package struct ShowError: Error, Sendable, CustomStringConvertible {
    package var description: String
    /// A side could not be read (exit 2); else the id names no one memo (exit 64).
    package var isTrouble: Bool
}

extension Pipeline {
    /// Reads the local side and `remote` as the quick check does (index and
    /// listing), finds the one memo `prefix` names among the ids either
    /// holds, and reads it on each side through that side's store.
    package func show(_ prefix: MemoIDPrefix, _ definition: PipelineDefinition, remote: String, context: RunContext) throws(ShowError)
        -> MemoShow
    {
        let definition = definition.reading(remote: remote, check: .quick)
        let run = PipelineRun(definition: definition, settings: settings, context: context)
        let loaded = load.run(definition, in: run)
        guard let other = loaded.remotes.first else { throw ShowError(description: "there is no remote named '\(remote)'", isTrouble: false) }
        for listing in [loaded.local, other] where listing.status == .failed {
            let why = listing.problems.first.map { "\(joinPath(listing.spec.path, $0.path)): \($0.message)" } ?? "it could not be read"
            throw ShowError(
                description: "nothing can be shown: \(listing.spec.label) (\(listing.spec.path)) could not be read: \(why)", isTrouble: true)
        }
        let known = MemoID.union([loaded.local.knownIDs, other.knownIDs])
        let id: MemoID
        switch prefix.resolve(among: known, sides: "\(loaded.local.spec.label) or \(other.spec.label)") {
        case .success(let found): id = found
        case .failure(let refusal): throw ShowError(description: refusal.description, isTrouble: false)
        }
        var shown = MemoShow(
            id, pipeline: definition.name,
            local: (loaded.local, MemoDetail.readMemos([id], of: loaded.local, store: loaded.stores[0])[id]),
            remote: (other, MemoDetail.readMemos([id], of: other, store: loaded.stores[1])[id]))
        // Which side changed it since the two last agreed on it, as a plan would decide.
        if shown.difference?.changed != nil, let stateDir = definition.stateDir,
            case .found(let agreement) = Agreement.read(Agreement.url(in: stateDir, remote: other.spec.name)),
            agreement.isOf(local: SideIdentity(loaded.local.spec), remote: SideIdentity(other.spec))
        {
            (shown.difference!.changed, shown.difference!.agreedAt) = Agreement.direction(
                agreement.memos[id], local: shown.local.fingerprint, remote: shown.remote.fingerprint)
        }
        return shown
    }
}

extension MemoShow {
    /// The memo `id` as two sides' listings hold it, with what reading it on each gave.
    init(
        _ id: MemoID, pipeline: String, local: (listing: SideListing, read: Result<Memo, Problem>?),
        remote: (listing: SideListing, read: Result<Memo, Problem>?)
    ) {
        /// The side's listing cut down to this memo, its read failure among its problems.
        func alone(_ listing: SideListing, _ read: Result<Memo, Problem>?) -> SideListing {
            var one = SideListing(spec: listing.spec, status: listing.status)
            if let entry = listing.entries[id] { one.entries = IDMap(sortedKeys: [id], values: [entry]) }
            if let file = listing.files[id] { one.files = IDMap(sortedKeys: [id], values: [file]) }
            // The memo's own problems, and those of the whole side (a damaged index.json), which make the side untrustworthy.
            one.problems = listing.problems.filter { $0.id == id || ($0.id == nil && $0.severity == .error) }
            switch read {
            case .success(let memo)?: one.memos = IDMap(sortedKeys: [id], values: [MemoSummary(memo)])
            case .failure(var problem)?:
                problem.id = id
                one.problems.append(problem)
            case nil: break
            }
            return one
        }
        let sides = [alone(local.listing, local.read), alone(remote.listing, remote.read)]
        let reads = [local.read, remote.read]
        let shown = zip(sides, reads).map { listing, read in
            let memo = try? read?.get()
            return Side(
                spec: listing.spec, entry: listing.entries[id], memo: memo,
                fingerprint: listing.fingerprint(of: id),
                problems: listing.problems, holds: !listing.entries.isEmpty || !listing.files.isEmpty || !listing.problems.isEmpty)
        }
        self.id = id
        self.pipeline = pipeline
        self.local = shown[0]
        self.remote = shown[1]
        difference = Reconciler.differences(local: sides[0], remote: sides[1], deep: true).first
        differing = []
        diff = nil
        if !shown.contains(where: \.unread), shown.contains(where: { $0.memo != nil }) {
            diff = LineDiff(old: shown[0].memo?.body ?? "", new: shown[1].memo?.body ?? "")
        }
        differing = differingKeys(toMillisecond: local.listing.spec.kind.precision != remote.listing.spec.kind.precision)
    }

    /// The keys whose values differ: for a memo on one side only, every key
    /// that side has; else the fields reconcile found, and those in which
    /// the two memo files differ.
    func differingKeys(toMillisecond: Bool) -> [String] {
        guard let difference else { return [] }
        if difference.sigil == .onlyOnLocal || difference.sigil == .onlyOnRemote {
            let present = difference.sigil == .onlyOnLocal ? local : remote
            return Self.keys.filter { key in key == "body" ? present.memo?.body != nil : value(key, on: present) != nil }
        }
        var names = Set(difference.fields)
        if let l = local.memo, let r = remote.memo {
            names.formUnion(MemoSummary(l).differingFields(from: MemoSummary(r), toMillisecond: toMillisecond))
        }
        if names.contains("modifiedTime") { names.insert("modifiedAt") }
        if names.contains("archived") { names.insert("archivedAt") }
        return Self.keys.filter(names.contains)
    }

    /// A field's value on a side, as shown: from the memo as read, else (times
    /// and states) from the side's entry; nil when the side has none.
    func value(_ key: String, on side: Side) -> String? {
        let memo = side.memo
        let entry = memo == nil ? side.entry : nil
        switch key {
        case "title": return memo?.title
        case "tags": return memo.flatMap { $0.tags.isEmpty ? nil : $0.tags.sorted().joined(separator: ", ") }
        case "createdAt": return memo?.createdAt?.iso8601
        case "modifiedAt": return (memo?.modifiedAt ?? entry?.modifiedTime)?.iso8601
        case "archivedAt": return (memo?.archivedAt ?? entry?.archivedAt)?.iso8601
        case "deletedAt": return (memo?.deletedAt ?? entry?.deletedAt)?.iso8601
        case "pinned": return memo?.pinned.map { $0 ? "yes" : "no" }
        case "changeTag": return memo?.changeTag ?? entry?.changeTag
        default: return nil
        }
    }

    /// What the comparison comes to, in a few words.
    var verdict: String {
        guard let difference else { return "the same on \(local.spec.label) and \(remote.spec.label)" }
        switch difference.sigil {
        case .onlyOnLocal: return "only on \(local.spec.label)"
        case .onlyOnRemote: return "only on \(remote.spec.label)"
        case .cannotCompare: return "cannot be compared"
        case .same, .differs:
            let names = differing.map { key in Self.rows.first { $0.key == key }?.name ?? (key == "changeTag" ? "change tag" : key) }
            return "differs" + (names.isEmpty ? "" : ": " + names.joined(separator: ", ")) + (moved.map { "; " + $0 } ?? "")
        }
    }

    /// Which side changed the memo since the two sides last agreed on it, and when, in words; nil when they never did.
    var moved: String? {
        guard let difference, let changed = difference.changed else { return nil }
        return Strings.en.moved(changed, difference.kind, local.spec.label, remote.spec.label, difference.agreedAt?.day)
    }

    // MARK: - For the terminal

    /// The memo for a terminal or a pipe: the id and the verdict, each
    /// field either side has with the two values side by side under the
    /// sides' labels (a `*` before a field that differs), and the body's
    /// diff. Colour only with `color`; every value escaped. The problems
    /// are diagnostics: `problemLines`.
    package func text(color: Bool) -> String {
        func paint(_ text: String, _ sgr: String) -> String { color ? "\u{1B}[\(sgr)m\(text)\u{1B}[0m" : text }
        var out = ["\(id)  " + paint(escapedForDisplay(verdict), same ? "32" : "1;33"), ""]
        let rows = Self.rows.compactMap { key, name -> (name: String, local: String, remote: String, differs: Bool)? in
            let l = value(key, on: local)
            let r = value(key, on: remote)
            guard l != nil || r != nil else { return nil }
            return (name, escapedForDisplay(l ?? "(none)"), escapedForDisplay(r ?? "(none)"), differing.contains(key))
        }
        let localLabel = escapedForDisplay(local.spec.label)
        let width = ([localLabel] + rows.map(\.local)).map(terminalWidth).max()! + 3
        func padded(_ text: String) -> String { text + String(repeating: " ", count: width - terminalWidth(text)) }
        out.append(String(repeating: " ", count: 12) + padded(localLabel) + escapedForDisplay(remote.spec.label))
        for row in rows {
            let name = row.name.padding(toLength: 10, withPad: " ", startingAt: 0)
            guard row.differs else {
                out.append("  \(name)" + padded(row.local) + row.remote)
                continue
            }
            // Padding outside the colour, so the columns line up either way.
            let gap = String(repeating: " ", count: width - terminalWidth(row.local))
            out.append(paint("*", "1;33") + " \(name)" + paint(row.local, "31") + gap + paint(row.remote, "32"))
        }
        out.append("")
        let labels = "- \(local.spec.label), + \(remote.spec.label)"
        if let diff {
            if diff.differsUnseen {
                out.append("body: differs past what is compared here (after its first 256 KiB, or only in a last line break)")
            } else if diff.isEmpty {
                out.append("body: the same on both sides")
            } else {
                out.append(escapedForDisplay("body (\(labels); \(diff.removed) removed, \(diff.added) added):"))
            }
            let lines = diff.text(colour: color)
            return out.joined(separator: "\n") + "\n" + lines
        }
        out.append(
            [local, remote].contains(where: \.unread)
                ? "body: not compared, as a side's version could not be read" : "body: neither side has a version to compare")
        return out.joined(separator: "\n") + "\n"
    }

    /// Each side's problems with the memo, one line each, naming the file and why.
    package var problemLines: [String] { [local, remote].flatMap { side in side.problems.map { $0.line(under: side.spec.path) } } }

    // MARK: - As JSON

    /// What `reckon show --json` prints (`show.schema.json`).
    package var json: JSONValue {
        func side(_ side: Side) -> JSONValue {
            let memo: JSONValue =
                side.memo.map { memo in
                    .object([
                        "title": memo.title.map(JSONValue.string) ?? .null, "body": memo.body.map(JSONValue.string) ?? .null,
                        "tags": .array(memo.tags.map(JSONValue.string)), "createdAt": memo.createdAt.map { .string($0.iso8601) } ?? .null,
                        "modifiedAt": .string(memo.modifiedAt.iso8601), "archivedAt": memo.archivedAt.map { .string($0.iso8601) } ?? .null,
                        "deletedAt": memo.deletedAt.map { .string($0.iso8601) } ?? .null, "pinned": memo.pinned.map(JSONValue.bool) ?? .null,
                        "changeTag": memo.changeTag.map(JSONValue.string) ?? .null
                    ])
                } ?? .null
            let entry: JSONValue =
                side.entry.map { entry in
                    .object([
                        "modifiedTime": .string(entry.modifiedTime.iso8601), "archivedAt": entry.archivedAt.map { .string($0.iso8601) } ?? .null,
                        "deletedAt": entry.deletedAt.map { .string($0.iso8601) } ?? .null
                    ])
                } ?? .null
            return .object([
                "name": .string(side.spec.name), "label": .string(side.spec.label), "path": .string(side.spec.path), "holds": .bool(side.holds),
                "entry": entry, "memo": memo, "fingerprint": side.fingerprint.map { .string($0.token) } ?? .null,
                "problems": .array(side.problems.map { .string(joinPath(side.spec.path, $0.path) + ": " + $0.message) })
            ])
        }
        let diff: JSONValue =
            self.diff.map { diff in
                .object([
                    "removed": .integer(diff.removed), "added": .integer(diff.added),
                    "oldCutFrom": diff.oldCutFrom.map(JSONValue.integer) ?? .null, "newCutFrom": diff.newCutFrom.map(JSONValue.integer) ?? .null,
                    "pieces": .array(
                        diff.pieces.map { piece in
                            switch piece {
                            case .same(let line): .object(["same": .string(line)])
                            case .removed(let line): .object(["removed": .string(line)])
                            case .added(let line): .object(["added": .string(line)])
                            case .folded(let count): .object(["folded": .integer(count)])
                            }
                        })
                ])
            } ?? .null
        return .object([
            "schemaVersion": .integer(1), "id": .string(id.value), "pipeline": .string(pipeline), "same": .bool(same),
            "sigil": .string((difference?.sigil ?? .same).rawValue), "kind": difference.map { .string($0.kind.rawValue) } ?? .null,
            "differs": .array(differing.map(JSONValue.string)), "local": side(local), "remote": side(remote), "diff": diff,
            "changed": difference?.changed.map { .string($0.rawValue) } ?? .null,
            "agreedAt": difference?.agreedAt.map { .string($0.iso8601) } ?? .null
        ])
    }
}

/// How many columns a terminal gives `text`: two for a wide East Asian
/// character (CJK, kana, Hangul, full-width forms, most emoji), none for a
/// combining mark, one for the rest.
package func terminalWidth(_ text: String) -> Int {
    text.unicodeScalars.reduce(0) { sum, scalar in
        let value = scalar.value
        if scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .enclosingMark { return sum }
        let wide =
            (0x1100...0x115F).contains(value) || (0x2E80...0x303E).contains(value) || (0x3041...0x33FF).contains(value)
            || (0x3400...0x4DBF).contains(value) || (0x4E00...0x9FFF).contains(value) || (0xA000...0xA4CF).contains(value)
            || (0xAC00...0xD7A3).contains(value) || (0xF900...0xFAFF).contains(value) || (0xFE30...0xFE4F).contains(value)
            || (0xFF00...0xFF60).contains(value) || (0xFFE0...0xFFE6).contains(value) || (0x1F300...0x1F64F).contains(value)
            || (0x1F900...0x1F9FF).contains(value) || (0x20000...0x3FFFD).contains(value)
        return sum + (wide ? 2 : 1)
    }
}
