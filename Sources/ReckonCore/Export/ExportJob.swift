import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One export from start to publishing: the one path `reckon export` and
/// a pipeline's export both take. The export is written into a staging
/// folder and published by a rename, so a killed run leaves the old export
/// or the new one; when it fails, the staging folder goes, and with it
/// every folder the export made.
package struct ExportJob {
    /// Where the export is published.
    package enum Destination {
        /// `reckon export --out`: the folder itself, replaced only when
        /// reckon's own earlier export is all it holds. `given` is the
        /// folder as the user spelled it, links not followed.
        case inPlace(given: URL)
        /// A pipeline's export: a new run folder in the folder, named by
        /// `startedAt`, with `latest` pointing at it; the run folders
        /// beyond `keep` are removed, except the last one made before
        /// `keepingLastBefore` (a deletion alarm's first run).
        case newRun(startedAt: Timestamp, keep: Int?, keepingLastBefore: Timestamp?)
    }

    package var formats: [ExportFormat]
    package var includeArchived: Bool
    /// The folder by its real path, and as the user spelled it.
    package var dir: URL
    package var shown: String
    package var destination: Destination
    /// `reckon export --accept-deletions`: replace the earlier export even
    /// when the deletion alarm's rule says this one holds too few memos.
    package var acceptDeletions = false
    /// What the process decides for the export (test checkpoints).
    package var process = ProcessSettings()

    package init(formats: [ExportFormat], includeArchived: Bool, dir: URL, shown: String, destination: Destination) {
        self.formats = formats
        self.includeArchived = includeArchived
        self.dir = dir
        self.shown = shown
        self.destination = destination
    }

    /// Why nothing was exported, in words that name the file.
    package struct Refusal: Error, CustomStringConvertible {
        package var description: String
    }

    /// What was exported: the side's listing (its problems); unless the
    /// side could not be read (then nothing is left behind), the summary
    /// and the folder published; and what retention did.
    package struct Outcome {
        package var listing: SideListing
        /// What was published; nil when the side could not be read, or when
        /// the deletion alarm kept the earlier export (`fewer`).
        package var published: Published?
        /// `reckon export` only: this export holds fewer memos than the one
        /// it replaces, by the deletion alarm's rule. Unless accepted,
        /// nothing was published and the earlier export is kept.
        package var fewer: Fewer?
    }

    /// An export that was published: what it holds, where, and what
    /// retention did to the runs beside it.
    package struct Published {
        package var summary: ExportSummary
        package var folder: URL
        package var retention = ExportFolder.Retention()
    }

    /// An export holding fewer memos than the one it replaces, by the deletion alarm's rule.
    package struct Fewer: Sendable {
        package var alarm: DeletionAlarm
        /// Whether archived memos were counted: only when both exports hold them.
        package var archivedToo: Bool

        /// "the new export holds 1 active memo where the earlier one holds 4 (3 fewer, 75%)".
        package var words: String {
            let noun = archivedToo ? "memo" : "active memo"
            let has = alarm.of - alarm.deleted
            return "the new export holds \(counted(has, noun)) where the earlier one holds \(alarm.of)"
                + (alarm.empty ? "" : " (\(alarm.deleted) fewer, \(percent(alarm.deleted, alarm.of)))")
        }
    }

    /// Exports the side `listed` (as Load read it), or, when it is nil, the
    /// side of the exporter's store, listed while it is exported.
    /// `makeExporter` is called once the staging folder exists. Throws why
    /// nothing was written or published.
    package func run(
        _ listed: SideListing?, makeExporter: () throws -> Exporter, progress: @escaping (Int, Int) -> Void
    ) throws(Refusal) -> Outcome {
        var created: [URL] = []
        var replaced: (counts: MemoCounts, includeArchived: Bool)?
        if case .inPlace(let given) = destination {
            created = try checkFolder(given: given)
            replaced = ExportFolder.exportedCounts(in: dir)
        }
        var staging: URL?
        /// Leaves no trace: not the staging folder, not the folders made for the export.
        func cleanUp() {
            if let staging { try? FileTree.remove(staging.path) }
            for folder in created { rmdir(folder.path) }
        }
        do {
            let folder: URL
            switch destination {
            case .inPlace: folder = try ExportFolder.makeStaging(beside: dir, checkpoints: process.checkpoints)
            case .newRun: folder = try ExportFolder.makeRunStaging(in: dir, checkpoints: process.checkpoints)
            }
            staging = folder
            let exporter = try makeExporter()
            let listing: SideListing
            let written: ExportSummary?
            if let listed {
                (listing, written) = (
                    listed, try exporter.export(listed, formats: formats, includeArchived: includeArchived, into: folder, progress: progress)
                )
            } else {
                (listing, written) = try exporter.export(formats: formats, includeArchived: includeArchived, into: folder, progress: progress)
            }
            var outcome = Outcome(listing: listing)
            // The side could not be read: nothing is published.
            guard let summary = written else {
                cleanUp()
                return outcome
            }
            if let replaced {
                outcome.fewer = fewer(replacing: replaced, with: summary.counts)
                if let fewer = outcome.fewer, !fewer.alarm.accepted {
                    cleanUp()
                    return outcome
                }
            }
            switch destination {
            case .inPlace:
                // A quick second look: nothing may have come into the folder meanwhile.
                if let found = ExportFolder.inTheWay(of: dir, checkingBytes: false) {
                    cleanUp()
                    throw refusal(found, "published")
                }
                try ExportFolder.publish(folder, as: dir, checkpoints: process.checkpoints)
                process.checkpoints.at("done")
                outcome.published = Published(summary: summary, folder: dir)
            case .newRun(let startedAt, let keep, let keepingLastBefore):
                let (published, retention) = try ExportFolder.publishRun(
                    folder, in: dir, startedAt: startedAt, keep: keep, keepingLastBefore: keepingLastBefore, checkpoints: process.checkpoints)
                outcome.published = Published(summary: summary, folder: published, retention: retention)
            }
            return outcome
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            cleanUp()
            throw Refusal(description: exportFailure(error, dir: dir, as: shown))
        }
    }

    /// The deletion alarm's rule with its default limits, applied to an
    /// export that replaces one holding `replaced`: like for like, archived
    /// memos are compared only when both exports hold them. Nil when it
    /// does not sound.
    func fewer(replacing replaced: (counts: MemoCounts, includeArchived: Bool), with now: MemoCounts) -> Fewer? {
        let both = replaced.includeArchived && includeArchived
        let had = both ? replaced.counts.total : replaced.counts.active
        let has = both ? now.total : now.active
        let deleted = max(0, had - has)
        guard AlarmLimits().sounds(deleted: deleted, of: had, empty: had > 0 && has == 0) else { return nil }
        return Fewer(alarm: DeletionAlarm(deleted: deleted, of: had, empty: has == 0, accepted: acceptDeletions), archivedToo: both)
    }

    /// Checks that the folder may be replaced: a link to a folder is the
    /// user's choice (`dir` is its real path, so the export replaces the
    /// folder it leads to), one that leads nowhere is refused, and so is
    /// anything reckon's own export did not write. Returns the folders
    /// above it that do not exist yet, which the export will make.
    private func checkFolder(given: URL) throws(Refusal) -> [URL] {
        if FileKind(path: dir.path) == .missing, FileKind(path: given.path) == .link {
            throw Refusal(description: "\(shown): is a link that leads nowhere")
        }
        if let found = ExportFolder.inTheWay(of: dir) { throw refusal(found, "written") }
        process.checkpoints.at("checked")
        var created: [URL] = []
        var above = dir.deletingLastPathComponent()
        while FileKind(path: above.path) == .missing {
            created.append(above)
            above = above.deletingLastPathComponent()
        }
        return created
    }

    /// What stands in the way, named; nothing was `what` (written, published).
    private func refusal(_ found: ExportFolder.InTheWay, _ what: String) -> Refusal {
        Refusal(
            description:
                "\(joinPath(shown, found.path)): \(found.reason). reckon replaces only what its own earlier export wrote, so nothing was \(what).")
    }
}

/// Why an export into `dir` (a pipeline's, or `reckon export --out`) failed,
/// with `dir` spelled as the user gave it (`path`). A failure inside the
/// pid-named staging folder is told of the export's file ("cannot write
/// memos.json of the export into out/export: No space left on device"), so
/// the same input gives the same words.
package func exportFailure(_ error: any Error, dir: URL, as path: String) -> String {
    let folder = path.hasSuffix("/") ? String(path.dropLast()) : path
    guard let (file, reason) = ExportFolder.stagingFailure(error) else { return shownUnder(errorWords(error), dir: dir, as: path) }
    return "cannot write \(file.isEmpty ? "" : file + " of ")the export into \(folder): \(reason)"
}

/// A message with the resolved folder `dir` spelled as the user gave it.
func shownUnder(_ message: String, dir: URL, as path: String) -> String {
    message.replacingOccurrences(of: dir.path, with: path.hasSuffix("/") ? String(path.dropLast()) : path)
}
