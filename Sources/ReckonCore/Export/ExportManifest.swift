import Foundation

/// What an export wrote: `manifest.json` in the export folder and in the zip.
package struct ExportManifest: Sendable, Equatable, Codable {
    package struct Source: Sendable, Equatable, Codable {
        package var name: String
        package var label: String
        package var path: String
    }

    /// Where a listed file is: in the export folder beside the manifest, or
    /// inside `memos.zip` (written `"in": "folder"` or `"in": "zip"`).
    package enum Place: String, Sendable, Equatable, Codable, CaseIterable {
        case folder
        case zip
    }

    package struct File: Sendable, Equatable, Codable {
        /// Where the file is.
        package var place: Place
        /// Its path in the export folder, or its entry name in the zip.
        package var path: String
        package var size: Int
        package var sha256: String

        package init(place: Place = .folder, path: String, size: Int, sha256: String) {
            self.place = place
            self.path = path
            self.size = size
            self.sha256 = sha256
        }

        enum CodingKeys: String, CodingKey {
            case place = "in"
            case path, size, sha256
        }
    }

    package struct Missing: Sendable, Equatable, Codable {
        package var id: MemoID
        package var path: String
        package var reason: String
    }

    package var generator = "reckon"
    package var reckonVersion = Reckon.version
    /// 2 since each file says where it is (`in`) and `memos.zip` is listed.
    package var schemaVersion = 2
    package var source: Source
    /// The pipeline whose run wrote the export (its `name`); nil for
    /// `reckon export`, and in exports written before runs recorded it.
    package var pipeline: String? = nil
    /// The newest modification time among the exported memos: the export's
    /// time that depends on its input only, so the same input gives the same bytes.
    package var exportedAt: Timestamp?
    package var includeArchived: Bool
    package var formats: [ExportFormat]
    /// The memos exported, Active and Archived.
    package var counts: MemoCounts
    /// Every file written, each with where it is, its size and SHA-256: in
    /// the folder's manifest first the files beside it (`memos.zip`
    /// included), then the entries of `memos.zip`; in the zip's manifest the
    /// zip's other entries. Each part sorted by the paths' UTF-8 bytes.
    package var files: [File]
    /// Memos that should have been exported but could not be read.
    package var missing: [Missing]
    /// The most bytes one memo's entry in `memos.json` takes, which is what
    /// reading the export back allows one memo: 64 MiB (the read limit of a
    /// memo file), or the longest entry when one is longer (a store's rows
    /// have no size limit). A manifest without it means 64 MiB.
    package var memoBytes = Self.defaultMemoBytes
    /// The writer of `memos.zip` and its settings (`ZipBuilder.settings`),
    /// when the export has a zip; nil in exports written before it was recorded.
    package var zipWriter: String? = nil

    /// `memoBytes` of a manifest that does not give it.
    package static let defaultMemoBytes = Int(ReadLimits().memoSizeLimit)
}

/// What an export wrote, in short: the manifest's facts without its list of
/// files (that list is in `manifest.json`), and the totals a report shows.
package struct ExportSummary: Sendable, Equatable {
    package var formats: [ExportFormat]
    package var exportedAt: Timestamp?
    package var counts: MemoCounts
    package var missing: [ExportManifest.Missing]
    /// `memos.json`'s size and SHA-256 (size 0 and no digest when neither
    /// JSON nor zip was asked for, so it was not written).
    package var json: ExportManifest.File
    /// The sizes of all Markdown files together.
    package var markdownBytes: Int
    /// `memos.zip`'s size and SHA-256, when it was asked for.
    package var zip: ExportManifest.File?
    /// How many memos were taken whole from the previous run, unread,
    /// because their files are the ones that run read.
    package var reusedMemos = 0
    /// How many zip entries were copied, compressed, from the previous run's zip.
    package var copiedZipEntries = 0
    /// How many blocks of the zip's `memos.json` were copied, compressed,
    /// from the previous run's zip, and how many it has.
    package var copiedJSONBlocks = 0
    package var jsonBlocks = 0
}
