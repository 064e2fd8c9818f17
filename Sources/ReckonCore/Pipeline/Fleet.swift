import Foundation
import Synchronization

/// Many pipeline definitions run together (`reckon run DEF... | FOLDER`):
/// every one is loaded and checked before any of them runs, so one bad
/// definition, two with one name, or two that would write into one folder
/// stop the whole fleet with nothing run.
package struct Fleet: Sendable {
    /// One definition and the file it came from, as the command line spells it.
    package struct Member: Sendable {
        package var file: String
        package var definition: PipelineDefinition
    }

    /// Every definition, in name order (by the names' UTF-8 bytes).
    package private(set) var members: [Member]

    /// Loads the definitions `paths` name: a file is one definition; a
    /// folder stands for every `*.json` directly in it whose name does not
    /// start with a dot and that is not a subfolder, sorted by name (other
    /// files and subfolders are not read; a link named `*.json` is refused,
    /// as links are never followed). Relative paths are taken from `base`. Every definition is
    /// validated and the fleet checked as a whole; every error is returned,
    /// and a fleet only when there is none.
    package static func load(
        _ paths: [String], from base: URL, environment: [String: String], process: ProcessSettings = ProcessSettings()
    ) -> Result<Fleet, Errors> {
        var members: [Member] = []
        var errors: [DefinitionError] = []
        for (file, url) in definitionFiles(paths, from: base, errors: &errors) {
            do {
                let definition = try PipelineDefinition.load(from: url, displayPath: file, environment: environment, process: process)
                try definition.checkOutputsOutsideSources(file: file)
                members.append(Member(file: file, definition: definition))
            } catch {
                errors.append(error)
            }
        }
        members.sort { utf8Precedes($0.definition.name, $1.definition.name) }
        errors += repeatedNames(members) + sharedFolders(members)
        return errors.isEmpty ? .success(Fleet(members: members)) : .failure(Errors(all: errors))
    }

    /// Every error found while loading a fleet.
    package struct Errors: Error {
        package var all: [DefinitionError]
    }

    /// The files `paths` name, each with the path shown for it.
    static func definitionFiles(_ paths: [String], from base: URL, errors: inout [DefinitionError]) -> [(String, URL)] {
        var files: [(String, URL)] = []
        var seen: [String: String] = [:]
        func add(_ shown: String, _ url: URL) {
            let real = realPath(url.path)
            if let earlier = seen[real] {
                let also = earlier == shown ? "" : " (also as \(earlier))"
                errors.append(DefinitionError(file: shown, message: "is given twice\(also); each definition runs once"))
                return
            }
            seen[real] = shown
            files.append((shown, url))
        }
        for path in paths {
            let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : base.appendingPathComponent(path).standardizedFileURL
            guard FileKind(path: url.path) == .directory else {
                add(path, url)
                continue
            }
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: url.path)
            } catch {
                errors.append(DefinitionError(file: path, message: "cannot be listed (\(errorWords(error)))"))
                continue
            }
            // Subfolders are skipped whatever their name; a link or special
            // file named *.json is kept, so loading it refuses it by name.
            let definitions = names.filter {
                $0.hasSuffix(".json") && !$0.hasPrefix(".") && FileKind(path: url.appendingPathComponent($0).path) != .directory
            }.sorted(by: utf8Precedes)
            if definitions.isEmpty {
                errors.append(DefinitionError(file: path, message: "holds no pipeline definition (no *.json file directly in it)"))
            }
            for name in definitions { add(joinPath(path, name), url.appendingPathComponent(name)) }
        }
        return files
    }

    /// Two definitions with one name: their reports, history and shard would be one.
    static func repeatedNames(_ members: [Member]) -> [DefinitionError] {
        var errors: [DefinitionError] = []
        for (earlier, member) in zip(members, members.dropFirst()) where earlier.definition.name == member.definition.name {
            errors.append(
                DefinitionError(
                    file: member.file, key: "name",
                    message:
                        "is '\(member.definition.name)', as in \(earlier.file); each pipeline needs a name of its own (without \"name\" it is 'pipeline')"
                ))
        }
        return errors
    }

    /// A folder one pipeline writes (reports, quarantine, state, export or
    /// cache) that is, or lies inside, a folder another writes, or inside
    /// another's source: the two would write over each other's files or
    /// into a source. Compared by real paths; one error per pair of files.
    static func sharedFolders(_ members: [Member]) -> [DefinitionError] {
        struct Use {
            var member: Int
            var key: String
            var shown: String
            var isSource: Bool
        }
        var uses: [String: [Use]] = [:]
        for (n, member) in members.enumerated() {
            for output in member.definition.outputFolders {
                uses[output.real, default: []].append(Use(member: n, key: output.key, shown: output.shown, isSource: false))
            }
            for side in [member.definition.local] + member.definition.remotes {
                guard let source = side.kind.localURL else { continue }
                uses[realPath(source.path), default: []].append(Use(member: n, key: "", shown: side.path, isSource: true))
            }
        }
        var errors: [DefinitionError] = []
        var reported: Set<[Int]> = []
        // First one folder written by both (told by the later file), then a
        // folder inside another's, so each pair is told by its plainest case.
        for sameFolder in [true, false] {
            for (n, member) in members.enumerated() {
                for output in member.definition.outputFolders {
                    for folder in sameFolder ? [output.real] : foldersAbove(output.real) {
                        for other in uses[folder] ?? [] where other.member != n && !(sameFolder && (other.isSource || other.member > n)) {
                            let pair = [min(n, other.member), max(n, other.member)]
                            guard !reported.contains(pair) else { continue }
                            reported.insert(pair)
                            let otherFile = members[other.member].file
                            let message =
                                if other.isSource {
                                    "is \(output.shown), inside the source folder \(other.shown) of \(otherFile); reckon never writes into a source"
                                } else if sameFolder {
                                    "is \(output.shown), which is also the '\(other.key)' of \(otherFile); each pipeline needs folders of its own"
                                } else {
                                    "is \(output.shown), inside the '\(other.key)' of \(otherFile) (\(other.shown)); each pipeline needs folders of its own"
                                }
                            errors.append(DefinitionError(file: member.file, key: output.key, message: message))
                        }
                    }
                }
            }
        }
        return errors
    }

    /// The folders above a real path, nearest first, `/` last.
    static func foldersAbove(_ path: String) -> [String] {
        Array(
            sequence(first: path) { folder in
                guard folder != "/", let slash = folder.lastIndex(of: "/") else { return nil }
                return slash == folder.startIndex ? "/" : String(folder[..<slash])
            }.dropFirst())
    }
}

