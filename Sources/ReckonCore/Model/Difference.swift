/// How one memo compares between the local side and one remote, with rclone
/// check's sigils. Memos that are the same (`=`) are not listed.
package struct Difference: Sendable, Equatable, Codable {
    package enum Sigil: String, Sendable, Codable, CaseIterable {
        case same = "="
        case onlyOnRemote = "-"
        case onlyOnLocal = "+"
        case differs = "*"
        case cannotCompare = "!"
    }

    package enum Kind: String, Sendable, Codable, CaseIterable {
        case onlyOnRemote = "only-on-remote"
        case onlyOnLocal = "only-on-local"
        case deletedOnOneSide = "deleted-on-one-side"
        case archivedOnOneSide = "archived-on-one-side"
        case changed
        case cannotCompare = "cannot-compare"
    }

    /// Which side changed the memo since the two sides last agreed on it,
    /// told by comparing each side's fingerprint of the memo now with the
    /// one it had when they were last seen equal (`Agreement`).
    package enum Changed: String, Sendable, Codable, CaseIterable {
        /// Only this device changed.
        case local
        /// Only the remote changed.
        case remote
        /// Both changed, and differently: a conflict.
        case both
        /// Neither changed since they agreed: a person chooses.
        case neither
        /// They never agreed on it (or no state folder remembers): a memo
        /// on one side only goes to the other, any other is a person's choice.
        case unknown
    }

    /// What one side holds for this memo, as far as it could be read.
    package struct SideState: Sendable, Equatable, Codable {
        package var modifiedTime: Timestamp?
        package var archivedAt: Timestamp?
        package var deletedAt: Timestamp?
        package var problem: String?

        /// The entry's times, or in a deep check the memo file's (`memo`),
        /// which an entry that disagrees with its file does not hide.
        package init(_ entry: IndexEntry?, memo: MemoSummary? = nil, problem: String? = nil) {
            modifiedTime = entry?.modifiedTime
            archivedAt = entry?.archivedAt
            deletedAt = entry?.deletedAt
            if entry != nil, let memo {
                modifiedTime = memo.modifiedAt
                archivedAt = memo.archivedAt
                deletedAt = memo.deletedAt
            }
            self.problem = problem
        }
    }

    /// The name of the remote compared with the local side.
    package var remote: String
    package var id: MemoID
    package var sigil: Sigil
    package var kind: Kind
    /// For `*`: the fields that differ.
    package var fields: [String]
    package var title: String?
    package var local: SideState
    package var remoteState: SideState
    /// Which side changed it since they last agreed; nil for `!`, which cannot be compared.
    package var changed: Changed?
    /// When the two sides last agreed on the memo; nil when they never did (as far as the state folder remembers).
    package var agreedAt: Timestamp?

    enum CodingKeys: String, CodingKey {
        case remote, id, sigil, kind, fields, title, changed, agreedAt
        case local = "onLocal"
        case remoteState = "onRemote"
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(remote, forKey: .remote)
        try container.encode(id, forKey: .id)
        try container.encode(sigil, forKey: .sigil)
        try container.encode(kind, forKey: .kind)
        try container.encode(fields, forKey: .fields)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encode(local, forKey: .local)
        try container.encode(remoteState, forKey: .remoteState)
        try container.encode(changed, forKey: .changed)  // null for `!`
        try container.encode(agreedAt, forKey: .agreedAt)
    }

    package init(
        remote: String, id: MemoID, sigil: Sigil, kind: Kind, fields: [String] = [], title: String? = nil,
        local: SideState, remoteState: SideState
    ) {
        self.remote = remote
        self.id = id
        self.sigil = sigil
        self.kind = kind
        self.fields = fields
        self.title = title
        self.local = local
        self.remoteState = remoteState
        changed = sigil == .cannotCompare ? nil : .unknown
    }
}

extension Difference {
    /// The side whose version a plan follows without asking: the one that
    /// alone changed the memo since they last agreed, or, for a memo they
    /// never agreed on, the one side that holds it. Nil when both or
    /// neither changed, or when they never agreed and both hold it.
    package var movedAlone: SideRole? {
        switch (changed, sigil) {
        case (.local?, _), (.unknown?, .onlyOnLocal): .local
        case (.remote?, _), (.unknown?, .onlyOnRemote): .remote
        default: nil
        }
    }

    /// The side whose version is newer, by its deletion or modification
    /// time; a side without the memo has no time and loses. Nil when both
    /// times are the same.
    package var newerSide: SideRole? {
        func time(_ state: SideState) -> Timestamp? { state.deletedAt ?? state.modifiedTime }
        switch (time(local), time(remoteState)) {
        case (let l?, let r?): return l == r ? nil : (l > r ? .local : .remote)
        case (_?, nil): return .local
        case (nil, _?): return .remote
        case (nil, nil): return nil
        }
    }
}
