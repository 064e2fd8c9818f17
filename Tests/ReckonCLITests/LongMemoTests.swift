import Foundation
import ReckonCore
import TestSupport
import Testing

/// A memo longer than the 64 MiB a memo file may take: a store's row (rows
/// have no size limit) or a folder's file under a pipeline that raised
/// `limits.memoBytes`. Its export records the size it allows one memo, and
/// verify and restore go by it: an export reckon writes always verifies and
/// restores.
@Suite struct LongMemoTests {
    /// A body of about 70 MiB, with quotes, tabs, a control character and
    /// letters beyond ASCII on every line, so that escaping it does work.
    static let longBody: String = {
        let line = "Line with \"quotes\", a\ttab, a bell \u{7} and 京都 in it; back\\slash too.\n"
        return String(repeating: line, count: (70 << 20) / line.utf8.count + 1)
    }()

    static let id = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"

    /// The body of the memo file restored into `dir`, by Foundation's own JSON reader.
    func restoredBody(in dir: URL) throws -> Data {
        let file = dir.appendingPathComponent("memos/\(Self.id.lowercased()).json")
        let memo = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        return Data(try #require(memo["body"] as? String).utf8)
    }

    @Test func aStoreRowOverTheMemoLimitIsExportedVerifiedAndRestoredByteForByte() throws {
        let folder = temporaryFolder()
        let store = folder.appendingPathComponent("device/default.store").path
        try StoreBuilder().make(
            at: store,
            rows: [
                StoreBuilder.memo(Self.id, title: "Long", body: Self.longBody, modified: "2026-04-18T09:15:00Z", created: "2026-04-01T08:00:00Z")
            ])
        let export = folder.appendingPathComponent("export")
        let exported = try runArray(["export", store, "--out", export.path])
        #expect(exported.code == 0, "\(exported.stderr)")
        let manifest = try json(read(export.appendingPathComponent("manifest.json")))
        let memoBytes = try #require(manifest["memoBytes"] as? Int)
        #expect(memoBytes > Self.longBody.utf8.count, "the manifest allows the memo's entry, longer than its body")

        for checked in [export, export.appendingPathComponent("memos.zip")] {
            let verified = try runArray(["verify", checked.path])
            #expect(verified.code == 0, "\(checked.lastPathComponent): \(verified.stdout)")
        }
        let restored = folder.appendingPathComponent("restored")
        let result = try runArray(["restore", export.path, "--to", restored.path])
        #expect(result.code == 0, "\(result.stderr)")
        #expect(try restoredBody(in: restored) == Data(Self.longBody.utf8), "the body comes back byte for byte")
    }

    @Test func aFolderMemoOverTheMemoLimitFromAPipelineThatRaisedItVerifiesAndRestoresFromTheZip() throws {
        let folder = temporaryFolder()
        let memos = folder.appendingPathComponent("drive/memos")
        try FileManager.default.createDirectory(at: memos, withIntermediateDirectories: true)
        let memo: [String: Any] = [
            "id": Self.id, "title": "Long", "body": Self.longBody, "createdAt": "2026-04-01T08:00:00Z",
            "modifiedAt": "2026-04-18T09:15:00Z", "archivedAt": NSNull(), "deletedAt": NSNull(), "tags": ["long"], "pinned": false
        ]
        try JSONSerialization.data(withJSONObject: memo).write(to: memos.appendingPathComponent("\(Self.id).json"))
        try Data(
            #"{"schemaVersion":1,"entries":[{"id":"\#(Self.id)","modifiedTime":"2026-04-18T09:15:00Z","archivedAt":null,"deletedAt":null}]}"#
                .utf8
        ).write(to: folder.appendingPathComponent("drive/index.json"))
        try Data(
            #"""
            {"schemaVersion": 1, "name": "long",
             "local": {"name": "device", "label": "this device", "path": "drive"},
             "remotes": [{"name": "drive", "label": "Drive", "path": "drive"}],
             "reports": {"dir": "reports"}, "limits": {"memoBytes": 104857600},
             "export": {"from": "local", "formats": ["json", "markdown", "zip"], "dir": "exports"}}
            """#.utf8
        ).write(to: folder.appendingPathComponent("long.json"))
        let run = try runArray(["run", folder.appendingPathComponent("long.json").path])
        #expect(run.code == 0, "\(run.stdout)\(run.stderr)")
        let export = folder.appendingPathComponent("exports/latest")
        let verified = try runArray(["verify", export.path])
        #expect(verified.code == 0, "\(verified.stdout)")
        let restored = folder.appendingPathComponent("restored")
        let result = try runArray(["restore", export.appendingPathComponent("memos.zip").path, "--to", restored.path])
        #expect(result.code == 0, "\(result.stderr)")
        #expect(try restoredBody(in: restored) == Data(Self.longBody.utf8), "the body comes back byte for byte")
    }

    /// Rewrites the manifest of the export in `export` with `change` made to its text.
    func editManifest(_ export: URL, _ change: (String) -> String) throws {
        let url = export.appendingPathComponent("manifest.json")
        let text = try read(url)
        try FileManager.default.removeItem(at: url)
        try Data(change(text).utf8).write(to: url)
    }

    @Test func aManifestThatAllowsLessThanAMemoItHoldsIsRefused() throws {
        let export = try exportFolder("Samples/drift/device", extra: ["--format", "json"])
        let limit = try #require(try json(read(export.appendingPathComponent("manifest.json")))["memoBytes"] as? Int)
        #expect(limit == 64 << 20, "memos shorter than a memo file may be take the memo file's limit")
        try editManifest(export) { $0.replacingOccurrences(of: #""memoBytes" : \#(limit)"#, with: #""memoBytes" : 100"#) }
        // The whole file is read in one chunk: the byte it is refused by is its last.
        let size = try Data(contentsOf: export.appendingPathComponent("memos.json")).count
        let refusal =
            "memos.json: holds a memo, or bytes outside the memos, longer than 100 bytes (by byte \(size)), "
            + "the most manifest.json allows one (memoBytes); reckon never writes one"
        let verified = try runArray(["verify", export.path])
        #expect(verified.code == 2)
        #expect(verified.stdout.contains("damaged  " + refusal + "\n"), "\(verified.stdout)")
        let restored = try runArray(["restore", export.path, "--to", temporaryFolder().appendingPathComponent("restored").path])
        #expect(restored.code == 2)
        #expect(restored.stderr == "Error: \(export.path)/\(refusal)\n")
        try editManifest(export) { $0.replacingOccurrences(of: #""memoBytes" : 100"#, with: #""memoBytes" : "many""#) }
        let wrongKind = try runArray(["verify", export.path])
        #expect(wrongKind.code == 2)
        #expect(wrongKind.stdout.contains("manifest.json: the key memoBytes is missing or has a value reckon never writes there"))
    }

    @Test func aManifestWithoutMemoBytesAllowsTheMemoFileLimit() throws {
        let export = try exportFolder("Samples/drift/device", extra: ["--format", "json"])
        try editManifest(export) { text in
            text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains(#""memoBytes""#) }.joined(separator: "\n")
        }
        #expect(!(try read(export.appendingPathComponent("manifest.json"))).contains("memoBytes"))
        let verified = try runArray(["verify", export.path])
        #expect(verified.code == 0, "an older manifest reads as before: \(verified.stdout)")
    }
}
