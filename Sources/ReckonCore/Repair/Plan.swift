import Foundation

/// What `reckon plan` decided for one pair of sides, written as `plan.json`
/// and carried out by `reckon apply`. It holds every byte apply will write
/// and every change tag apply checks first, so apply needs nothing else
/// from the sides it was made from, and writes nothing that is not in it.
package struct Plan: Sendable, Equatable, Codable {
    package static let currentSchemaVersion = 1

    package var schemaVersion = Plan.currentSchemaVersion
    package var reckonVersion = Reckon.version
    /// When the plan was made; apply refuses a plan older than `--max-age`.
    package var createdAt: Timestamp
    /// The pipeline's name, and its definition file's real path when the
    /// plan was made from one (apply reads the sides from it again).
    package var pipeline: String
    package var definition: String?
    /// The pipeline's name as the pages and the text say it: nil for a plan
    /// made without a definition, whose name is only the command's.
    package var named: String? { definition == nil ? nil : pipeline }

    /// A side apply could not reach again, so that it refuses the plan: in a
    /// plan made without a definition, a side apply would write given as a
    /// connection string that holds a secret, which a plan never keeps.
    /// Only whether the side comes back counts, not where its cache would
    /// go, so the default settings serve.
    package var sideApplyCannotReach: PlanSide? {
        guard definition == nil else { return nil }
        return sides.first { side in
            side.writable && side.kind.kind.map { $0.holdsFiles && $0.reopen(side, process: ProcessSettings()) == nil } == true
        }
    }
    /// The real path of the state folder: backups, journals and baselines go there.
    package var stateDir: String
    /// The local side, then the remote.
    package var sides: [PlanSide]
    package var actions: [PlanAction]
    /// The language the plan was made in (`ja`), which its pages, and apply's
    /// and undo's, are in unless `--lang` says otherwise; nil for English, so
    /// that an English plan.json is what it always was.
    package var language: String?

    package init(createdAt: Timestamp, pipeline: String, definition: String?, stateDir: String, sides: [PlanSide], actions: [PlanAction]) {
        self.createdAt = createdAt
        self.pipeline = pipeline
        self.definition = definition
        self.stateDir = stateDir
        self.sides = sides
        self.actions = actions
    }

    /// The side playing `role`.
    package func side(_ role: SideRole) -> PlanSide { sides.side(role) }

    /// How many actions of each kind, for the summary line.
    package var totals: [PlanAction.Kind: Int] {
        actions.reduce(into: [:]) { $0[$1.action, default: 0] += 1 }
    }

    /// Whether there is anything to do or to choose.
    package var isEmpty: Bool { actions.isEmpty }

    /// The language's code: `en` when none is recorded.
    package var languageCode: String { language ?? "en" }
}

/// One side as the plan saw it.
package struct PlanSide: Sendable, Equatable, Codable {
    package var role: SideRole
    package var name: String
    package var label: String
    /// The path as given, a remote's secrets masked.
    package var path: String
    /// The side's kind, by the name a definition gives it.
    package var kind: SideKindName
    /// What identifies the side whatever spelled its path: a folder's real
    /// path, a store's, a remote's hash (never its secrets).
    package var place: String
    /// For a folder, its real path; for a remote, its `name:path` when it
    /// holds no secret (else apply reads it from the definition again).
    package var location: String?
    /// What the side's kind keeps to reach it again (a remote's config file
    /// and flags), by the names its definition keys give (`DefinitionKey.planKey`).
    package var kept: [String: PlanSide.Kept] = [:]
    /// Whether apply may write here; when not, why (a store, read-only).
    package var writable: Bool
    package var notWritable: String?
    /// `index.json`'s change tag when the plan was made (folders and remotes).
    package var index: FileTag?
    /// Memos counted on the side (active and archived), for `--max-delete`.
    package var liveMemos: Int
}

