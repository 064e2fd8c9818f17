import Foundation

/// One run's figures in Prometheus' text format, for node_exporter's
/// textfile collector: gauges only, labelled by pipeline and side, with no
/// sample timestamp (the collector refuses them) and never a memo's id,
/// title or path.
package struct RunMetrics: Sendable {
    /// The run's report.
    package var report: Report
    /// The run's exit code, with any output that could not be written counted.
    package var exitCode: Int32
    /// When the run started.
    package var startedAt: Timestamp
    /// How long the run took, in seconds.
    package var duration: Double
    /// When the last run without trouble ended, in seconds since 1970
    /// (this one, or one taken from the previous file); nil when none did.
    package var lastSuccess: Double?

    /// A run succeeds when it ends without trouble: exit 0, or 1 for drift
    /// that the definition makes fail the run. Every side was read and
    /// every output written.
    package static func succeeded(exitCode: Int32) -> Bool { exitCode == 0 || exitCode == 1 }

    /// The figures of a run, taking the time of the last success from the
    /// file this run replaces when this run did not succeed.
    package init(report: Report, exitCode: Int32, startedAt: Timestamp, duration: Double, previous: URL) {
        self.report = report
        self.exitCode = exitCode
        self.startedAt = startedAt
        self.duration = duration
        let ended = startedAt.secondsSince1970 + duration
        lastSuccess = Self.succeeded(exitCode: exitCode) ? ended : Self.lastSuccess(in: previous, pipeline: report.pipeline)
    }

    /// The time of the last success of `pipeline` that an earlier metrics
    /// file holds; nil when there is no such file, or it does not say it
    /// for this pipeline in one plain value.
    package static func lastSuccess(in file: URL, pipeline: String) -> Double? {
        guard let data = try? readRegularFile(atPath: file.path, limit: 1 << 20) else { return nil }
        let prefix = Family.lastSuccess.name + "{pipeline=\"\(escaped(pipeline))\"} "
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
            guard let value = Double(line.dropFirst(prefix.count)), value.isFinite, value >= 0 else { return nil }
            return value
        }
        return nil
    }

    /// Writes the text to `url` whole: a temporary file in the same folder,
    /// flushed, then renamed, so the collector never reads half a file.
    /// A link at `url` is refused, never followed or replaced.
    package func write(to url: URL) throws(OutputError) {
        guard FileKind(path: url.path) != .link else {
            throw OutputError(path: url.path, reason: "is a link; reckon writes no file through a link, nor replaces one")
        }
        try AtomicFile.write(Data(text().utf8), to: url)
    }

    /// One metric family: its name and its `# HELP` text.
    struct Family {
        var name: String
        var help: String

        static let exitCode = Family(
            name: "reckon_run_exit_code", help: "The exit code of the last run: 0 done, 1 drift that fails the run, 2 trouble.")
        static let started = Family(name: "reckon_run_start_timestamp_seconds", help: "When the last run started, in seconds since 1970.")
        static let duration = Family(name: "reckon_run_duration_seconds", help: "How long the last run took.")
        static let lastSuccess = Family(
            name: "reckon_last_success_timestamp_seconds",
            help: "When the last run without trouble (exit 0 or 1) ended, in seconds since 1970; kept while later runs fail.")
        static let stage = Family(name: "reckon_stage_duration_seconds", help: "How long each stage of the last run took.")
        static let memos = Family(
            name: "reckon_memos",
            help: "Memos on each side by state (active, archived), soft-deleted memos never counted; none for a side that failed.")
        static let problems = Family(name: "reckon_side_problems", help: "Problems met on each side: files that could not be read or used.")
        static let failed = Family(name: "reckon_side_failed", help: "1 when the side could not be read at all, else 0.")
        static let alarm = Family(
            name: "reckon_deletion_alarm",
            help: "1 when more memos vanished from the side than the deletion alarm allows and no one accepted it, else 0.")
        static let differences = Family(
            name: "reckon_differences",
            help: "Memos that differ between the local side and each remote, by sigil (+ - * !); none when either side could not be read.")
        static let exportMemos = Family(name: "reckon_export_memos", help: "Memos in each export format the last run wrote.")
        static let exportBytes = Family(name: "reckon_export_bytes", help: "Size of each export format the last run wrote.")
    }

    /// The file's text: each family with its `# HELP` and `# TYPE gauge`,
    /// then its samples, in a fixed order.
    package func text() -> String {
        let pipeline = [("pipeline", report.pipeline)]
        var out = ""
        func family(_ family: Family, _ samples: [(labels: [(String, String)], value: String)]) {
            guard !samples.isEmpty else { return }
            out += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) gauge\n"
            for sample in samples {
                let labels = (pipeline + sample.labels).map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",")
                out += "\(family.name){\(labels)} \(sample.value)\n"
            }
        }
        family(.exitCode, [([], "\(exitCode)")])
        family(.started, [([], Self.number(startedAt.secondsSince1970))])
        family(.duration, [([], Self.number(duration))])
        family(.lastSuccess, lastSuccess.map { [([], Self.number($0))] } ?? [])
        family(.stage, report.timings.map { ([("stage", $0.stage)], Self.number($0.seconds)) })
        let sides = report.sides.map { side in [("side", side.name), ("role", side.role.rawValue)] }
        family(
            .memos,
            zip(report.sides, sides).flatMap { side, labels in
                side.counts.map { [(labels + [("state", "active")], "\($0.active)"), (labels + [("state", "archived")], "\($0.archived)")] } ?? []
            })
        family(.problems, zip(report.sides, sides).map { side, labels in (labels, "\(side.problems.count)") })
        family(.failed, zip(report.sides, sides).map { side, labels in (labels, side.status == .failed ? "1" : "0") })
        family(.alarm, zip(report.sides, sides).map { side, labels in (labels, side.alarm.map { $0.accepted ? "0" : "1" } ?? "0") })
        // A pair with a side that could not be read was not compared: no count, rather than a 0 that would read as in sync.
        let compared = report.local.status == .failed ? [] : report.remotes.filter { $0.status != .failed }
        family(
            .differences,
            compared.flatMap { remote in
                Difference.Sigil.allCases.filter { $0 != .same }.map { sigil in
                    let count = report.differences.count { $0.remote == remote.name && $0.sigil == sigil }
                    return ([("remote", remote.name), ("sigil", sigil.rawValue)], "\(count)")
                }
            })
        let written = report.exports.filter { $0.failure == nil }
        family(.exportMemos, written.map { ([("format", $0.format.rawValue)], "\($0.memos)") })
        family(.exportBytes, written.map { ([("format", $0.format.rawValue)], "\($0.bytes)") })
        return out
    }

    /// A label value as the text format spells it: `\`, `"` and a line break escaped.
    static func escaped(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n")
    }

    /// A value with at most microsecond precision, without an exponent.
    static func number(_ value: Double) -> String {
        let micro = (value * 1e6).rounded()
        guard micro.magnitude < 9e18 else { return "\(value)" }
        let whole = Int64(micro)
        let fraction = String(whole.magnitude % 1_000_000)
        let padded = String(repeating: "0", count: 6 - fraction.count) + fraction
        let trimmed = padded.reversed().drop { $0 == "0" }.reversed()
        return (whole < 0 ? "-" : "") + "\(whole.magnitude / 1_000_000)" + (trimmed.isEmpty ? "" : "." + String(trimmed))
    }
}