extension PipelineDefinition {
    /// Refuses an `export.dir` that holds a run another pipeline exported
    /// (its manifest names another pipeline): this run's retention would
    /// delete it. What a fleet refuses before it runs, told from the runs
    /// already there, so two definitions run apart (two cron lines) are
    /// caught too. A run whose manifest names no pipeline (written before
    /// manifests named one) is taken as this pipeline's: the folder was
    /// used so until now, and is claimed by the first run that names it.
    /// Gives the run folders found, for the run to record (`KnownRuns`).
    package func checkExportFolderIsOwn(file: String) throws(DefinitionError) -> [RunFolder] {
        guard let export else { return [] }
        let runs = ExportFolder.runs(in: export.dir)
        guard let other = runs.first(where: { $0.pipeline.map { $0 != name } ?? false }) else { return runs }
        throw DefinitionError(
            file: file, key: "export.dir",
            message:
                "is \(export.path), which holds a run of the pipeline '\(other.pipeline!)' (\(joinPath(export.path, other.name))); each pipeline needs folders of its own, so nothing was run"
        )
    }

    /// Every folder the pipeline writes into, with the key that names it,
    /// as the definition spells it, and its real path.
    var outputFolders: [(key: String, shown: String, real: String)] {
        var folders: [(key: String, shown: String?, url: URL?)] = [
            ("reports.dir", reportPath, reportDir), ("quarantine.dir", quarantinePath, quarantineDir),
            ("state.dir", statePath, stateDir), ("export.dir", export?.path, export?.dir), ("metrics", metricsPath, metricsFile)
        ]
        for side in [local] + remotes {
            if let cache = side.kind.lastingCache { folders.append(("cache.dir", nil, cache)) }
        }
        return folders.compactMap { folder in
            folder.url.map { (folder.key, folder.shown ?? $0.path, realPath($0.path)) }
        }
    }
}

/// Which part of a fleet one machine runs (`--shard K/N`): the pipelines
/// whose name, hashed with plain FNV-1a 64 over its UTF-8 bytes, gives K
/// modulo N. A pipeline's shard depends on its name alone, so every
/// machine that is given the same fleet splits it the same way.
package struct FleetShard: Sendable, Equatable, CustomStringConvertible {
    /// K, from 0.
    package var index: UInt64
    /// N, at least 1.
    package var count: UInt64

    /// Reads `K/N`: whole numbers written in digits, N at least 1 and K below N.
    package init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let index = UInt64(parts[0]), let count = UInt64(parts[1]), count >= 1, index < count
        else { return nil }
        self.index = index
        self.count = count
    }

    /// Whether this shard runs the pipeline with this name.
    package func contains(_ name: String) -> Bool { Self.hash(name) % count == index }

    /// FNV-1a 64 of the name's UTF-8 bytes, byte by byte, with no length
    /// or marker added (unlike the baseline's field digests).
    package static func hash(_ name: String) -> UInt64 {
        var hash = FNV64()
        for byte in name.utf8 { hash.add(byte: byte) }
        return hash.value
    }

    package var description: String { "\(index)/\(count)" }
}

extension Published {
    /// The outcome as the exit code has it: trouble when an output could
    /// not be written, else the report's.
    package var fleetOutcome: Report.Outcome { failures.isEmpty ? report.outcome : .trouble }