extension PlanSide {
    /// One value a kind keeps in a plan: a text, or a list of them.
    package enum Kept: Sendable, Equatable, Encodable {
        case text(String)
        case list([String])

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .list(let list): try container.encode(list)
            }
        }
    }

    /// A key of a plan's side: one of its own, or one a kind keeps.
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The keys the kinds keep values under in a plan.
    private static var keptKeys: [DefinitionKey] { SideKinds.definitionKeys.filter { $0.planKey != nil } }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        role = try container.decode(SideRole.self, forKey: Key("role"))
        name = try container.decode(String.self, forKey: Key("name"))
        label = try container.decode(String.self, forKey: Key("label"))
        path = try container.decode(String.self, forKey: Key("path"))
        kind = try container.decode(SideKindName.self, forKey: Key("kind"))
        place = try container.decode(String.self, forKey: Key("place"))
        location = try container.decodeIfPresent(String.self, forKey: Key("location"))
        // Each value is read as its key declares it: a list where a list is
        // kept, a text elsewhere; any other shape is refused.
        for key in Self.keptKeys {
            guard let name = key.planKey else { continue }
            if key.holds == .strings {
                if let list = try container.decodeIfPresent([String].self, forKey: Key(name)) { kept[name] = .list(list) }
            } else if let text = try container.decodeIfPresent(String.self, forKey: Key(name)) {
                kept[name] = .text(text)
            }
        }
        writable = try container.decode(Bool.self, forKey: Key("writable"))
        notWritable = try container.decodeIfPresent(String.self, forKey: Key("notWritable"))
        index = try container.decodeIfPresent(FileTag.self, forKey: Key("index"))
        liveMemos = try container.decode(Int.self, forKey: Key("liveMemos"))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(role, forKey: Key("role"))
        try container.encode(name, forKey: Key("name"))
        try container.encode(label, forKey: Key("label"))
        try container.encode(path, forKey: Key("path"))
        try container.encode(kind, forKey: Key("kind"))
        try container.encode(place, forKey: Key("place"))
        try container.encodeIfPresent(location, forKey: Key("location"))
        for (name, value) in kept.sorted(by: { $0.key < $1.key }) { try container.encode(value, forKey: Key(name)) }
        try container.encode(writable, forKey: Key("writable"))
        try container.encodeIfPresent(notWritable, forKey: Key("notWritable"))
        try container.encodeIfPresent(index, forKey: Key("index"))
        try container.encode(liveMemos, forKey: Key("liveMemos"))
    }
}

