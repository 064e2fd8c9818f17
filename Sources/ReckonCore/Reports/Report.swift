import Foundation

/// The reconciliation report: what `report.json` holds and every rendering is
/// made from. Holds no run time or machine path, so the same input gives the
/// same bytes.
package struct Report: Sendable, Equatable, Codable {
    package static let currentSchemaVersion = 1

    package var schemaVersion = Report.currentSchemaVersion
    package var reckonVersion = Reckon.version
    package var pipeline: String
    package var check: CheckMode
    package var sides: [SideReport]
    /// No side failed and every memo is the same on every side.
    package var inSync: Bool
    package var outcome: Outcome
    /// Every memo that is not the same (`=` lines left out), by remote then id.
    package var differences: [Difference]
    package var quarantined: [QuarantineRecord]
    package var exports: [ExportRecord]

    // What the rendered pages show besides the JSON: they are left out of
    // `report.json`, which stays the same bytes for the same input.
    /// When the run started.
    package var startedAt: Timestamp?
    /// How long each stage took, in order.
    package var timings: [StageTiming] = []
    /// Earlier runs from `history.jsonl`, oldest first (at most 30).
    package var history: [HistoryEntry] = []
    /// The IANA time zone times are shown in (`UTC` unless the definition says).
    package var timeZone = "UTC"
    /// Each difference's memos as read, fingerprints and choices, in the
    /// order of `differences`; empty when the memos were not looked up.
    package var details: [MemoDetail] = []
    /// How much of the memos the pages show.
    package var content = ReportContent.full
    /// The commands that carry out choices made in the page; nil when the
    /// run does not say how its sides are planned for.
    package var repair: RepairCommand?

    enum CodingKeys: String, CodingKey {
        case schemaVersion, reckonVersion, pipeline, check, sides, inSync, outcome, differences, quarantined, exports
    }

    package init(
        pipeline: String, check: CheckMode, sides: [SideReport], inSync: Bool, outcome: Outcome, differences: [Difference],
        quarantined: [QuarantineRecord], exports: [ExportRecord]
    ) {
        self.pipeline = pipeline
        self.check = check
        self.sides = sides
        self.inSync = inSync
        self.outcome = outcome
        self.differences = differences
        self.quarantined = quarantined
        self.exports = exports
    }

    /// The exit code for this report: 2 trouble, 1 drift (when drift fails
    /// the run), else 0.
    package func exitCode(driftFails: Bool) -> Int32 {
        switch outcome {
        case .trouble: 2
        case .drift: driftFails ? 1 : 0
        case .inSync: 0
        }
    }

    package enum Outcome: String, Sendable, Codable, CaseIterable {
        /// Done, and every side agrees.
        case inSync = "in-sync"
        /// Done, and memos differ.
        case drift
        /// A side failed or has problems, or an export failed.
        case trouble
    }

    package var local: SideReport { sides.first { $0.role == .local }! }
    package var remotes: [SideReport] { sides.filter { $0.role == .remote } }
}

/// One side as the report shows it.
package struct SideReport: Sendable, Equatable, Codable {
    package var role: SideRole
    package var name: String
    package var label: String
    /// The path as the user gave it.
    package var path: String
    package var status: SideStatus
    package var counts: MemoCounts?
    /// `index` normally; `memo-files` when the index could not be used;
    /// `store` for the app's store, counted from its rows.
    package var countsFrom: CountsFrom
    package var problems: [Problem]
    /// The time of the baseline this run compared the side with (the run
    /// that saved it); nil without one.
    package var since: Timestamp?
    /// What moved on the side since that baseline; nil without one, or when the side failed.
    package var sinceLastRun: SinceLastRun?
    /// What became of the side's baseline file.
    package var baseline: SideBaseline.Use = .none
    /// For a baseline not used: the side it belongs to, or why it could not be read (not in `report.json`).
    package var baselineNote: String?
    /// For a remote, what became of its last agreement with the local side; nil for the local side.
    package var agreement: PairAgreement.Use?
    /// For an agreement not used: the sides it belongs to, or why it could not be read (not in `report.json`).
    package var agreementNote: String?
    /// More memos gone since the baseline than the alarm allows; nil when not.
    package var alarm: DeletionAlarm?
    /// The folder, resolved, for showing its path to a person (not in `report.json`).
    package var url: URL?
    /// How a remote's memo files were had (not in `report.json`, which stays the same for the same inputs).
    package var cacheUse: CacheUse?

    /// Where a side's counts come from.
    package enum CountsFrom: String, Sendable, Codable, CaseIterable {
        /// `index.json`, the fast path.
        case index
        /// The memo files, because `index.json` could not be used.
        case memoFiles = "memo-files"
        /// The rows of the app's store.
        case store
    }

    package init(_ side: SideListing) {
        role = side.spec.role
        name = side.spec.name
        label = side.spec.label
        path = side.spec.path
        status = side.status
        counts = side.counts
        countsFrom = side.spec.kind.countsFrom(rebuilt: side.rebuiltFromMemoFiles)
        problems = side.problems.sorted { ($0.path, $0.message) < ($1.path, $1.message) }
        url = side.spec.kind.localURL
        cacheUse = side.cacheUse
    }

    enum CodingKeys: String, CodingKey {
        case role, name, label, path, status, counts, countsFrom, problems, since, sinceLastRun, baseline, agreement, alarm
    }

    /// The side's baseline, what moved since and the alarm, as the reconcile stage found them.
    mutating func add(_ baseline: SideBaseline) {
        since = baseline.time
        sinceLastRun = baseline.since
        self.baseline = baseline.use
        baselineNote = baseline.note
        alarm = baseline.alarm
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(role, forKey: .role)
        try container.encode(name, forKey: .name)
        try container.encode(label, forKey: .label)
        try container.encode(path, forKey: .path)
        try container.encode(status, forKey: .status)
        try container.encode(counts, forKey: .counts)  // null when the side failed
        try container.encode(countsFrom, forKey: .countsFrom)
        try container.encode(problems, forKey: .problems)
        try container.encode(since, forKey: .since)  // null without a baseline
        try container.encode(sinceLastRun, forKey: .sinceLastRun)
        try container.encode(baseline, forKey: .baseline)
        try container.encode(agreement, forKey: .agreement)  // null for the local side
        try container.encode(alarm, forKey: .alarm)
    }
}

