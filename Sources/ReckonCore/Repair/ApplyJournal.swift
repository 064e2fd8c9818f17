import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One apply run's folder in the state folder: `apply/<run>/plan.json` (the
/// plan carried out), `apply/<run>/journal.jsonl` (one JSON line per step,
/// written and flushed before and after each), and the backups in
/// `backups/<run>/<side>/<path>`.
final class ApplyJournal {
    let stateDir: URL
    let run: String
    private let fd: Int32
    private var lines = 0
    /// Where a test stops the process.
    private let checkpoints: Checkpoints
    /// Whether a line could not be written: no write may follow.
    private(set) var broken = false
    /// Why the journal broke: its path and the system's words.
    private(set) var failure: OutputError?

    static func folder(_ stateDir: URL, run: String) -> URL { stateDir.appendingPathComponent("apply/\(run)") }
    static func journalURL(_ stateDir: URL, run: String) -> URL { folder(stateDir, run: run).appendingPathComponent("journal.jsonl") }

    /// `checkpoints`: where a test stops the process, after each step recorded.
    init(stateDir: URL, run: String, plan: Data, planSHA256: String, resuming: Bool, checkpoints: Checkpoints) throws(OutputError) {
        self.checkpoints = checkpoints
        self.stateDir = stateDir
        self.run = run
        let folder = Self.folder(stateDir, run: run)
        if !resuming { try AtomicFile.write(plan, to: folder.appendingPathComponent("plan.json"), mode: 0o600) }
        let url = Self.journalURL(stateDir, run: run)
        fd = open(url.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
        guard record(["event": .string(resuming ? "resume" : "start"), "run": .string(run), "plan": .string(planSHA256)]) else {
            close(fd)
            throw OutputError(path: url.path, reason: AtomicFile.lastError())
        }
    }

    deinit { close(fd) }

    /// Appends one step and flushes it to disk; false when it could not be.
    /// `RECKON_TEST_STOP_AT=journal:N` kills the process right after line N.
    @discardableResult
    func record(_ fields: [String: JSONValue]) -> Bool {
        guard !broken else { return false }
        var line = JSONWriter.data(.object(fields), pretty: false)
        line.append(0x0A)
        let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == line.count, fsync(fd) == 0 else {
            broken = true
            failure = OutputError(path: Self.journalURL(stateDir, run: run).path, reason: AtomicFile.lastError())
            return false
        }
        lines += 1
        checkpoints.at("journal:\(lines)")
        return true
    }

    /// Where a file's backup goes, relative to the state folder.
    func backupPath(side: String, path: String) -> String { "backups/\(run)/\(side)/\(path)" }

    /// Copies `data` (a file about to be replaced) to its backup, reads the
    /// copy back, and checks its size and SHA-256; returns the backup's path
    /// inside the state folder. A file backed up twice in one run (resumed,
    /// or an index read again) keeps its first backup when the bytes are the
    /// same, and gets a second one (`<path>.<12 digits of its SHA-256>`) when not.
    /// Backups are private: files 0600 in folders 0700.
    func backUp(_ data: Data, side: String, path: String) throws(OutputError) -> String {
        let sha256 = SHA256.hex(of: data)
        var relative = backupPath(side: side, path: path)
        if let existing = try? readRegularFile(atPath: stateDir.appendingPathComponent(relative).path, limit: 1 << 30) {
            if SHA256.hex(of: existing) == sha256 { return relative }
            relative += "." + sha256.prefix(12)
        }
        let url = stateDir.appendingPathComponent(relative)
        try AtomicFile.makeFolder(url.deletingLastPathComponent())
        for folder in [stateDir.appendingPathComponent("backups"), url.deletingLastPathComponent()] { chmod(folder.path, 0o700) }
        try AtomicFile.write(data, to: url, mode: 0o600)
        let copy: Data
        do {
            copy = try readRegularFile(atPath: url.path, limit: Int64(data.count) + 1)
        } catch {
            throw OutputError(path: url.path, reason: "the copy cannot be read back (\(error.message))")
        }
        guard copy.count == data.count, SHA256.hex(of: copy) == sha256 else {
            throw OutputError(path: url.path, reason: "the copy read back is not the file (\(copy.count) of \(counted(data.count, "byte")))")
        }
        guard
            record([
                "event": .string("backup"), "side": .string(side), "path": .string(path), "backup": .string(relative),
                "sha256": .string(sha256)
            ])
        else {
            throw OutputError(path: Self.journalURL(stateDir, run: run).path, reason: "the journal cannot be written")
        }
        return relative
    }

    // MARK: - Runs in a state folder

    /// Every line of a run's journal; nil when it has none.
    static func events(_ stateDir: URL, run: String) -> [[String: JSONValue]]? {
        guard let data = try? readRegularFile(atPath: journalURL(stateDir, run: run).path, limit: 1 << 30) else { return nil }
        return data.split(separator: 0x0A).compactMap { line in
            if case .object(let fields)? = try? JSONValue.parse(Data(line)) { fields } else { nil }
        }
    }

    /// Removes the temporary files a killed run left in the state folder,
    /// with a note for each: those of the plan's sides' baselines and their
    /// agreement, and any under `apply/` and `backups/`, reckon's own.
    /// Nothing else: a side (`sides`, real paths) is never walked into.
    static func removeLeftovers(_ stateDir: URL, plan: Plan, sides: [String]) -> [RunNote] {
        let ownFiles = plan.sides.map { Baseline.url(in: stateDir, side: $0.name) } + [Agreement.url(in: stateDir, remote: plan.side(.remote).name)]
        let ownNames = ownFiles.map { "." + $0.lastPathComponent + "." }
        let baselines = ((try? FileManager.default.contentsOfDirectory(atPath: stateDir.path)) ?? []).sorted().filter { name in
            ownNames.contains { name.hasPrefix($0) } && AtomicFile.isLeftover(name)
                && FileKind(path: stateDir.appendingPathComponent(name).path).isRegular
                && unlink(stateDir.appendingPathComponent(name).path) == 0
        }
        let ownFolders = ["apply", "backups"].flatMap { folder in
            AtomicFile.removeLeftovers(under: stateDir.appendingPathComponent(folder), skipping: sides).map { folder + "/" + $0 }
        }
        return (baselines + ownFolders).map { .removedStateTemporary(path: $0) }
    }

    /// Every SHA-256 the journals in the state folder name: the bytes
    /// reckon wrote, or read before writing.
    static func knownContents(in stateDir: URL) -> Set<String> {
        var known: Set<String> = []
        for run in runs(in: stateDir) {
            for event in events(stateDir, run: run) ?? [] {
                for key in ["before", "after", "sha256"] { if case .string(let sha)? = event[key] { known.insert(sha) } }
            }
        }
        return known
    }

    /// Apply runs in the state folder, oldest first.
    static func runs(in stateDir: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: stateDir.appendingPathComponent("apply").path)) ?? []
        return names.filter { ExportFolder.runOrder($0) != nil }.sorted { ExportFolder.runOrder($0)! < ExportFolder.runOrder($1)! }
    }

    /// Whether a run's journal ends with its last step, or with an undo.
    static func isFinished(_ events: [[String: JSONValue]]) -> Bool {
        events.last?["event"] == .string("end") || events.last?["event"] == .string("undone")
    }

    /// The newest run of this plan, and whether it finished.
    static func latestRun(in stateDir: URL, planSHA256: String) -> (run: String, finished: Bool)? {
        for run in runs(in: stateDir).reversed() {
            // A run killed before its first line wrote nothing: it is no run.
            guard let events = events(stateDir, run: run), events.first?["plan"] == .string(planSHA256) else { continue }
            return (run, isFinished(events))
        }
        return nil
    }

    /// A new run's id: its UTC start time, numbered when that second already has one.
    static func newRun(in stateDir: URL, at time: Timestamp) -> String {
        let base = ExportFolder.runName(time)
        var name = base
        var number = 1
        while FileKind(path: folder(stateDir, run: name).path) != .missing
            || FileKind(path: stateDir.appendingPathComponent("backups/\(name)").path) != .missing
        {
            number += 1
            name = "\(base)-\(number)"
        }
        return name
    }

    /// Removes the journals and backups of finished runs beyond the newest
    /// `keep`; an interrupted run is kept for `--resume` or `undo`.
    static func prune(_ stateDir: URL, keep: Int, current: String) {
        let finished = runs(in: stateDir).filter { run in run == current || events(stateDir, run: run).map(isFinished) == true }
        for run in finished.dropLast(keep) where run != current {
            try? FileTree.remove(stateDir.appendingPathComponent("backups/\(run)").path)
            try? FileTree.remove(folder(stateDir, run: run).path)
        }
    }
}