/// One memo's action.
package struct PlanAction: Sendable, Equatable, Codable {
    package enum Kind: String, Sendable, Codable, CaseIterable {
        /// Copy one side's version to the other (added or edited on one side only).
        case copy
        /// Set `deletedAt` in the memo file and its index entry (deleted on one side only).
        case softDelete = "soft-delete"
        /// Add the index entry of a valid memo file that has none.
        case fixIndex = "fix-index"
        /// Changed on both sides, or no baseline to tell: a person chooses.
        case conflict
        /// The action would need a side that is never written.
        case notPossible = "not-possible"
        /// Cannot be compared (`!`): nothing is done.
        case none
    }

    package var id: MemoID
    package var sigil: Difference.Sigil
    package var kind: Difference.Kind
    package var changed: Difference.Changed?
    package var action: Kind
    /// The side whose version wins, and the side written.
    package var from: SideRole?
    package var to: SideRole?
    /// Why, in words (English).
    package var reason: String
    /// The choice that settled a conflict (`--take ID=local`, `--prefer newer`), said in so many words (English).
    package var choice: String?
    /// `reason` and `choice` as structures, which each language says in its
    /// own words; kept in plan.json only by a plan made in another language than English.
    package var why: PlanReason?
    package var chosen: PlanChoice?
    /// Whether it deletes or overwrites, and so needs `--yes`.
    package var destructive: Bool
    /// For a conflict settled with `both`: the new id of the conflict copy.
    package var conflictCopy: MemoID?
    /// Every file written, with what it held when planned.
    package var writes: [PlannedWrite]
    /// Every index entry changed or added.
    package var indexChanges: [PlannedIndexChange]
    /// Each side's version, for a person to choose between.
    package var versions: [SideRole: MemoVersion]

    enum CodingKeys: String, CodingKey {
        case id, sigil, kind, changed, action, from, to, reason, choice, why, chosen, destructive, conflictCopy, writes, indexChanges, versions
    }

    package init(id: MemoID, sigil: Difference.Sigil, kind: Difference.Kind, changed: Difference.Changed?, action: Kind, reason: String) {
        self.id = id
        self.sigil = sigil
        self.kind = kind
        self.changed = changed
        self.action = action
        self.reason = reason
        destructive = false
        writes = []
        indexChanges = []
        versions = [:]
    }

    package init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(MemoID.self, forKey: .id)
        sigil = try container.decode(Difference.Sigil.self, forKey: .sigil)
        kind = try container.decode(Difference.Kind.self, forKey: .kind)
        changed = try container.decodeIfPresent(Difference.Changed.self, forKey: .changed)
        action = try container.decode(Kind.self, forKey: .action)
        from = try container.decodeIfPresent(SideRole.self, forKey: .from)
        to = try container.decodeIfPresent(SideRole.self, forKey: .to)
        reason = try container.decode(String.self, forKey: .reason)
        choice = try container.decodeIfPresent(String.self, forKey: .choice)
        // Words only: a structure this reckon cannot read leaves the English sentences.
        why = try? container.decodeIfPresent(PlanReason.self, forKey: .why)
        chosen = try? container.decodeIfPresent(PlanChoice.self, forKey: .chosen)
        destructive = try container.decode(Bool.self, forKey: .destructive)
        conflictCopy = try container.decodeIfPresent(MemoID.self, forKey: .conflictCopy)
        writes = try container.decode([PlannedWrite].self, forKey: .writes)
        indexChanges = try container.decode([PlannedIndexChange].self, forKey: .indexChanges)
        let byName = try container.decode([String: MemoVersion].self, forKey: .versions)
        versions = Dictionary(uniqueKeysWithValues: byName.compactMap { key, value in SideRole(rawValue: key).map { ($0, value) } })
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(sigil, forKey: .sigil)
        try container.encode(kind, forKey: .kind)
        try container.encode(changed, forKey: .changed)
        try container.encode(action, forKey: .action)
        try container.encode(from, forKey: .from)
        try container.encode(to, forKey: .to)
        try container.encode(reason, forKey: .reason)
        try container.encode(choice, forKey: .choice)
        try container.encodeIfPresent(why, forKey: .why)
        try container.encodeIfPresent(chosen, forKey: .chosen)
        try container.encode(destructive, forKey: .destructive)
        try container.encode(conflictCopy, forKey: .conflictCopy)
        try container.encode(writes, forKey: .writes)
        try container.encode(indexChanges, forKey: .indexChanges)
        try container.encode(Dictionary(uniqueKeysWithValues: versions.map { ($0.key.rawValue, $0.value) }), forKey: .versions)
    }
}

extension PlanAction {
    /// Whether carrying it out deletes or overwrites, told from what it
    /// writes (never from the `destructive` a hand may have changed).
    package var needsConfirmation: Bool {
        switch action {
        case .softDelete: true
        case .copy, .fixIndex: writes.contains { $0.before != nil }
        case .conflict, .notPossible, .none: false
        }
    }
}

