import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Downloading a remote's memo files into its cache: early, while
/// `memos/` is listed, then what the listing says is missing or changed.
extension RcloneStore.Remote {
    /// The copy started before `memos/` was listed, and the names it was given.
    struct Early {
        var names: Set<String> = []
        var copy: Pending<Rclone.Failure?>?
    }

    /// Starts downloading into the staging folder, on another core while
    /// `memos/` is being listed, the memo files `index.json` names that the
    /// cache cannot hold as they are now: on a first fill (no index from
    /// a last run) every one it does not hold, else those whose index
    /// entry changed since. Each is kept later only if it is what the
    /// listing lists (size, time, MD5); `keeper` is told each one copied.
    func fetchEarly(
        record: Pending<([String: RcloneStore.CachedFile], Set<String>)>, listing: Pending<Result<[Rclone.Entry], Rclone.Failure>>,
        keeper: RcloneStore.Keeper
    ) -> Early {
        var names: [String] = []
        let clean: Bool
        if let previousIndex {
            clean = IndexReader.forEachClean(atPath: indexCopy.path) { entry in
                if previousIndex[entry.id] != entry { names.append(entry.spelledAs.fileName(of: entry.id)) }
            }
        } else {
            let (cached, _) = record.wait()
            clean = IndexReader.forEachClean(atPath: indexCopy.path) { entry in
                let name = entry.spelledAs.fileName(of: entry.id)
                if cached[name] == nil { names.append(name) }
            }
        }
        guard clean, !names.isEmpty, (try? AtomicFile.makeFolder(staging)) != nil else { return Early() }
        // A first fill asks for most of the folder: rclone lists it once rather than looking up each name.
        let fill = previousIndex == nil
        // A test that pauses after the listing (to change the remote there) gets the fill after its pause.
        let checkpoints = process.checkpoints
        let pausing = fill && checkpoints.pauses(at: "rclone-listed")
        let copy = Pending(on: process.threads) { [downloader, memos, staging, names, checkpoints] () -> Rclone.Failure? in
            if pausing {
                _ = listing.wait()
                checkpoints.wait(at: "rclone-listed")
            }
            // Sizes are known only from the listing, so this copy stops after 64 KiB a file on
            // average: a huge file is never pulled whole. A failure or a stop costs only time, as
            // whatever is not staged whole is downloaded after the listing, over-large files excepted.
            do throws(Rclone.Failure) {
                _ = try downloader.copy(
                    from: memos, files: names, into: staging, checksum: false, maxTransfer: Int64(names.count) << 16, traverse: fill,
                    childRecord: staging.appendingPathComponent(Self.childRecordName), copied: keeper.copied)
                return nil
            } catch {
                return error
            }
        }
        return Early(names: Set(names), copy: copy)
    }

    /// Brings the cache up to the listing: downloads the memo files whose
    /// listed size, time or MD5 differ from what is cached (or whose
    /// cached bytes changed), checks each against the listing, and
    /// forgets cached files no longer listed.
    func fetch(
        _ entries: [Rclone.Entry], into listed: RcloneStore.Listed, cached: [String: RcloneStore.CachedFile], stampsKept: Set<String>,
        early: Early, keeper: RcloneStore.Keeper, sizeLimit: Int64
    ) -> RcloneStore.Listed {
        var listed = listed
        var cached = cached
        let memosFolder = cacheFolder.appendingPathComponent("memos")
        let memoFiles = Self.memoFiles(entries, sizeLimit: sizeLimit, listed: &listed)
        var wanted: [Rclone.Entry] = []
        var fromCache = 0
        let memosPath = memosFolder.path + "/"
        for entry in memoFiles {
            if let known = cached[entry.name], known.matches(entry),
                stampsKept.contains(entry.name) || known.isKept(atPath: memosPath + entry.name)
            {
                fromCache += 1
            } else {
                wanted.append(entry)
            }
        }
        // Only files reckon downloaded (named in its fingerprints) are ever removed from the cache.
        let listedNames = Set(memoFiles.map(\.name))
        for name in cached.keys where !listedNames.contains(name) {
            let file = memosFolder.appendingPathComponent(name)
            if FileKind(path: file.path).isRegular { try? FileManager.default.removeItem(at: file) }
        }
        cached = cached.filter { listedNames.contains($0.key) }

        // (A first fill's early copy pauses a test by itself, after the listing; a nightly run's
        // pauses once its early copy is done, so that the test changes the remote after it.)
        if early.copy == nil || previousIndex != nil {
            if process.checkpoints.pauses(at: "rclone-listed") { _ = early.copy?.wait() }
            process.checkpoints.wait(at: "rclone-listed")
        }
        // Files rclone reports copied are checked and moved into the cache on another core from
        // now on, while the rest download; those it finished before are checked now.
        keeper.start(Dictionary(wanted.map { ($0.name, $0) }) { first, _ in first })
        _ = early.copy?.wait()
        var kept = keeper.finish()
        var fetched = 0
        if !wanted.isEmpty {
            let failure = download(wanted, kept: kept, early: early, keeper: keeper, memoCount: memoFiles.count)
            kept = keeper.finish()
            // Each file is checked against the listing before it replaces a cached one.
            for entry in wanted {
                guard let file = kept[entry.name] ?? take(entry, failure: failure, into: memosFolder, listed: &listed) else { continue }
                cached[entry.name] = file
                fetched += 1
            }
            // An older copy of a file that could not be downloaded is not the remote's file: it is never read.
            for name in Array(listed.unfetched.keys) + listed.changed.keys {
                try? FileManager.default.removeItem(at: memosFolder.appendingPathComponent(name))
                cached[name] = nil
            }
        }
        try? FileTree.remove(staging.path)
        let record = Pending(on: process.threads) { [cached, fingerprintsURL] in
            (try? AtomicFile.write(RcloneStore.CachedFile.data(cached), to: fingerprintsURL)) != nil
        }
        recordWrite.withLock { $0 = record }
        listed.cacheUse = CacheUse(fetched: fetched, fromCache: fromCache, temporary: source.cacheIsTemporary)
        return listed
    }