/// The plans `reckon plan` wrote for a state folder, by SHA-256, in
/// `plans/<sha256>`: apply carries out only a plan recorded there, so a
/// plan.json changed after it was made, in any byte, is refused.
package enum PlanRecords {
    /// How many records are kept, newest first.
    static let kept = 100

    static func url(_ stateDir: URL, sha256: String) -> URL { stateDir.appendingPathComponent("plans/\(sha256)") }

    /// Records `plan`'s bytes as a plan made for `stateDir`, and lets go of the oldest records beyond `kept`.
    package static func record(_ plan: Data, stateDir: URL) throws(OutputError) {
        try AtomicFile.write(Data(), to: url(stateDir, sha256: SHA256.hex(of: plan)), mode: 0o600)
        let folder = stateDir.appendingPathComponent("plans")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.count == 64 }
        guard names.count > kept else { return }
        func modified(_ name: String) -> Int {
            var info = stat()
            return lstat(folder.appendingPathComponent(name).path, &info) == 0 ? info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec : 0
        }
        for name in names.map({ ($0, modified($0)) }).sorted(by: { ($0.1, $0.0) > ($1.1, $1.0) }).dropFirst(kept).map(\.0) {
            unlink(folder.appendingPathComponent(name).path)
        }
    }

    /// Whether `reckon plan` recorded these bytes for `stateDir`.
    static func isRecorded(_ plan: Data, stateDir: URL) -> Bool {
        FileKind(path: url(stateDir, sha256: SHA256.hex(of: plan)).path).isRegular
    }
}