/// One memo file apply writes: its path in the side, what it held when
/// planned (nil: absent), and the whole new content.
package struct PlannedWrite: Sendable, Equatable, Codable {
    package var side: SideRole
    /// `memos/<id>.json`, the id spelled as the side spells its ids.
    package var path: String
    package var before: FileTag?
    /// The new file's size and SHA-256.
    package var size: Int64
    package var sha256: String
    /// The new file's text (memo files are UTF-8 JSON).
    package var content: String
    /// For a copy from a memo folder: the file copied, on the action's
    /// `from` side, as planned; read again before the write.
    package var source: ReadFile?

    package init(side: SideRole, path: String, before: FileTag?, content: Data, source: ReadFile? = nil) {
        self.side = side
        self.path = path
        self.before = before
        self.source = source
        size = Int64(content.count)
        sha256 = SHA256.hex(of: content)
        self.content = String(decoding: content, as: UTF8.self)
    }

    package var data: Data { Data(content.utf8) }

    /// The memo's id as `path` spells it (`memos/<id>.json`, checked by apply's guards).
    package var spelledID: String { String(path.dropFirst(6).dropLast(5)) }
}

/// One entry of a side's `index.json` that apply changes or adds. Apply
/// reads `index.json` again and merges: the entry must still be as the
/// plan saw it (`before`), and every other entry and key stays.
package struct PlannedIndexChange: Sendable, Equatable, Codable {
    package var side: SideRole
    /// The id as the side's index spells it.
    package var id: String
    /// The entry when planned; nil when there was none (an entry is added at the end).
    package var before: EntryState?
    /// The entry's known fields as apply leaves them.
    package var after: EntryState
    /// For an entry added for a memo file that is already there (fix-index):
    /// that file as planned, read again before the entry is added.
    package var file: ReadFile?

    package init(side: SideRole, id: String, before: EntryState?, after: EntryState, file: ReadFile? = nil) {
        self.side = side
        self.id = id
        self.before = before
        self.after = after
        self.file = file
    }
}

/// A file the plan read and does not write, with its change tag.
package struct ReadFile: Sendable, Equatable, Codable {
    package var path: String
    package var tag: FileTag

    package init(path: String, tag: FileTag) {
        self.path = path
        self.tag = tag
    }
}

/// The fields of an index entry that reckon reads.
package struct EntryState: Sendable, Equatable, Codable {
    package var modifiedTime: Timestamp
    package var archivedAt: Timestamp?
    package var deletedAt: Timestamp?
    package var changeTag: String?

    package init(modifiedTime: Timestamp, archivedAt: Timestamp?, deletedAt: Timestamp?, changeTag: String?) {
        self.modifiedTime = modifiedTime
        self.archivedAt = archivedAt
        self.deletedAt = deletedAt
        self.changeTag = changeTag
    }

    package init(_ entry: IndexEntry) {
        self.init(modifiedTime: entry.modifiedTime, archivedAt: entry.archivedAt, deletedAt: entry.deletedAt, changeTag: entry.changeTag)
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(modifiedTime, forKey: .modifiedTime)
        try container.encode(archivedAt, forKey: .archivedAt)
        try container.encode(deletedAt, forKey: .deletedAt)
        try container.encode(changeTag, forKey: .changeTag)
    }

    /// Whether an entry read now is the one planned: times as instants.
    func matches(_ entry: IndexEntry?) -> Bool {
        guard let entry else { return false }
        return entry.modifiedTime == modifiedTime && entry.archivedAt == archivedAt && entry.deletedAt == deletedAt
            && entry.changeTag == changeTag
    }
}

/// One side's version of a memo, shown beside the other's for a choice.
package struct MemoVersion: Sendable, Equatable, Codable {
    package var title: String?
    package var modifiedTime: Timestamp?
    package var archivedAt: Timestamp?
    package var deletedAt: Timestamp?
    /// The first lines of the body (at most 3 lines of 120 characters).
    package var firstLines: [String]

    package init(title: String?, modifiedTime: Timestamp?, archivedAt: Timestamp?, deletedAt: Timestamp?, body: String?) {
        self.title = title
        self.modifiedTime = modifiedTime
        self.archivedAt = archivedAt
        self.deletedAt = deletedAt
        firstLines = (body ?? "").split(separator: "\n", omittingEmptySubsequences: true).prefix(3).map { String($0.prefix(120)) }
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(title, forKey: .title)
        try container.encode(modifiedTime, forKey: .modifiedTime)
        try container.encode(archivedAt, forKey: .archivedAt)
        try container.encode(deletedAt, forKey: .deletedAt)
        try container.encode(firstLines, forKey: .firstLines)
    }
}

