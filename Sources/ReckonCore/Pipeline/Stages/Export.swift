import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Pipeline {
    /// Writes the definition's export, if it has one, from the chosen side,
    /// into a new folder named by the run's start time. A failure is kept as
    /// the export's failure, for the report; it never stops the run.
    public var export: Stage<Reconciliation, Exported> {
        Stage("export") { [writeFiles, startedAt, readsEveryMemo] reconciliation, context in
            let loaded = reconciliation.loaded
            var exported = Exported(reconciliation: reconciliation, exports: [])
            guard let spec = loaded.definition.export, writeFiles else { return exported }
            let side = loaded.side(spec.from)
            // One record per format asked, each with the one failure.
            func fail(_ reason: String) -> Exported {
                exported.exports = spec.formats.map { ExportRecord(format: $0, path: "", memos: 0, bytes: 0, failure: reason, folder: spec.dir) }
                return exported
            }
            guard side.status != .failed else { return fail("\(side.spec.label) could not be read, so nothing was exported") }
            context.note("exporting \(side.spec.label)")
            var staging: URL?
            var index: MarkdownIndex.Writer?
            do {
                var exporter = Exporter(store: side.spec.store(limits: loaded.definition.limits))
                staging = try ExportFolder.makeRunStaging(in: spec.dir)
                // The newest run's unchanged Markdown files are reused; this
                // run's index is put in place once the run is published.
                let limits = loaded.definition.limits
                exporter.previous = MarkdownIndex.previous(in: spec.dir, limits: limits)
                if readsEveryMemo { exporter.previous?.takesUnread = false }
                if spec.formats.contains(.markdown) {
                    index = try MarkdownIndex.Writer(url: spec.dir.appendingPathComponent(MarkdownIndex.fileName + ".tmp"), limits: limits)
                    exporter.index = index
                }
                let summary = try exporter.export(side, formats: spec.formats, includeArchived: spec.includeArchived, into: staging!) {
                    context.progress("exporting", done: $0, total: $1)
                }
                let alarm = reconciliation.baselines.filter(\.alarmHolds).compactMap { $0.alarm?.since }.min()
                let (run, retention) = try ExportFolder.publishRun(staging!, in: spec.dir, startedAt: startedAt, keep: spec.keep, keepingLastBefore: alarm)
                staging = nil
                if let index {
                    // Without it the next run reads every memo; nothing else is lost.
                    do { try index.install(in: spec.dir) } catch {
                        index.discard()
                        context.warn("the next run will read every memo: \(shownUnder(errorWords(error), dir: spec.dir, as: spec.path))")
                    }
                } else {
                    unlink(spec.dir.appendingPathComponent(MarkdownIndex.fileName).path)
                }
                for name in retention.removed { context.note("removed the old export \(name)") }
                for (name, why) in retention.kept {
                    context.warn("kept the old export \(spec.path)/\(name), which keep: \(spec.keep!) would remove: \(why)")
                }
                exported.failures = retention.failures
                exported.exports = ExportRecord.records(summary, folder: run, displayPath: "")
                return exported
            } catch {
                if let staging { try? ExportFolder.removeTree(staging.path) }
                index?.discard()
                return fail(exportFailure(error, dir: spec.dir, as: spec.path))
            }
        }
    }
}

/// Why an export into `dir` (a pipeline's, or `reckon export --out`) failed,
/// with `dir` spelled as the user gave it (`path`). A failure inside the pid-named staging folder is told as one
/// of `dir` itself ("cannot write the export into out/export: No space left
/// on device"), so the same input gives the same words.
package func exportFailure(_ error: any Error, dir: URL, as path: String) -> String {
    if let reason = ExportFolder.stagingFailure(error) {
        return "cannot write the export into \(path.hasSuffix("/") ? String(path.dropLast()) : path): \(reason)"
    }
    return shownUnder(errorWords(error), dir: dir, as: path)
}

/// A message with the resolved folder `dir` spelled as the user gave it.
func shownUnder(_ message: String, dir: URL, as path: String) -> String {
    message.replacingOccurrences(of: dir.path, with: path.hasSuffix("/") ? String(path.dropLast()) : path)
}

extension LoadedSides {
    /// The side an export reads.
    func side(_ source: ExportSource) -> SideListing {
        switch source {
        case .local: local
        case .remote(let name): remotes.first { $0.spec.name == name }!
        }
    }
}