    /// The outcome and what made it so, in a few words, for a fleet's one
    /// line per pipeline: `drift: 3 differences`, `trouble: drive failed,
    /// 2 problems, 1 file set aside`.
    package var fleetWords: String {
        var details: [String] = []
        for side in report.sides where side.status == .failed { details.append("\(side.name) failed") }
        for side in report.sides where side.alarm.map({ !$0.accepted }) ?? false { details.append("deletion alarm on \(side.name)") }
        if !report.differences.isEmpty { details.append(counted(report.differences.count, "difference", "differences")) }
        let problems = report.sides.reduce(0) { $0 + $1.problems.count }
        if problems > 0 { details.append(counted(problems, "problem", "problems")) }
        if !report.quarantined.isEmpty { details.append(counted(report.quarantined.count, "file set aside", "files set aside")) }
        if report.exports.contains(where: { $0.failure != nil }) {
            details.append("export failed")
        } else if let missing = report.exports.first?.missing, !missing.isEmpty {
            details.append(counted(missing.count, "memo not exported", "memos not exported"))
        }
        if !failures.isEmpty { details.append(counted(failures.count, "output not written", "outputs not written")) }
        if fleetOutcome == .inSync, let counts = report.local.counts {
            details.append("\(counts.active) active, \(counts.archived) archived")
        }
        let word =
            switch fleetOutcome {
            case .inSync: "in sync"
            case .drift: "drift"
            case .trouble: "trouble"
            }
        return details.isEmpty ? word : word + ": " + details.joined(separator: ", ")
    }
}

extension Fleet {
    /// A fleet's line for one pipeline: its name padded to `width`, the
    /// outcome in a few words and where its reports are; or, when it could
    /// not start (`published` nil), that it was not run and its exit code.
    package static func line(
        name: String, width: Int, published: Published?, exitCode: Int32, dryRun: Bool, reportDir: URL?, from current: URL
    ) -> String {
        let shown = escapedForDisplay(name)
        let start = shown + String(repeating: " ", count: width - shown.count) + "  "
        guard let published else { return start + "not run: see its error; exit \(exitCode)\n" }
        let reports =
            if dryRun {
                "nothing written (dry run)"
            } else if !published.failures.isEmpty {
                "see its errors"
            } else if let reportDir {
                "reports in " + escapedForDisplay(published.report.shownPath(reportDir, from: current))
            } else {
                "no report folder"
            }
        return start + escapedForDisplay(published.fleetWords) + "; " + reports + "\n"
    }

    /// A fleet's last line: how many of its pipelines ended each way (nil:
    /// not run), of how many, and the exit code.
    package static func tally(_ outcomes: [Report.Outcome?], of total: Int, shard: FleetShard?, exitCode: Int32) -> String {
        var tally: [String] = []
        for (word, outcome) in [("in sync", Report.Outcome.inSync), ("drift", .drift), ("trouble", .trouble)] {
            let count = outcomes.filter { $0 == outcome }.count
            if count > 0 { tally.append("\(count) \(word)") }
        }
        let notRun = outcomes.filter { $0 == nil }.count
        if notRun > 0 { tally.append("\(notRun) not run") }
        let of = shard.map { "\(outcomes.count) of \(counted(total, "pipeline")) (shard \($0))" } ?? counted(outcomes.count, "pipeline")
        return "\(of)\(tally.isEmpty ? "" : ": " + tally.joined(separator: ", ")); exit \(exitCode)\n"
    }
}

extension Fleet {
    /// Runs `work(0) … work(count - 1)`, at most `jobs` at once, each on a
    /// thread of its own (a pipeline blocks on files, so threads rather
    /// than the cores' dispatch pool). Each result is handed to `deliver`
    /// as soon as every one before it has been, under one lock, so what is
    /// printed of them stays in order and whole; `deliver` returns what is
    /// kept of it. Returns what was kept, in order, once all have finished.
    package static func run<Result: Sendable>(
        _ count: Int, jobs: Int, _ work: @escaping @Sendable (Int) -> Result,
        deliver: @escaping @Sendable (Result) -> Result
    ) -> [Result] {
        let next = Mutex(0)
        let state = Mutex((next: 0, waiting: [Int: Result](), kept: [Result]()))
        let done = DispatchGroup()
        for _ in 0..<min(jobs, count) {
            done.enter()
            let thread = Thread {
                while let n = next.withLock({ n -> Int? in
                    guard n < count else { return nil }
                    defer { n += 1 }
                    return n
                }) {
                    let result = work(n)
                    state.withLock { state in
                        state.waiting[n] = result
                        while let ready = state.waiting.removeValue(forKey: state.next) {
                            state.kept.append(deliver(ready))
                            state.next += 1
                        }
                    }
                }
                done.leave()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        done.wait()
        return state.withLock { $0.kept }
    }
}