extension Plan {
    /// `plan.json`'s bytes: sorted keys, so the same plan gives the same bytes.
    package var data: Data { JSONWriter.data(try! JSONValue(encoding: self)) }

    /// Reads a plan file, or says in words why it cannot be used.
    package static func read(_ url: URL, shown: String) throws(PlanError) -> Plan {
        let data: Data
        do {
            data = try readRegularFile(atPath: url.path, limit: 1 << 30)
        } catch {
            throw PlanError("\(shown): \(FileKind(path: url.path) == .missing ? "no such file" : error.message)")
        }
        guard case .object(let top)? = try? JSONValue.parse(data) else { throw PlanError("\(shown): is not a plan (not a JSON object)") }
        guard let version = top["schemaVersion"]?.double else { throw PlanError("\(shown): is not a plan made by reckon plan (no schemaVersion)") }
        guard version == Double(currentSchemaVersion) else {
            throw PlanError(
                "\(shown): is a plan of schema version \(version.formatted()), which this reckon does not read; make it again with this reckon")
        }
        do {
            return try JSONDecoder().decode(Plan.self, from: data)
        } catch let error as DecodingError {
            throw PlanError("\(shown): is not a whole plan (\(words(error))); make it again with reckon plan")
        } catch {
            throw PlanError("\(shown): is not a whole plan; make it again with reckon plan")
        }
    }
}

/// Where in a plan a decoding error is, and what is wrong there, in words.
func words(_ error: DecodingError) -> String {
    func place(_ path: [CodingKey]) -> String {
        let text = path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return text.isEmpty ? "the top" : String(text.drop { $0 == "." })
    }
    switch error {
    case .keyNotFound(let key, let context): return "'\(place(context.codingPath + [key]))' is missing"
    case .typeMismatch(_, let context), .valueNotFound(_, let context): return "'\(place(context.codingPath))' is not of the kind a plan holds there"
    case .dataCorrupted(let context): return "'\(place(context.codingPath))' holds a value a plan cannot"
    @unknown default: return "it cannot be read"
    }
}

/// Why a plan cannot be made, read or carried out, in one sentence.
package struct PlanError: Error, Sendable, Equatable, CustomStringConvertible {
    package var description: String
    /// The choices given cannot be carried out (a usage error, exit 64):
    /// nothing was planned or written.
    package var refusesChoices = false
    /// What to do about it, said after the description: for a choices file
    /// that no longer fits the sides. Nil for a `--take`, whose description
    /// starts after "'--take' ".
    package var advice: String?

    package init(_ description: String) { self.description = description }

    /// A `--take` that cannot be carried out.
    package init(take description: String) {
        self.description = description
        refusesChoices = true
    }

    /// A choices file that cannot be carried out: make the report again and choose again.
    package init(choicesFile description: String) {
        self.description = description
        refusesChoices = true
        advice = ChoiceRequest.chooseAgain
    }
}

extension [PlanSide] {
    /// The side that plays `role`: a plan's sides are the local one, then the remote.
    package func side(_ role: SideRole) -> PlanSide { self[role == .local ? 0 : 1] }
}

extension Plan {
    /// Keeps only what `content` lets the plan's pages show of each
    /// version: no body's first lines below `full`, no title at `none`.
    package mutating func showing(_ content: ReportContent) {
        guard content != .full else { return }
        for index in actions.indices {
            for role in actions[index].versions.keys {
                actions[index].versions[role]!.firstLines = []
                if content == .none { actions[index].versions[role]!.title = nil }
            }
        }
    }
}
