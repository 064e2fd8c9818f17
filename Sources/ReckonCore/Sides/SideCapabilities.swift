import Foundation

/// A kind of side that apply writes: its memos are files that a plan tags
/// (a memo folder, a remote). A kind without it is never written (the
/// app's store), and its memos are rows, read only through its store.
package protocol WrittenSide {
    /// The side a plan names, remade from what the plan keeps; nil when the
    /// plan keeps too little to reach it again (a connection string's secret).
    /// `process` names the temporary root a remote's cache goes under.
    static func reopen(_ planned: PlanSide, process: ProcessSettings) -> Self?
    /// What a plan keeps to reach the side again.
    func planned() -> PlannedPlace
    /// How apply reads and writes the side's files; throws why it cannot.
    func fileAccess(shown: String, limits: ReadLimits, process: ProcessSettings) throws(MemoFolderError) -> any FileAccess
    /// What the lock of a target that apply writes is named by.
    func lockPlace(shown: String) throws(TargetLock.Refusal) -> String
}

/// A kind of side read through a folder of downloaded files (a remote).
package protocol CachedSide {
    /// The folder of downloaded files the side keeps between runs, if any.
    var lastingCache: URL? { get }
    /// Points the side's cache at `folder` (a definition's or a one-shot's).
    mutating func useCache(_ folder: URL, temporary: Bool)
    /// Makes the side download every file again, ignoring its cache.
    mutating func refreshCache()
}

/// A kind of side that may ask for a password (an encrypted iPhone backup).
package protocol PasswordSide {
    /// Gives the side, shown as `shown`, the ways to a password it may ask for.
    mutating func usePasswords(_ sources: PasswordSources, shown: String)
}

/// What a plan keeps of a side's place to reach it again.
package struct PlannedPlace: Sendable {
    /// A memo folder's real path, or a remote with no secret in it.
    package var location: String?
    /// The kind's own values a plan keeps, by the names a plan gives them
    /// (`DefinitionKey.planKey`).
    package var kept: [String: PlanSide.Kept] = [:]
}

/// The capabilities asked of any side: what a kind without one answers.
extension SideKind {
    /// Whether the side's memos are files that a plan tags and apply writes;
    /// false for a side whose memos are rows, read only through its store.
    package static var holdsFiles: Bool { Self.self is any WrittenSide.Type }

    /// The side a plan names, remade from what the plan keeps; nil for a
    /// kind apply never writes, or when the plan keeps too little.
    package static func reopen(_ planned: PlanSide, process: ProcessSettings) -> Self? {
        (Self.self as? any WrittenSide.Type)?.reopen(planned, process: process) as? Self
    }

    /// What a plan keeps to reach the side again: nothing for a kind never written.
    package func planned() -> PlannedPlace {
        (self as? any WrittenSide)?.planned() ?? PlannedPlace()
    }

    /// How apply reads and writes the side's files, in the process
    /// `process` describes; throws why it cannot.
    package func fileAccess(shown: String, limits: ReadLimits, process: ProcessSettings) throws(MemoFolderError) -> any FileAccess {
        guard let written = self as? any WrittenSide else {
            throw MemoFolderError(path: shown, reason: "is \(Self.description), which reckon never writes; only memo folders are")
        }
        return try written.fileAccess(shown: shown, limits: limits, process: process)
    }

    /// What the lock of a target that apply writes is named by; throws why
    /// the side is never a target.
    package func lockPlace(shown: String) throws(TargetLock.Refusal) -> String {
        guard let written = self as? any WrittenSide else {
            throw TargetLock.Refusal(description: "\(shown) is \(Self.description), which reckon never writes")
        }
        return try written.lockPlace(shown: shown)
    }

    /// Whether the side downloads files into a cache folder.
    package var needsCache: Bool { self is any CachedSide }

    /// The folder of downloaded files the side keeps between runs, if any.
    package var lastingCache: URL? { (self as? any CachedSide)?.lastingCache }

    /// Points the side's cache, if it keeps one, at `folder`.
    package mutating func useCache(_ folder: URL, temporary: Bool) {
        change { (cached: inout any CachedSide) in cached.useCache(folder, temporary: temporary) }
    }

    /// Makes the side, if it keeps a cache, download every file again.
    package mutating func refreshCache() {
        change { (cached: inout any CachedSide) in cached.refreshCache() }
    }

    /// Gives the side the ways to a password, if it may ask for one.
    package mutating func usePasswords(_ sources: PasswordSources, shown: String) {
        change { (asking: inout any PasswordSide) in asking.usePasswords(sources, shown: shown) }
    }

    /// Changes the side through one of its capabilities; nothing when it has none.
    private mutating func change<Capability>(_ body: (inout Capability) -> Void) {
        guard var capable = self as? Capability else { return }
        body(&capable)
        if let changed = capable as? Self { self = changed }
    }
}
