import CLinux
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where exports land and how they are made visible: built in a staging
/// folder, flushed, then renamed into place, so a run killed at any moment
/// leaves the previous export whole.
public enum ExportFolder {
    static let stagingPattern = #"^\.reckon-(export|run)-([0-9]+)\.partial$"#
    static let runPattern = #"^[0-9]{8}T[0-9]{6}Z(-[0-9]+)?$"#
    /// The stable name of the newest run folder.
    public static let latestName = "latest"

    /// Creates `dir` if needed and an empty staging folder in it, after
    /// removing staging folders left by runs that died.
    public static func makeStaging(in dir: URL, kind: String) throws(OutputError) -> URL {
        try AtomicFile.makeFolder(dir)
        removeStaleStaging(in: dir)
        let staging = dir.appendingPathComponent(".reckon-\(kind)-\(getpid()).partial")
        try? FileManager.default.removeItem(at: staging)
        try AtomicFile.makeFolder(staging)
        return staging
    }

    static func removeStaleStaging(in dir: URL) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [] {
            guard let match = name.firstMatch(of: try! Regex(stagingPattern)), let pid = Int32(match.output[2].substring ?? "") else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(at: dir.appendingPathComponent(name))
            }
        }
    }

    /// Moves everything in `staging` into `dir`, each file by one rename and
    /// the Markdown folder by one atomic exchange; the manifest goes last.
    public static func publishInPlace(_ staging: URL, to dir: URL) throws(OutputError) {
        try flush(staging)
        let names = [Exporter.jsonName, Exporter.zipName, Exporter.markdownName, Exporter.manifestName]
        for name in names where FileKind(path: staging.appendingPathComponent(name).path) != .missing {
            let from = staging.appendingPathComponent(name).path
            let to = dir.appendingPathComponent(name).path
            if FileKind(path: to) == .directory {
                guard reckon_rename_exchange(from, to) == 0 else { throw OutputError(path: to, reason: AtomicFile.lastError()) }
            } else {
                guard rename(from, to) == 0 else { throw OutputError(path: to, reason: AtomicFile.lastError()) }
            }
        }
        try flush(dir)
        try? FileManager.default.removeItem(at: staging)
    }

    /// Renames `staging` to `dir/<UTC start time>`, points `latest` at it and
    /// keeps the newest `keep` run folders, deleting only folders reckon made
    /// (its naming and its manifest inside). Returns the run folder and the
    /// names of the folders removed.
    public static func publishRun(_ staging: URL, in dir: URL, startedAt: Timestamp, keep: Int?) throws(OutputError) -> (URL, [String]) {
        try flush(staging)
        let latest = dir.appendingPathComponent(latestName)
        switch FileKind(path: latest.path) {
        case .missing, .link: break
        case let other:
            throw OutputError(path: latest.path, reason: "\(other.description) stands where reckon keeps its link to the newest export; it was left as it is")
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
        guard symlink(name, link.path) == 0, rename(link.path, latest.path) == 0 else {
            throw OutputError(path: latest.path, reason: AtomicFile.lastError())
        }
        try flush(dir)
        var removed: [String] = []
        if let keep {
            for old in runFolders(in: dir).dropFirst(keep) where old != name {
                try? FileManager.default.removeItem(at: dir.appendingPathComponent(old))
                removed.append(old)
            }
        }
        return (run, removed)
    }

    /// Run folders reckon made in `dir`, newest first: named by a UTC time
    /// and holding reckon's manifest.
    public static func runFolders(in dir: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { name in
            guard name.wholeMatch(of: try! Regex(runPattern)) != nil,
                  FileKind(path: dir.appendingPathComponent(name).path) == .directory,
                  let data = try? readRegularFile(atPath: dir.appendingPathComponent(name).appendingPathComponent(Exporter.manifestName).path, limit: 1 << 30),
                  case .object(let manifest)? = try? JSONValue.parse(data)
            else { return false }
            return manifest["generator"] == .string("reckon")
        }.sorted { runOrder($0)! > runOrder($1)! }
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
    public static func runName(_ time: Timestamp) -> String {
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
