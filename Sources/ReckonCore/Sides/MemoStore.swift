import Foundation

/// One side that holds memos, whatever kind it is: a memo folder today, and
/// the app's SQLite store or an rclone remote as they come. Every kind is
/// counted by the same rule and compared by the same fields, because all the
/// stages see of a side is this protocol and the listing it returns.
///
/// A store never writes to its side. What it judged damaged it hands over
/// with the listing (`SideListing.damaged`), byte for byte as it read them,
/// so the quarantine copies exactly what was judged and never reads the
/// source a second time.
package protocol MemoStore: Sendable {
    /// Which side this is, as the definition or the command line names it.
    var spec: SideSpec { get }

    /// The fast path: Active and Archived counts from the side's index alone
    /// (`SideListing.precounted`), or, when the index cannot be used, counts
    /// rebuilt from the memos themselves, marked degraded.
    func count() -> SideListing

    /// One fingerprint per memo (its index entry and its file), and the
    /// problems met; with `deep`, every memo is also read and summarised.
    func load(deep: Bool) -> SideListing

    /// Hands each id to `visit` in id order with its index entry and how its
    /// file spells it (either may be absent), holding nothing per memo: with
    /// `scratch`, sorting spills there. The listing returned has the status,
    /// the problems and the damaged bytes, not the entries or files.
    func list(scratch: URL?, visit: (MemoID, IndexEntry?, IDSpelling?) throws -> Void) throws -> SideListing

    /// Reads memos by id on every core, `chunkSize` at a time, each as
    /// `reading` says, and maps each by `work` on the same core. Results come
    /// back in the order given; a memo that cannot be used gives the problem
    /// that makes its id uncomparable.
    func read<Kept, Output: Sendable>(
        _ memos: [(MemoID, IDSpelling)], chunkSize: Int, as reading: MemoReading<Kept>,
        then work: @escaping @Sendable (Kept) -> Output
    ) -> [Result<Output, Problem>]

    /// The identity of each memo's file, in the order given, which tells a
    /// later run that the file is unchanged without reading it; nil where
    /// the store has no such file, or its identity proves nothing.
    func fileIdentities(_ memos: [(MemoID, IDSpelling)]) -> [FileIdentity?]
}

extension MemoStore {
    /// Stores without files of their own (a database, a remote) have no identities.
    package func fileIdentities(_ memos: [(MemoID, IDSpelling)]) -> [FileIdentity?] { memos.map { _ in nil } }
}

/// What is read of each memo: its summary (the compared fields and a digest
/// of its text) or the whole memo.
package struct MemoReading<Kept>: Sendable {
    /// Reads one memo file's bytes (to a nesting limit) with the worker's own parser.
    let parse: @Sendable (Data, Int, MemoParser) throws(MemoReader.Failure) -> (MemoID, Kept)
    /// Keeps what is wanted of a memo a store read as values (a store row).
    let take: @Sendable (Memo) -> Kept

    /// The compared fields, the body as a digest.
    package static var summary: MemoReading<MemoSummary> {
        MemoReading<MemoSummary>(
            parse: { data, depthLimit, parser throws(MemoReader.Failure) in
                try MemoReader.readSummary(data, depthLimit: depthLimit, parser: parser)
            }, take: MemoSummary.init)
    }

    /// Every field, unknown keys included.
    package static var memo: MemoReading<Memo> {
        MemoReading<Memo>(
            parse: { data, depthLimit, parser throws(MemoReader.Failure) in
                let memo = try MemoReader.read(data, depthLimit: depthLimit, parser: parser)
                return (memo.id, memo)
            }, take: { $0 })
    }
}

/// The exact bytes of a file a store judged damaged, as it read them, to be
/// copied aside by the quarantine.
package struct DamagedFile: Sendable, Equatable {
    /// Where it is inside the side, as problems name it (`memos/<id>.json`).
    package var path: String
    package var bytes: Data
}

/// How much a store reads before it calls a file too large or too deep.
package struct ReadLimits: Sendable, Equatable {
    /// Largest `index.json` read.
    package var indexSizeLimit: Int64 = 1 << 30
    /// Largest memo file read.
    package var memoSizeLimit: Int64 = 64 << 20
    /// Deepest nesting of JSON arrays and objects read.
    package var depthLimit = 64

    package init() {}
}
