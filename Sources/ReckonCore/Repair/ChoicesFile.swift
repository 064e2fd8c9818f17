import Foundation

/// The choices a person made in a report's page, saved as a file for
/// `reckon plan --choices FILE`: for each memo, the version to take and its
/// fingerprint on each side as the report saw it, so that a plan never
/// carries out a choice made about versions that have since changed.
///
/// ```json
/// {"schemaVersion": 1, "pipeline": "nightly", "remote": "drive",
///  "choices": [{"id": "3f2504e0-…", "take": "local", "local": "<token>", "remote": null}]}
/// ```
///
/// A fingerprint is `Fingerprint.token`, or null where the side had no
/// entry for the memo. An optional `"$schema"` string is ignored.
package struct ChoicesFile: Sendable, Equatable {
    /// One memo's choice.
    package struct Choice: Sendable, Equatable {
        package var id: MemoID
        package var take: ConflictChoices.Take
        /// Each side's fingerprint of the memo when the report was made; nil where the side had no entry.
        package var local: Fingerprint?
        package var remote: Fingerprint?

        package init(id: MemoID, take: ConflictChoices.Take, local: Fingerprint?, remote: Fingerprint?) {
            self.id = id
            self.take = take
            self.local = local
            self.remote = remote
        }

        /// The fingerprint on `role`'s side.
        package func fingerprint(_ role: SideRole) -> Fingerprint? { role == .local ? local : remote }
    }

    /// The file as the person named it, for messages.
    package var shown: String
    /// The pipeline and the remote of the report the choices were made in.
    package var pipeline: String
    package var remote: String
    package var choices: [Choice]

    package static let currentSchemaVersion = 1
    package static let topKeys: Set<String> = ["$schema", "schemaVersion", "pipeline", "remote", "choices"]
    package static let choiceKeys: Set<String> = ["id", "take", "local", "remote"]
    /// The largest choices file read.
    static let sizeLimit: Int64 = 64 << 20

    package init(shown: String, pipeline: String, remote: String, choices: [Choice]) {
        self.shown = shown
        self.pipeline = pipeline
        self.remote = remote
        self.choices = choices
    }

    /// Reads and checks the file at `url`, named `shown` in messages.
    package static func read(_ url: URL, shown: String) throws(DefinitionError) -> ChoicesFile {
        let data: Data
        do {
            data = try readRegularFile(atPath: url.path, limit: sizeLimit)
        } catch {
            throw DefinitionError(file: shown, message: FileKind(path: url.path) == .missing ? "no such file" : error.message)
        }
        return try parse(data, shown: shown)
    }

    /// Parses a choices file; every mistake names the file, the key (such
    /// as `choices[2].take`) and what was expected there.
    package static func parse(_ data: Data, shown: String) throws(DefinitionError) -> ChoicesFile {
        let reader = DefinitionReader(file: shown, base: URL(fileURLWithPath: "/"), environment: [:])
        let fail = reader.fail
        let root = try reader.root(of: data)
        guard case .object = root else { throw fail(nil, "must be a JSON object of choices, found \(root.typeName)") }
        let top = try reader.object(root, nil, allowed: topKeys)
        try reader.schemaPointer(in: top)
        guard let version = top["schemaVersion"] else { throw fail("schemaVersion", "is missing (it must be \(currentSchemaVersion))") }
        guard version.double == Double(currentSchemaVersion) else {
            throw fail("schemaVersion", "must be \(currentSchemaVersion), the version this reckon reads")
        }
        let pipeline = try reader.string(top, "pipeline", in: nil, required: true)!
        let remote = try reader.string(top, "remote", in: nil, required: true)!
        guard let list = top["choices"] else { throw fail("choices", "is missing") }
        guard case .array(let items) = list else { throw fail("choices", "must be an array of choices, found \(list.typeName)") }
        var choices: [Choice] = []
        var seen: [MemoID: Int] = [:]
        for (position, item) in items.enumerated() {
            let key = "choices[\(position)]"
            let object = try reader.object(item, key, allowed: choiceKeys)
            let text = try reader.string(object, "id", in: key, required: true)!
            guard let id = MemoID(text) else {
                throw fail("\(key).id", "must be a memo id (a UUID such as 3f2504e0-4f89-11d3-9a0c-0305e82c3301), found \(quoted(text))")
            }
            if let earlier = seen[id] {
                throw fail("\(key).id", "names the memo \(id), which choices[\(earlier)] names already; choose each memo once")
            }
            seen[id] = position
            let side = try reader.string(object, "take", in: key, required: true)!
            guard let take = ConflictChoices.Take(rawValue: side) else {
                let names = ConflictChoices.Take.allCases.map(\.rawValue).joined(separator: ", ")
                throw fail("\(key).take", "must be one of \(names), found \(quoted(side))")
            }
            var prints: [SideRole: Fingerprint] = [:]
            for role in SideRole.allCases {
                switch object[role.rawValue] {
                case nil:
                    throw fail("\(key).\(role.rawValue)", "is missing (the memo's fingerprint on that side as the report saw it, or null)")
                case .null?: break
                case .string(let token)?:
                    guard let print = Fingerprint(token: token) else {
                        throw fail(
                            "\(key).\(role.rawValue)",
                            "must be a fingerprint as a report gives it (seconds.nanoseconds-state-rowVersion-changeTag-digest), or null; found \(quoted(token))"
                        )
                    }
                    prints[role] = print
                case let other?:
                    throw fail("\(key).\(role.rawValue)", "must be a fingerprint (a string) or null, found \(other.typeName)")
                }
            }
            choices.append(Choice(id: id, take: take, local: prints[.local], remote: prints[.remote]))
        }
        return ChoicesFile(shown: shown, pipeline: pipeline, remote: remote, choices: choices)
    }
}
