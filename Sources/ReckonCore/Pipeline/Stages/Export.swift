import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What the export stage reads: the sides with their stores, and when the
/// oldest deletion alarm that holds was raised (the last export before it
/// is kept whatever `keep` says).
package struct ExportInput: Sendable {
    package var sides: LoadedSides
    package var keepLastBefore: Timestamp?
}

extension Pipeline {
    /// Writes the definition's export, if it has one, from the chosen side,
    /// through the store Load opened, into a new folder named by the run's
    /// start time. A failure is kept as the export's failure, for the
    /// report; it never stops the run.
    package static var exporting: Stage<ExportInput, Exported> {
        Stage("export") { input, run in
            let context = run.context
            var exported = Exported()
            guard let spec = run.definition.export, run.settings.writeFiles else { return exported }
            let (side, store) = input.sides.side(spec.from)
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
                var exporter = Exporter(store: store)
                staging = try ExportFolder.makeRunStaging(in: spec.dir)
                // The newest run's unchanged Markdown files are reused; this
                // run's index is put in place once the run is published.
                let limits = run.definition.limits
                exporter.previous = MarkdownIndex.previous(in: spec.dir, limits: limits)
                if run.settings.readsEveryMemo { exporter.previous?.takesUnread = false }
                if spec.formats.contains(.markdown) {
                    index = try MarkdownIndex.Writer(url: spec.dir.appendingPathComponent(MarkdownIndex.fileName + ".tmp"), limits: limits)
                    exporter.index = index
                }
                let summary = try exporter.export(side, formats: spec.formats, includeArchived: spec.includeArchived, into: staging!) {
                    context.progress("exporting", done: $0, total: $1)
                }
                let (published, retention) = try ExportFolder.publishRun(
                    staging!, in: spec.dir, startedAt: run.settings.startedAt, keep: spec.keep,
                    keepingLastBefore: input.keepLastBefore)
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
                exported.exports = ExportRecord.records(summary, folder: published, displayPath: "")
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