    /// The listed files a memo folder reads (`<uuid>.json`), those over the
    /// size limit left out and said so in `listed`.
    private static func memoFiles(_ entries: [Rclone.Entry], sizeLimit: Int64, listed: inout RcloneStore.Listed) -> [Rclone.Entry] {
        var memoFiles: [Rclone.Entry] = []
        for entry in entries where entry.name.hasSuffix(".json") && MemoID(entry.name.dropLast(5)) != nil {
            guard entry.size <= sizeLimit else {
                listed.oversized[entry.name] = "is larger than the limit of \(counted(sizeLimit, "byte")), so it is neither kept nor read"
                continue
            }
            memoFiles.append(entry)
        }
        return memoFiles
    }

    /// Downloads into the staging folder the wanted files neither kept nor
    /// fetched early as listed; the failure of the copy, if it failed (it
    /// still leaves what it fetched: each file is judged on its own).
    private func download(_ wanted: [Rclone.Entry], kept: [String: RcloneStore.CachedFile], early: Early, keeper: RcloneStore.Keeper, memoCount: Int)
        -> Rclone.Failure?
    {
        // A file fetched early is kept when it is the listed one; every other is fetched now.
        let remaining = wanted.filter { entry in
            guard kept[entry.name] == nil else { return false }
            guard early.names.contains(entry.name) else { return true }
            let staged = staging.appendingPathComponent(entry.name).path
            if Self.isStaged(atPath: staged, as: entry) { return false }
            unlink(staged)
            return true
        }
        do {
            try AtomicFile.makeFolder(staging)
            if !remaining.isEmpty {
                _ = try downloader.copy(
                    from: memos, files: remaining.map(\.name), into: staging, checksum: false,
                    traverse: remaining.count * 8 >= memoCount,
                    childRecord: staging.appendingPathComponent(Self.childRecordName), copied: keeper.copied)
            }
        } catch let error as Rclone.Failure {
            return error
        } catch {
            return Rclone.Failure(.local, "the staging folder cannot be made", lastLine: errorWords(error))
        }
        return nil
    }

    /// Moves one staged file into the cache when it is the listed one (its
    /// size and MD5), and says in `listed` why when it is not; nil then.
    private func take(_ entry: Rclone.Entry, failure: Rclone.Failure?, into memosFolder: URL, listed: inout RcloneStore.Listed) -> RcloneStore
        .CachedFile?
    {
        let staged = staging.appendingPathComponent(entry.name)
        let rcloneError = failure?.objectErrors[entry.name]
        guard let bytes = try? Data(contentsOf: staged) else {
            if let rcloneError, Rclone.saysTheSourceChanged(rcloneError) {
                listed.changed[entry.name] = "while it was being read (rclone: \(rcloneError))"
            } else {
                listed.unfetched[entry.name] =
                    rcloneError.map { "rclone: \($0)" }
                    ?? failure.map { "it was not downloaded: \($0.message)" }
                    ?? "rclone did not download it; it may have been deleted since the listing"
            }
            return nil
        }
        guard Int64(bytes.count) == entry.size, entry.md5.map({ $0 == SHA256.md5Hex(of: bytes) }) ?? true else {
            if let failure, failure.wasStopped, rcloneError == nil {
                // A call that was stopped may leave a file half written.
                listed.unfetched[entry.name] = "it was not downloaded whole: \(failure.message)"
            } else {
                listed.changed[entry.name] =
                    Int64(bytes.count) == entry.size
                    ? "after it was listed (its MD5 is not the listed one)"
                    : "after it was listed (listed as \(entry.size) bytes, \(bytes.count) bytes downloaded)"
            }
            return nil
        }
        let target = memosFolder.appendingPathComponent(entry.name).path
        guard rename(staged.path, target) == 0 else {
            listed.unfetched[entry.name] = "it cannot be put in the cache: \(String(cString: strerror(errno)))"
            return nil
        }
        var kept = RcloneStore.CachedFile(entry, sha256: SHA256.hex(of: bytes))
        kept.stamp = RcloneStore.CachedFile.stamp(atPath: target)
        return kept
    }
}
