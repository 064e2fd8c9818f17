import CLinux
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where exports land and how they are made visible: built in a staging
/// folder, flushed, then renamed into place, so a run killed at any moment
/// leaves the previous export whole.
package enum ExportFolder {
    static let stagingPattern = #"^\.reckon-(export|run|restore)-([0-9]+)\.partial$"#
    static let runPattern = #"^[0-9]{8}T[0-9]{6}Z(-[0-9]+)?$"#
    /// Where `path` lies inside a staging folder: the rest of its path
    /// (empty for the staging folder itself); nil when it lies in none. Its
    /// name holds a process id, so messages name the export's own folder
    /// instead.
    static func insideStaging(_ path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard let staging = parts.firstIndex(where: { $0.wholeMatch(of: try! Regex(stagingPattern)) != nil }) else { return nil }
        return parts[(staging + 1)...].joined(separator: "/")
    }

    /// Why writing failed, when it failed on a file in a staging folder (a
    /// zip's error gives its path before a colon): the file's path inside
    /// the export (empty for the folder itself) and the reason; nil for any
    /// other error.
    package static func stagingFailure(_ error: any Error) -> (file: String, reason: String)? {
        var parts = fileErrorParts(error)
        if let archive = error as? ArchiveError, let colon = archive.message.range(of: ": ") {
            parts = (String(archive.message[..<colon.lowerBound]), String(archive.message[colon.upperBound...]))
        }
        guard let (path, reason) = parts, let path, let file = insideStaging(path) else { return nil }
        return (file, reason)
    }

    /// The stable name of the newest run folder.
    package static let latestName = "latest"

    /// Where a pipeline run builds its export: a staging folder in `dir`,
    /// the runs' folder. Refuses at once when `dir/latest` is not a link,
    /// which the run would have to replace.
    package static func makeRunStaging(in dir: URL, checkpoints: Checkpoints = Checkpoints()) throws(OutputError) -> URL {
        try checkLatest(in: dir)
        return try makeStaging(in: dir, kind: "run", checkpoints: checkpoints)
    }

    /// Where `reckon export` builds an export to `dir` (or `reckon restore`
    /// a memo folder, `kind` "restore"): a hidden folder beside it (in its
    /// parent, so one rename publishes it).
    package static func makeStaging(beside dir: URL, kind: String = "export", checkpoints: Checkpoints = Checkpoints()) throws(OutputError) -> URL {
        try makeStaging(in: dir.deletingLastPathComponent(), kind: kind, checkpoints: checkpoints)
    }

    /// Creates `folder` if needed and an empty staging folder in it, after
    /// removing the staging folders of reckon runs that died there.
    private static func makeStaging(in folder: URL, kind: String, checkpoints: Checkpoints) throws(OutputError) -> URL {
        try AtomicFile.makeFolder(folder)
        removeStaleStaging(in: folder)
        let staging = folder.appendingPathComponent(".reckon-\(kind)-\(getpid()).partial")
        if FileKind(path: staging.path) != .missing { try FileTree.remove(staging.path) }
        guard mkdir(staging.path, 0o755) == 0 else { throw OutputError(path: staging.path, reason: AtomicFile.lastError()) }
        checkpoints.at("staging-made")
        return staging
    }

    /// Removes the staging folders of reckon runs that died: a folder (not
    /// a link) with reckon's staging name whose process is gone, holding
    /// nothing but what reckon writes in one. A folder of the user's that
    /// only looks like one is left alone. Also removes the temporary file
    /// of a record of known runs (`KnownRuns`) whose writer died.
    static func removeStaleStaging(in dir: URL) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [] {
            let path = dir.appendingPathComponent(name).path
            if name.hasPrefix("." + KnownRuns.fileName + "."), AtomicFile.isLeftover(name), FileKind(path: path).isRegular {
                unlink(path)
                continue
            }
            guard let pid = stagingProcess(name), pid != getpid(), PrivateFolder.processIsGone(pid),
                FileKind(path: path) == .directory, holdsOnlyStagedFiles(path)
            else { continue }
            try? FileTree.remove(path)
        }
    }

    /// Whether a folder holds only what reckon writes in a staging folder:
    /// files ending `.json`, `.md` or `.zip`, temporary files (`.tmp`), the
    /// zip's parts (`.zip-part-N`, and libzip's temporary copies of them,
    /// with a suffix), and the folders `markdown/` and `memos/` holding such files.
    static func holdsOnlyStagedFiles(_ path: String) -> Bool {
        guard let walk = FileManager.default.enumerator(atPath: path) else { return false }
        for case let relative as String in walk {
            switch FileKind(path: path + "/" + relative) {
            case .directory: guard relative == "markdown" || relative == "memos" else { return false }
            case .regular:
                guard [".json", ".md", ".zip", ".tmp"].contains(where: relative.hasSuffix) || relative.hasPrefix(ZipBuilder.partPrefix) else {
                    return false
                }
            default: return false
            }
        }
        return true
    }

    /// The process named by a staging folder's name (`.reckon-export-<pid>.partial`), if it is one.
    static func stagingProcess(_ name: String) -> pid_t? {
        guard let match = name.wholeMatch(of: try! Regex(stagingPattern)), let text = match.output[2].substring else { return nil }
        return pid_t(text)
    }

    /// The names of the steps of `reckon export`, in order, at which
    /// `RECKON_TEST_STOP_AT` can kill it; the tests kill it at each one.
    package static let exportSteps = [
        "checked", "staging-made", "memos-written", "zip-written", "manifest-written",
        "flushed", "published", "removing-old", "done"
    ]

    /// Publishes the export built in `staging` as `dir` in one step: a
    /// rename when `dir` is absent, else an atomic exchange of the two
    /// folders (`renameat2` with `RENAME_EXCHANGE`), after which the earlier
    /// export, now under the staging name, is removed. A run killed at any
    /// moment leaves `dir` holding the old export or the new one, whole.
    /// `dir` keeps its permissions. The caller has checked that `dir` holds
    /// nothing but an earlier export (`inTheWay(of:)`).
    package static func publish(_ staging: URL, as dir: URL, checkpoints: Checkpoints = Checkpoints()) throws(OutputError) {
        var info = stat()
        let exists = lstat(dir.path, &info) == 0
        if exists {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw OutputError(path: dir.path, reason: "is no longer a folder; nothing was published") }
            chmod(staging.path, info.st_mode & 0o7777)
        }
        try flush(staging)
        checkpoints.at("flushed")
        if exists {
            guard reckon_rename_exchange(staging.path, dir.path) == 0 else { throw OutputError(path: dir.path, reason: publishError()) }
        } else {
            guard rename(staging.path, dir.path) == 0 else { throw OutputError(path: dir.path, reason: publishError()) }
        }
        try flush(dir.deletingLastPathComponent())
        checkpoints.at("published")
        guard exists else { return }
        do throws(OutputError) {
            try FileTree.remove(staging.path, step: "removing-old", checkpoints: checkpoints)
        } catch {
            throw OutputError(
                path: error.path,
                reason:
                    "\(error.reason); the new export is in \(dir.path), but the earlier one, set aside in \(staging.path), could not all be removed")
        }
    }

    /// Why renaming onto the target failed; EBUSY is a mount point (or a
    /// folder in use), which a rename can never replace.
    static func publishError() -> String {
        guard errno == EBUSY else { return AtomicFile.lastError() }
        return "it is a mount point (or in use), and reckon publishes an export only by replacing the folder whole; export into a folder inside it"
    }

    /// Refuses a `latest` in `dir` that is not a link: reckon replaces only
    /// the link it made, never a file or folder a person put there.
    static func checkLatest(in dir: URL) throws(OutputError) {
        let latest = dir.appendingPathComponent(latestName)
        switch FileKind(path: latest.path) {
        case .missing, .link: return
        case let other:
            throw OutputError(
                path: latest.path,
                reason: "\(other.description) stands where reckon keeps its link to the newest run; reckon replaces only a link, so move it away")
        }
    }

    /// Renames `staging` to `dir/<UTC start time>`, points `latest` at it and
    /// keeps the newest `keep` run folders, deleting only folders reckon made
    /// (its naming and its manifest inside). With `keepingLastBefore` (the
    /// start of the first run a deletion alarm sounded in), the newest run
    /// folder made before that stays too, whatever `keep` says: the last
    /// export made before the memos vanished. Returns the run folder and
    /// what retention did.
    package static func publishRun(
        _ staging: URL, in dir: URL, startedAt: Timestamp, keep: Int?,
        keepingLastBefore alarm: Timestamp? = nil, checkpoints: Checkpoints = Checkpoints()
    ) throws(OutputError) -> (URL, Retention) {
        do throws(OutputError) {
            try checkLatest(in: dir)
            try flush(staging)
        } catch {
            try? FileTree.remove(staging.path)
            throw error
        }
        // Two runs in one second get -2, -3 …, always above every folder of that second.
        let base = runName(startedAt)
        let existing = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { runOrder($0)?.base == base }
        let number = (existing.compactMap { runOrder($0)?.number }.max() ?? 0) + 1
        let name = number == 1 ? base : "\(base)-\(number)"
        let run = dir.appendingPathComponent(name)
        guard rename(staging.path, run.path) == 0 else { throw OutputError(path: run.path, reason: AtomicFile.lastError()) }
        let link = dir.appendingPathComponent(".\(latestName).\(getpid()).tmp")
        unlink(link.path)
        guard symlink(name, link.path) == 0, rename(link.path, dir.appendingPathComponent(latestName).path) == 0 else {
            let reason = AtomicFile.lastError()
            unlink(link.path)
            throw OutputError(
                path: dir.appendingPathComponent(latestName).path,
                reason: "\(reason); the run's export is whole in \(run.path), but \(latestName) does not point at it")
        }
        try flush(dir)
        var retention = Retention()
        if let keep {
            // A run folder goes only when it holds exactly what its manifest
            // lists (a file a person put in it keeps the whole folder), and
            // all of it can be deleted: never part of it.
            let folders = runFolders(in: dir)
            let lastBeforeAlarm = alarm.flatMap { time in folders.first { $0 != name && runOrder($0)!.base < runName(time) } }
            for old in folders.dropFirst(keep) where old != name && old != lastBeforeAlarm {
                let folder = dir.appendingPathComponent(old)
                if let kept = inTheWay(of: folder) ?? removalBlocker(of: folder) {
                    retention.kept.append((old, kept.path.isEmpty ? kept.reason : "\(kept.path): \(kept.reason)"))
                    continue
                }
                do throws(OutputError) {
                    try FileTree.remove(folder.path, step: "retention", last: Exporter.manifestName, checkpoints: checkpoints)
                    retention.removed.append(old)
                } catch {
                    let inside = error.path.hasPrefix(folder.path + "/") ? String(error.path.dropFirst(folder.path.count + 1)) : error.path
                    retention.failures.append(
                        OutputError(
                            path: folder.path,
                            reason:
                                "retention could not delete \(inside) (\(error.reason)), so this old export is removed only in part; the next run tries again"
                        ))
                }
            }
        }
        return (run, retention)
    }

    /// What retention did with the run folders beyond `keep`.
    package struct Retention: Sendable {
        /// The folders removed.
        package var removed: [String] = []
        /// The folders kept whole though `keep` would remove them, each with why.
        package var kept: [(name: String, why: String)] = []
        /// Removals that stopped part of the way.
        package var failures: [OutputError] = []
    }

    /// Run folders reckon made in `dir`, newest first: named by a UTC time
    /// and holding reckon's manifest.
    package static func runFolders(in dir: URL) -> [String] { runs(in: dir).map(\.name) }

    /// Run folders reckon made in `dir`, newest first, each with the
    /// pipeline its manifest names. A manifest whose identity is the one
    /// `KnownRuns` recorded is not read again; any other is read whole, so a
    /// damaged manifest makes no run folder.
    package static func runs(in dir: URL) -> [RunFolder] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        let known = KnownRuns.read(in: dir)
        // Only the two names are kept of what is read: a 100k export's manifest is 38 MB.
        let parser = MemoParser()
        // One buffer for every manifest: its pages are made once.
        var data = Data()
        return names.compactMap { name -> RunFolder? in
            guard runOrder(name) != nil, let folder = OpenFolder(dir.appendingPathComponent(name).path) else { return nil }
            let identity = FileIdentity(of: Exporter.manifestName, in: folder)
            if let identity, let run = known[name], run.manifest == identity { return run }
            guard (try? readRegularFile(atPath: Exporter.manifestName, in: folder, limit: 1 << 30, into: &data)) != nil,
                let names = parser.manifestNames(data), names.generator == "reckon"
            else { return nil }
            // A manifest changed while it was read: its identity proves nothing.
            let unchanged = identity != nil && FileIdentity(of: Exporter.manifestName, in: folder) == identity
            return RunFolder(name: name, pipeline: names.pipeline, manifest: unchanged ? identity : nil)
        }.sorted { runOrder($0.name)! > runOrder($1.name)! }
    }

    /// A run folder's time and its number within that second, for ordering.
    static func runOrder(_ name: String) -> RunOrder? {
        guard name.wholeMatch(of: try! Regex(runPattern)) != nil else { return nil }
        let parts = name.split(separator: "-", maxSplits: 1)
        return RunOrder(base: String(parts[0]), number: parts.count > 1 ? Int(parts[1]) ?? 1 : 1)
    }

    struct RunOrder: Comparable {
        var base: String
        var number: Int
        static func < (a: RunOrder, b: RunOrder) -> Bool { (a.base, a.number) < (b.base, b.number) }
    }

    /// `20261130T084238Z`: sortable, and safe on every file system.
    package static func runName(_ time: Timestamp) -> String {
        String(time.iso8601.prefix(19)).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "") + "Z"
    }

    /// Flushes the file system holding `url`, so renames publish data that is on disk.
    static func flush(_ url: URL) throws(OutputError) {
        let fd = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
        defer { close(fd) }
        guard reckon_syncfs(fd) == 0 else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
    }
}