/// How long one stage of a run took.
package struct StageTiming: Sendable, Equatable, Codable {
    package var stage: String
    package var seconds: Double
}

/// A file copied aside because it could not be used.
package struct QuarantineRecord: Sendable, Equatable, Codable {
    /// The side's name.
    package var side: String
    /// The damaged file, under the side's path as the user spelled it.
    package var source: String
    /// The verified copy, inside this run's quarantine folder (`<side>/<path>`),
    /// so `report.json` does not name the run.
    package var copy: String
    package var sha256: String
    package var reason: String
    /// This run's quarantine folder, resolved, for showing the copy's path to
    /// a person (not in `report.json`).
    package var folder: URL?

    enum CodingKeys: String, CodingKey { case side, source, copy, sha256, reason }

    package init(side: String, source: String, copy: String, sha256: String, reason: String, folder: URL? = nil) {
        self.side = side
        self.source = source
        self.copy = copy
        self.sha256 = sha256
        self.reason = reason
        self.folder = folder
    }
}

extension Report {
    /// Each distinct export failure once (a failed export has one record
    /// per format asked, all with the same failure).
    package var exportFailures: [String] {
        var seen = Set<String>()
        return exports.compactMap(\.failure).filter { seen.insert($0).inserted }
    }
}

/// One export file written by a run.
package struct ExportRecord: Sendable, Equatable, Codable {
    package var format: ExportFormat
    /// The file or folder inside the run's export folder (`memos.json`), so
    /// `report.json` does not name the run; `reckon export` gives it under
    /// the folder as the user spelled it.
    package var path: String
    package var memos: Int
    package var bytes: Int
    /// The file's SHA-256 (none for the Markdown folder).
    package var sha256: String?
    /// Memos that should have been exported but could not be read.
    package var missing: [Problem]
    /// Why the export could not be written (`<file>: No space left on
    /// device`); nil when it was.
    package var failure: String?
    /// The run's export folder, resolved, for showing the path to a person
    /// (not in `report.json`).
    package var folder: URL?

    enum CodingKeys: String, CodingKey { case format, path, memos, bytes, sha256, missing, failure }

    package init(
        format: ExportFormat, path: String, memos: Int, bytes: Int, sha256: String? = nil, missing: [Problem] = [],
        failure: String? = nil, folder: URL? = nil
    ) {
        self.format = format
        self.path = path
        self.memos = memos
        self.bytes = bytes
        self.sha256 = sha256
        self.missing = missing
        self.failure = failure
        self.folder = folder
    }

    /// One record per format written, from an export's summary: paths are
    /// `displayPath` joined with each file's name (an empty `displayPath`
    /// gives them inside `folder`, as a run's report holds them).
    package static func records(_ summary: ExportSummary, folder: URL, displayPath: String) -> [ExportRecord] {
        let missing = summary.missing.map { Problem(.exportFailed, path: $0.path, id: $0.id, $0.reason) }
        let exported = summary.counts.total
        return summary.formats.map { format in
            switch format {
            case .json:
                return ExportRecord(
                    format: .json, path: joinPath(displayPath, Exporter.jsonName), memos: exported,
                    bytes: summary.json.size, sha256: summary.json.sha256, missing: missing, folder: folder)
            case .markdown:
                return ExportRecord(
                    format: .markdown, path: joinPath(displayPath, Exporter.markdownName + "/"), memos: exported,
                    bytes: summary.markdownBytes, missing: missing, folder: folder)
            case .zip:
                return ExportRecord(
                    format: .zip, path: joinPath(displayPath, Exporter.zipName), memos: exported,
                    bytes: summary.zip?.size ?? 0, sha256: summary.zip?.sha256, missing: missing, folder: folder)
            }
        }
    }
}

/// reckon's own name and version.
package enum Reckon {
    package static let version = "0.1.0"
    /// The day this version was made, for the man pages' `.Dd` (never the clock, so the pages are the same bytes every time).
    package static let versionDate = "December 3, 2026"
}
