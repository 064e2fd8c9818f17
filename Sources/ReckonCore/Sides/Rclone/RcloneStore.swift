import Foundation
import Synchronization

/// Reads one side kept in an rclone remote (`gdrive:60dMemo`), and never
/// writes to it: rclone is given only `lsjson`, `cat` and `copy` from the remote.
///
/// Counts read `index.json` alone (`rclone cat`). A listing adds one
/// `rclone lsjson` of `memos/`. A deep check and an export read the memo
/// files from a local cache, which downloads, in one `rclone copy`, only the
/// files whose listed size, time or MD5 changed, checks each against the
/// listing before it is kept, and forgets files the remote no longer lists.
/// The cache is then read as a memo folder whose names come from the
/// remote's listing, so every check is the memo folder's own.
package struct RcloneStore: MemoStore {
    package let spec: SideSpec
    let source: RcloneSide
    let limits: ReadLimits
    /// What the process decides for the store (child environment, private
    /// folders, test checkpoints).
    let process: ProcessSettings
    /// The remote once opened, for this store's later reads: the load and
    /// the export, handed one store, list and fetch it once.
    let kept = Kept()

    /// The remote one `RcloneStore` opened.
    final class Kept: Sendable {
        let remote = Mutex<Remote?>(nil)
    }

    package init(_ spec: SideSpec, limits: ReadLimits = ReadLimits(), process: ProcessSettings = ProcessSettings()) {
        self.spec = spec
        self.limits = limits
        self.process = process
        guard let source = spec.kind as? RcloneSide else { preconditionFailure("an rclone side is read from a remote") }
        self.source = source
    }

    package func count() -> SideListing {
        let remote: Remote
        switch Remote.open(source, kept: kept, limits: limits, process: process, need: .index) {
        case .success(let opened): remote = opened
        case .failure(let problem): return failed(problem)
        }
        var side = remote.folder(spec, limits: limits, names: nil).count()
        if side.rebuiltFromMemoFiles {
            // Counts never download memo files: a deep check rebuilds them from the memos.
            side = SideListing(
                spec: spec, status: .failed,
                problems: side.problems.filter(\.isAboutIndex).map { problem in
                    var problem = problem
                    problem.message += "; counts read index.json alone, so run a deep check (reckon reconcile) to count from the memo files"
                    return problem
                })
        }
        return remote.placed(side, spec)
    }

    package func load(deep: Bool) -> SideListing {
        let remote: Remote
        let listed: Listed
        switch listedRemote(deep: deep) {
        case .success(let (opened, listing)): (remote, listed) = (opened, listing)
        case .failure(let problem): return failed(problem)
        }
        // Read once the listing is done, when the other sides mostly were: on a thread of its own, so that
        // its work on every core is not held to the share of one iteration of the load stage.
        var side = Pending(on: process.threads) { [spec, limits] in remote.folder(spec, limits: limits, names: listed.names).load(deep: deep) }.wait()
        side.problems += listed.problems
        return remote.placed(listed.marked(side), spec)
    }

    package func list(scratch: URL?, visit: (MemoID, IndexEntry?, IDSpelling?) throws -> Void) throws -> SideListing {
        let remote: Remote
        let listed: Listed
        switch listedRemote(deep: true) {
        case .success(let (opened, listing)): (remote, listed) = (opened, listing)
        case .failure(let problem): return failed(problem)
        }
        var side = try remote.folder(spec, limits: limits, names: listed.names).list(scratch: scratch, visit: visit)
        side.problems += listed.problems
        return remote.placed(listed.marked(side), spec)
    }

    package func read<Kept, Output: Sendable>(
        _ memos: [(MemoID, IDSpelling)], chunkSize: Int, as reading: MemoReading<Kept>,
        then work: @escaping @Sendable (Kept) -> Output
    ) -> [Result<Output, Problem>] {
        switch Remote.open(source, kept: kept, limits: limits, process: process, need: .files) {
        case .success(let remote):
            let listed = try? remote.listed(deep: true, limits: limits).get()
            defer { remote.waitForRecord() }
            return remote.folder(spec, limits: limits, names: listed?.names).read(memos, chunkSize: chunkSize, as: reading, then: work)
                .map { $0.mapError { listed?.marked($0) ?? $0 }.mapError { $0.inside(remote.nesting) } }
        case .failure(let problem):
            return memos.map { .failure(Problem(problem.kind, path: problem.path, id: $0.0, problem.message)) }
        }
    }

    /// The remote opened and `memos/` listed (with `deep`, its memo files downloaded).
    private func listedRemote(deep: Bool) -> Result<(Remote, Listed), Problem> {
        Remote.open(source, kept: kept, limits: limits, process: process, need: deep ? .files : .listing).flatMap { opened in
            opened.listed(deep: deep, limits: limits).map { (opened, $0) }
        }
    }

    private func failed(_ problem: Problem) -> SideListing {
        SideListing(spec: spec, status: .failed, problems: [problem])
    }

    /// What one listing of `memos/` gave: the names to read, the problems
    /// of the listing itself, the files that could not be downloaded, and how
    /// the cache was used.
    struct Listed: Sendable {
        var names: [String]?
        var problems: [Problem] = []
        /// Names listed but not downloaded, with rclone's reason.
        var unfetched: [String: String] = [:]
        /// Names whose file changed on the remote after the listing, with how it showed.
        var changed: [String: String] = [:]
        /// Names whose listed size is over the limit, so they are not downloaded.
        var oversized: [String: String] = [:]
        var cacheUse: CacheUse?

        /// A memo file that could not be downloaded is `!` for a reason of its own.
        func marked(_ problem: Problem) -> Problem {
            guard problem.path.hasPrefix("memos/") else { return problem }
            let name = String(problem.path.dropFirst(6))
            if let reason = oversized[name] { return Problem(.unreadableFile, path: problem.path, id: problem.id, reason) }
            if let how = changed[name] {
                return Problem(
                    .unreachable, path: problem.path, id: problem.id, "changed on the remote \(how), so it was not kept; run reckon again to read it")
            }
            guard let reason = unfetched[name] else { return problem }
            return Problem(.unreachable, path: problem.path, id: problem.id, "could not be downloaded from the remote (\(reason))")
        }

        func marked(_ side: SideListing) -> SideListing {
            var side = side
            side.problems = side.problems.map(marked)
            side.cacheUse = cacheUse
            if !(unfetched.isEmpty && changed.isEmpty) && side.status == .ok { side.status = .degraded }
            return side
        }
    }

    /// A remote opened for one run: where its `index.json` is, the index
    /// downloaded into the cache, and what was listed and downloaded, shared
    /// by every use of the same remote in one run.
    package final class Remote: Sendable {
        let source: RcloneSide
        let rclone: Rclone
        /// The remote folder holding `index.json`.
        let root: String
        /// `60dMemo` when the remote names the folder above it, else empty.
        let nesting: String
        /// This remote's folder in the cache.
        let cacheFolder: URL
        /// The index.json the cache held before this run, by id (nil without
        /// one): the memos whose entry changed since are downloaded while
        /// `memos/` is still being listed.
        let previousIndex: [MemoID: IndexEntry]?
        private let listings = Mutex<[Bool: Listed]>([:])
        /// The one `lsjson` of `memos/`, started as soon as the remote is
        /// opened for a listing, so that it runs while `index.json` is read.
        fileprivate let memosListing = Mutex<Pending<Result<[Rclone.Entry], Rclone.Failure>>?>(nil)
        /// The cache's record being written on another core while the cached files are read.
        let recordWrite = Mutex<Pending<Bool>?>(nil)
        /// The remote's backend type (`sftp`, `drive`), looked up on another core; nil until asked for.
        private let backend: Mutex<Pending<String?>?>
        /// What the process decides for the remote (child environment,
        /// workers, where a test pauses it after the listing).
        let process: ProcessSettings

        private init(
            source: RcloneSide, rclone: Rclone, root: String, nesting: String, cacheFolder: URL, previousIndex: [MemoID: IndexEntry]?,
            backend: Pending<String?>?, process: ProcessSettings
        ) {
            self.process = process
            self.source = source
            self.rclone = rclone
            self.backend = Mutex(backend)
            self.root = root
            self.nesting = nesting
            self.cacheFolder = cacheFolder
            self.previousIndex = previousIndex
        }

        var indexCopy: URL { cacheFolder.appendingPathComponent("index.json") }
        var memos: String { Rclone.joined(root, "memos") }
        /// A staging folder of this run's own, so runs sharing a cache never empty each other's.
        var staging: URL { cacheFolder.appendingPathComponent("staging-\(getpid())") }
        /// The rclone children that write into a staging folder, one `<pid> <program>` a line.
        static let childRecordName = ".children"
        var fingerprintsURL: URL { cacheFolder.appendingPathComponent(CachedFile.fileName) }

        /// Whether a file rclone staged is the listed one: its size, and the
        /// time rclone gave it, which is the remote's time when it was copied.
        package static func isStaged(atPath path: String, as entry: Rclone.Entry) -> Bool {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int64(info.st_size) == entry.size,
                let listed = Timestamp(iso8601: entry.modTime)
            else { return false }
            return Timestamp(seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int32(info.st_mtim.tv_nsec)) == listed
        }

        /// What a run needs of a remote beyond its `index.json`.
        enum Need {
            /// Nothing: counts read the index alone.
            case index
            /// The listing of `memos/` (a quick check).
            case listing
            /// The memo files too (a deep check, an export).
            case files
        }

        /// The remote with its `index.json` in the cache: read once a run.
        /// When more is needed, `memos/` starts being listed at once.
        static func open(_ source: RcloneSide, kept: Kept, limits: ReadLimits, process: ProcessSettings, need: Need) -> Result<Remote, Problem> {
            if let known = kept.remote.withLock({ $0 }) { return .success(known) }
            let listing = need != .index
            let rclone: Rclone
            do {
                rclone = try Rclone(process: process, config: source.config, flags: source.flags)
            } catch {
                return .failure(Problem(.unreadableFolder, path: "", error.message))
            }
            var configured = rclone
            configured.connectTimeout = .seconds(source.connectTimeout)
            configured.ioTimeout = .seconds(source.ioTimeout)
            configured.callLimit = .seconds(source.callLimit)
            // A dropped connection makes rclone retry for minutes; ten errors end the call, and what was verified stays.
            configured.errorLimit = 10
            let cacheFolder = source.cache.appendingPathComponent(Rclone.cacheName(of: source.remote))
            // The index of the last run is read from the cache while the remote is listed.
            let previous = need == .files && !source.refresh ? Pending(on: process.threads) { Self.readPreviousIndex(in: cacheFolder) } : nil
            // `memos/` of the remote as named starts being listed at once, before the remote is
            // known to hold it: the listing is the longest call. A nested remote lists its own.
            let workers = process.threads
            let backend = listing ? Self.lookUpBackend(source, rclone: configured, on: workers) : nil
            let memosListed = listing ? startListing(Rclone.joined(source.remote, "memos"), rclone: configured, backend: backend!, on: workers) : nil
            let top: [Rclone.Entry]
            do { top = try configured.lsjson(source.remote, filesOnly: false, hash: false) } catch {
                _ = memosListed?.wait()
                _ = previous?.wait()
                return .failure(Problem(.unreadableFolder, path: "", error.message))
            }
            // The folder holding index.json, or its parent holding 60dMemo/, as on disk.
            let holdsIndex = top.contains { $0.name == "index.json" || ($0.name == "memos" && $0.isDir) }
            let nested = !holdsIndex && top.contains { $0.name == MemoFolder.nestedFolder && $0.isDir }
            let root = nested ? Rclone.joined(source.remote, MemoFolder.nestedFolder) : source.remote
            // Read before the new index replaces it in the cache.
            let previousIndex = previous?.wait() ?? nil
            let remote = Remote(
                source: source, rclone: configured, root: root, nesting: nested ? MemoFolder.nestedFolder : "",
                cacheFolder: cacheFolder, previousIndex: previousIndex, backend: backend, process: process)
            if listing {
                remote.memosListing.withLock {
                    $0 = nested ? startListing(remote.memos, rclone: configured, backend: backend!, on: workers) : memosListed
                }
                // The listing of a folder a nested remote does not hold fails at once; no rclone is left behind.
                if nested { _ = memosListed?.wait() }
            }
            let indexEntries = nested ? (try? configured.lsjson(root, filesOnly: true, hash: false)) ?? [] : top
            if let problem = remote.fetchIndex(limits: limits, listed: indexEntries.filter { $0.name == "index.json" && !$0.isDir }) {
                // No rclone is left running after the side failed.
                _ = memosListed?.wait()
                _ = remote.memosListing.withLock { $0 }?.wait()
                return .failure(problem.inside(remote.nesting))
            }
            kept.remote.withLock { $0 = remote }
            return .success(remote)
        }

        /// The `index.json` a cache folder holds from the last run, by id; nil without a clean one.
        private static func readPreviousIndex(in cacheFolder: URL) -> [MemoID: IndexEntry]? {
            var byID: [MemoID: IndexEntry] = [:]
            let clean = IndexReader.forEachClean(atPath: cacheFolder.appendingPathComponent("index.json").path) { byID[$0.id] = $0 }
            return clean ? byID : nil
        }

        /// Downloads `index.json` into the cache folder (replacing the last
        /// one whole), or the problem that fails the side.
        private func fetchIndex(limits: ReadLimits, listed: [Rclone.Entry]) -> Problem? {
            if listed.count > 1 {
                let ids = listed.map { $0.id ?? "?" }.joined(separator: " and ")
                return Problem(.duplicateID, path: "index.json", "the remote holds two files named index.json (ids \(ids)); reckon does not pick one")
            }
            do {
                try AtomicFile.makeFolder(cacheFolder)
            } catch {
                return Problem(.unreadableFolder, path: "", "the cache folder cannot be made: \(error.description)")
            }
            guard !listed.isEmpty else {
                try? FileManager.default.removeItem(at: indexCopy)
                return nil
            }
            // The listed size is asked first: an index over the limit is never downloaded.
            if listed[0].size > limits.indexSizeLimit {
                return Problem(
                    .unreadableFile, path: "index.json",
                    "is \(listed[0].size) bytes, over the limit of \(limits.indexSizeLimit) bytes, so it is not downloaded")
            }
            do {
                let data = try rclone.cat(Rclone.joined(root, "index.json"), limit: limits.indexSizeLimit)
                guard Int64(data.count) <= limits.indexSizeLimit else {
                    return Problem(
                        .unreadableFile, path: "index.json", "is larger than the limit of \(counted(limits.indexSizeLimit, "byte")); it is not read")
                }
                try AtomicFile.write(data, to: indexCopy)
                return nil
            } catch let failure as Rclone.Failure {
                return Problem(.unreadableFile, path: "index.json", failure.message)
            } catch {
                return Problem(.unreadableFolder, path: "", "the cache folder cannot be written: \(errorWords(error))")
            }
        }

        /// The cache read as a memo folder, with the names the remote listed in `memos/`.
        func folder(_ spec: SideSpec, limits: ReadLimits, names: [String]?) -> MemoFolder {
            var folder = MemoFolder(spec, url: cacheFolder, limits: limits, process: process)
            folder.memoListing = .given(names)
            return folder
        }

        /// The side with the remote's spec, and its paths as the remote's: `60dMemo/…` when nested.
        func placed(_ side: SideListing, _ spec: SideSpec) -> SideListing {
            waitForRecord()
            var placed = side.inside(nesting)
            placed.spec = spec
            return placed
        }

        /// Returns once the cache's record of this run is written.
        func waitForRecord() {
            _ = recordWrite.withLock { $0 }?.wait()
        }

        /// The `lsjson` of `memos/`, started on another core if it was not yet.
        private func startListing() -> Pending<Result<[Rclone.Entry], Rclone.Failure>> {
            memosListing.withLock { started in
                if let started { return started }
                let pending = Self.startListing(memos, rclone: rclone, backend: backendLookup(), on: process.threads)
                started = pending
                return pending
            }
        }

        /// An `lsjson` of a memos folder on another core, with MD5 where the backend lists it for free.
        private static func startListing(_ memos: String, rclone: Rclone, backend: Pending<String?>, on workers: Workers) -> Pending<
            Result<[Rclone.Entry], Rclone.Failure>
        > {
            Pending(on: workers) { () -> Result<[Rclone.Entry], Rclone.Failure> in
                let hash = backend.wait().map(Rclone.listingCarriesMD5) ?? false
                return Result { () throws(Rclone.Failure) in try rclone.lsjson(memos, filesOnly: true, hash: hash) }
            }
        }

        /// The backend type of the side's remote, looked up on another core (for a named remote
        /// without `RCLONE_CONFIG_<NAME>_TYPE`, one `rclone config dump`).
        private static func lookUpBackend(_ source: RcloneSide, rclone: Rclone, on workers: Workers) -> Pending<String?> {
            Pending(on: workers) { (try? rclone.backendType(of: source.remote)) ?? nil }
        }

        /// The backend lookup, started now if it was not yet.
        private func backendLookup() -> Pending<String?> {
            backend.withLock { started in
                if let started { return started }
                let pending = Self.lookUpBackend(source, rclone: rclone, on: process.threads)
                started = pending
                return pending
            }
        }

        /// rclone as it downloads: `transfers` files at once, as the definition says, else as its
        /// flags say, else reckon's number for the backend.
        var downloader: Rclone {
            var downloader = rclone
            if let transfers = source.transfers {
                downloader.transfers = transfers
            } else if Rclone.flagValue("--transfers", in: source.flags) == nil {
                downloader.transfers = Rclone.transfers(backend: backendLookup().wait())
            }
            return downloader
        }

        /// `memos/` listed (once a run); with `deep`, its memo files downloaded into the cache.
        func listed(deep: Bool, limits: ReadLimits) -> Result<Listed, Problem> {
            if let known = listings.withLock({ $0[deep] ?? $0[true] }) { return .success(known) }
            let listing = startListing()
            var listed = Listed()
            var cached: [String: CachedFile] = [:]
            var stampsKept: Set<String> = []
            var early = Early()
            let keeper = Keeper(staging: staging, memosFolder: cacheFolder.appendingPathComponent("memos"), on: process.threads)
            if deep {
                removeStagingOfEndedRuns()
                // The cache's record is read, and its files' stamps checked, while the early copy starts.
                let record = Pending(on: process.threads) { [source, fingerprintsURL, cacheFolder] () -> ([String: CachedFile], Set<String>) in
                    let cached = source.refresh ? [:] : CachedFile.read(fingerprintsURL)
                    return (cached, CachedFile.stampsKept(cached, in: cacheFolder.appendingPathComponent("memos")))
                }
                early = fetchEarly(record: record, listing: listing, keeper: keeper)
                (cached, stampsKept) = record.wait()
            }
            // No rclone is left running, nor a file staged, once the side is given up.
            func giveUp() {
                _ = early.copy?.wait()
                _ = keeper.finish()
                try? FileTree.remove(staging.path)
            }
            let entries: [Rclone.Entry]
            switch listing.wait() {
            case .success(let listedEntries): entries = listedEntries
            case .failure(let error):
                giveUp()
                guard error.exitCode == 3 else { return .failure(Problem(.unreadableFolder, path: "memos", error.message)) }
                listed.names = nil
                return .success(store(listed, deep: deep))
            }
            let (unique, duplicates) = Self.unique(entries)
            listed.problems += duplicates
            listed.names = unique.map(\.name)
            if deep {
                // A cache without a memos folder of its own holds no memo file: the side is not read, as a
                // memos folder that is not a folder is not, and that is said once, not once per memo.
                do throws(OutputError) { try AtomicFile.makeFolder(cacheFolder.appendingPathComponent("memos")) } catch {
                    giveUp()
                    return .failure(Problem(.unreadableFolder, path: "memos", "the cache folder cannot be made: \(error.description)"))
                }
                listed = fetch(
                    unique, into: listed, cached: cached, stampsKept: stampsKept, early: early, keeper: keeper, sizeLimit: limits.memoSizeLimit)
            }
            return .success(store(listed, deep: deep))
        }

        /// Removes this run's staging folder and those of runs that ended
        /// without removing theirs (killed): `staging-<pid>` whose process is
        /// gone, once no rclone it recorded there is left running (rclone dies
        /// with reckon, but may still be ending). Staged files are copies of
        /// the remote's, never the only ones.
        private func removeStagingOfEndedRuns() {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: cacheFolder.path)) ?? []
            for name in names where name.hasPrefix("staging-") {
                let folder = cacheFolder.appendingPathComponent(name)
                guard let pid = pid_t(name.dropFirst(8)), pid == getpid() || PrivateFolder.processIsGone(pid),
                    ChildProcess.allGone(in: folder.appendingPathComponent(Self.childRecordName))
                else { continue }
                try? FileTree.remove(folder.path)
            }
        }

        /// The entries of a listing whose names are listed once, and a problem
        /// for each name listed more than once (Drive allows it): neither is read.
        package static func unique(_ entries: [Rclone.Entry]) -> ([Rclone.Entry], [Problem]) {
            // Names in strictly rising order (as sftp and local list them) cannot repeat.
            if zip(entries, entries.dropFirst()).allSatisfy({ utf8Precedes($0.name, $1.name) }) { return (entries, []) }
            var byName: [String: [Rclone.Entry]] = [:]
            for entry in entries { byName[entry.name, default: []].append(entry) }
            var unique: [Rclone.Entry] = []
            var problems: [Problem] = []
            for (name, same) in byName.sorted(by: { $0.key < $1.key }) {
                guard same.count == 1 else {
                    let ids = same.map { $0.id ?? "?" }.joined(separator: " and ")
                    let stem = name.hasSuffix(".json") ? String(name.dropLast(5)) : name
                    problems.append(
                        Problem(
                            .duplicateID, path: "memos/" + displayName(Array(name.utf8)), id: MemoID(stem),
                            "the remote holds \(same.count) files of this name (ids \(ids)); reckon does not pick one"))
                    continue
                }
                unique.append(same[0])
            }
            return (unique, problems)
        }

        private func store(_ listed: Listed, deep: Bool) -> Listed {
            listings.withLock { $0[deep] = listed }
            return listed
        }
    }
}
