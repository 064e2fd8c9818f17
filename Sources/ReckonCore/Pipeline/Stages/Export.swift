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
            let limits = run.definition.limits
            var index: MarkdownIndex.Writer?
            var job = ExportJob(
                formats: spec.formats, includeArchived: spec.includeArchived, dir: spec.dir, shown: spec.path,
                destination: .newRun(startedAt: run.settings.startedAt, keep: spec.keep, keepingLastBefore: input.keepLastBefore))
            job.process = run.settings.process
            let outcome: ExportJob.Outcome
            do {
                outcome = try job.run(
                    side,
                    makeExporter: {
                        var exporter = Exporter(store: store, process: run.settings.process)
                        exporter.pipeline = run.definition.name
                        // The newest run's unchanged Markdown files are reused; this
                        // run's index is put in place once the run is published.
                        exporter.previous = MarkdownIndex.previous(in: spec.dir, limits: limits, on: run.settings.process.threads)
                        if run.settings.readsEveryMemo { exporter.previous?.takesUnread = false }
                        if spec.formats.contains(.markdown) {
                            index = try MarkdownIndex.Writer(
                                url: spec.dir.appendingPathComponent(MarkdownIndex.fileName + ".tmp"), limits: limits,
                                on: run.settings.process.threads)
                            exporter.index = index
                        }
                        return exporter
                    }, progress: { context.progress("exporting", done: $0, total: $1) })
            } catch {
                index?.discard()
                return fail("\(error)")
            }
            // A side Load read always gives a summary, and a new run folder is never
            // held back by the deletion alarm; were either to change, nothing is lost.
            guard let published = outcome.published else {
                index?.discard()
                return fail("\(side.spec.label) could not be read, so nothing was exported")
            }
            exported.failures = afterPublishing(published, index: index, spec: spec, run: run)
            exported.exports = ExportRecord.records(published.summary, folder: published.folder, displayPath: "")
            return exported
        }
    }

    /// What a run leaves beside the export it published: the Markdown
    /// index the next run reuses files by, the record of the run folders,
    /// and retention's notes. Returns what could not be written, besides
    /// what retention could not remove; the export is whole either way.
    static func afterPublishing(_ published: ExportJob.Published, index: MarkdownIndex.Writer?, spec: ExportSpec, run: PipelineRun) -> [OutputError] {
        let context = run.context
        var failures = published.retention.failures
        if let index {
            // The export is whole without it, but a write failed, so the
            // run is trouble; the next run reads every memo.
            do { try index.install(in: spec.dir) } catch {
                index.discard()
                let reason = error.reason
                failures.append(
                    OutputError(
                        path: joinPath(spec.path, MarkdownIndex.fileName),
                        reason: "\(reason); the export is whole, and the next run reads every memo again"))
            }
        } else {
            unlink(spec.dir.appendingPathComponent(MarkdownIndex.fileName).path)
        }
        if let runs = run.settings.exportRuns, runs.contains(where: { $0.manifest != nil }) {
            // What the next run need not read again, but for the folders retention removed.
            do throws(OutputError) {
                try KnownRuns.write(runs.filter { !published.retention.removed.contains($0.name) }, in: spec.dir)
            } catch {
                failures.append(
                    OutputError(
                        path: joinPath(spec.path, KnownRuns.fileName),
                        reason: "\(error.reason); the export is whole, and the next run reads every run's manifest again"))
            }
        }
        for name in published.retention.removed { context.note("removed the old export \(name)") }
        // Retention keeps a folder only when there is a `keep` to keep it from.
        if let keep = spec.keep {
            for (name, why) in published.retention.kept {
                // Named from the current folder, as every path a person reads on the terminal.
                let folder = shownPath(spec.dir.appendingPathComponent(name))
                context.warn("kept the old export \(folder), which keep: \(keep) would remove: \(why)")
            }
        }
        return failures
    }
}
