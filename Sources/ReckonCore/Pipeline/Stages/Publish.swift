import Foundation

/// What the last stage writes from: the report, and the artefacts beside
/// it (the sides for the combined listings, the baselines and agreements to save).
package struct PublishInput: Sendable {
    package var report: Report
    package var sides: LoadedSides
    /// Each side's baseline and each pair's agreement, with the differences they were found beside.
    package var reconciled = Reconciliation(differences: [])
    /// What earlier stages could not do, reported beside this stage's own.
    package var failures: [OutputError] = []

    /// The state files this run moves on: each side's baseline, then each
    /// pair's agreement, as (file, bytes).
    func stateFiles(deep: Bool, startedAt: Timestamp, on workers: Workers) -> [(URL, Data)] {
        let (baselines, agreements, differences) = (reconciled.baselines, reconciled.agreements, reconciled.differences)
        let specs = sides.sides.map(\.spec)
        // A stage put in Reconcile's place (a test's) may hand over no baselines: then nothing moves.
        guard baselines.count == specs.count else { return [] }
        var files: [@Sendable () -> (URL, Data)?] = specs.indices.map { index in
            { baselines[index].toSave(deep: deep, side: specs[index], startedAt: startedAt).map { (baselines[index].url!, $0.data) } }
        }
        files += agreements.indices.map { remote in
            {
                agreements[remote].toSave(
                    deep: deep, local: baselines[0], remote: baselines[remote + 1], differences: differences, startedAt: startedAt,
                    identities: (SideIdentity(specs[0]), SideIdentity(specs[remote + 1]))
                ).map { (agreements[remote].url!, $0.data) }
            }
        }
        // Each file is made on a core of its own, then written.
        return mapOnEveryCore(files, chunkSize: 1, on: workers) { $0.compactMap { $0() } }.flatMap { $0 }
    }
}

extension Pipeline {
    /// Writes every output into the definition's report folder:
    /// `report.json`, `report.md`, `report.html`, the combined listings,
    /// each side's baseline and each pair's agreement in the state folder (after a deep run) and (for
    /// pipeline runs) a line of `history.jsonl`. Always runs, and tries every
    /// file: one that cannot be written is a failure beside the others,
    /// never instead of them.
    package static var publishing: Stage<PublishInput, Published> {
        Stage("publish") { input, run in
            var report = input.report
            let definition = run.definition
            let (writeFiles, startedAt, keepsHistory) = (run.settings.writeFiles, run.settings.startedAt, run.settings.keepsHistory)
            guard writeFiles else { return Published(report: report, failures: input.failures) }
            var failures = input.failures
            func attempt(_ write: () throws -> Void) {
                do {
                    try write()
                } catch let error as OutputError {
                    failures.append(error)
                } catch {
                    failures.append(OutputError(path: definition.reportDir?.path ?? "", reason: errorWords(error)))
                }
            }
            func saveBaselines() {
                for (url, data) in input.stateFiles(deep: definition.check == .deep, startedAt: startedAt, on: run.settings.process.threads) {
                    attempt { try AtomicFile.write(data, to: url) }
                }
            }
            guard let dir = definition.reportDir else {
                saveBaselines()
                return Published(report: report, failures: failures)
            }
            do throws(OutputError) { try AtomicFile.makeFolder(dir) } catch { return Published(report: report, failures: failures + [error]) }
            // The history is read first, for the chart, and written last, so
            // its line has the run's exit code after every other output.
            var history: Data?
            var entry = HistoryEntry(
                time: startedAt, sides: report.sides.map { .init(name: $0.name, label: $0.label, counts: $0.counts) },
                differences: report.differences.count, exitCode: report.exitCode(driftFails: definition.failOnDrift))
            if keepsHistory {
                attempt { history = try History.existing(in: dir) }
                report.history = History.shownRuns(history ?? Data(), then: entry)
            }
            let strings = Strings.forLanguage(definition.language)
            let remotes = input.sides.remotes
            // Each file is rendered and written on a core of its own: the pages cost more than the check of a quick run.
            let shown = report
            let local = input.sides.local
            var files: [(String, @Sendable () throws -> Data)] = [
                ("report.json", { JSONWriter.data(try JSONValue(encoding: shown)) + [0x0A] }),
                ("report.md", { Data(MarkdownReport(strings: strings).render(shown).utf8) }),
                ("report.html", { Data(HTMLReport(strings: strings).render(shown).utf8) })
            ]
            for remote in remotes {
                let name = remotes.count == 1 ? "combined.txt" : "combined-\(remote.spec.name).txt"
                files.append((name, { CombinedListing.render(local: local, remote: remote, differences: shown.differences) }))
            }
            let written = mapOnEveryCore(files.indices.map { ($0, files[$0].0) }, chunkSize: 1, on: run.settings.process.threads) { [files] items in
                items.map { index, name -> OutputError? in
                    do {
                        try AtomicFile.write(try files[index].1(), to: dir.appendingPathComponent(name))
                        return nil
                    } catch let error as OutputError {
                        return error
                    } catch {
                        return OutputError(path: dir.appendingPathComponent(name).path, reason: errorWords(error))
                    }
                }
            }.flatMap { $0 }
            failures += written.compactMap { $0 }
            saveBaselines()
            if let history {
                if !failures.isEmpty { entry.exitCode = 2 }
                attempt { try History.append(entry, to: history, in: dir) }
            }
            return Published(report: report, failures: failures)
        }
    }
}
