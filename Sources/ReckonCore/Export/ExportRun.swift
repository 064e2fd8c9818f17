import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension Exporter {
    /// One export, in three steps: pass 1 (`plan`) picks the memos and their
    /// order, noting which the previous run holds unchanged; pass 2
    /// (`writeMemos`) reads or takes each memo and writes it to
    /// `memos.json`, `markdown/` and the zip; `finish` closes `memos.json`,
    /// writes the manifests, finishes the zip and removes what only the zip
    /// needed.
    struct Run {
        // The exporter's types, named as inside it: the passes below are
        // extensions of `Run` in files of their own, outside its scope.
        typealias Planned = Exporter.Planned
        typealias Rendered = Exporter.Rendered
        typealias Written = Exporter.Written
        typealias MarkdownFile = Exporter.MarkdownFile

        let exporter: Exporter
        /// Held while a chunk's previous Markdown files are put in place (`writeMarkdown`).
        let placingLock = NSLock()
        let formats: [ExportFormat]
        let includeArchived: Bool
        let staging: URL
        let source: ExportManifest.Source
        let zipped: Bool
        /// Whether `memos.json` and Markdown files are written (the zip needs both).
        let withJSON: Bool
        let withMarkdown: Bool
        /// With an index read or written, each memo file's identity is noted:
        /// a memo whose file is the one the previous run read is taken whole
        /// from that run, unread.
        let fingerprinted: Bool
        /// Memos that should have been exported but could not be read, or whose id is held twice.
        var missing: [ExportManifest.Missing] = []
        /// The first memo the disk failed to give (`Problem.Kind.diskTrouble`).
        var diskTrouble: Problem?

        init(_ exporter: Exporter, formats: [ExportFormat], includeArchived: Bool, staging: URL) {
            let spec = exporter.store.spec
            self.exporter = exporter
            self.formats = formats
            self.includeArchived = includeArchived
            self.staging = staging
            source = ExportManifest.Source(name: spec.name, label: spec.label, path: spec.path)
            zipped = formats.contains(.zip)
            withJSON = formats.contains(.json) || zipped
            withMarkdown = formats.contains(.markdown) || zipped
            fingerprinted = exporter.previous != nil || exporter.index != nil
        }

        /// Reads the memos in `batch`, `chunkSize` at a time on every core,
        /// and maps each by `work` there; a memo that cannot be read is
        /// noted as missing and left out.
        mutating func read<Kept, Output: Sendable>(
            _ batch: [(MemoID, IDSpelling)], chunkSize: Int, as reading: MemoReading<Kept>,
            then work: @escaping @Sendable (Kept) -> Output
        ) -> [((MemoID, IDSpelling), Output)] {
            let outcomes = exporter.store.read(batch, chunkSize: chunkSize, as: reading, then: work)
            return zip(batch, outcomes).compactMap { memo, outcome in
                switch outcome {
                case .success(let output): return (memo, output)
                case .failure(let problem):
                    if problem.kind == .diskTrouble, diskTrouble == nil { diskTrouble = problem }
                    missing.append(.init(id: memo.0, path: problem.path, reason: problem.message))
                    return nil
                }
            }
        }
    }
}
