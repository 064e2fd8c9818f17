import Foundation
import ReckonCore
import TestSupport
import Testing

/// One memo of a memo folder, written as the app writes one.
struct FolderMemo {
    var id: String
    var title = "Groceries"
    var body = "Milk\nEggs"
    var tags = ["home"]
    var modified = "2026-04-19T14:32:00Z"

    /// Writes `index.json` and `memos/<id>.json` for `memos` into `url`.
    static func write(_ memos: [FolderMemo], to url: URL) throws {
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url.appendingPathComponent("memos"), withIntermediateDirectories: true)
        var entries: [[String: Any]] = []
        for memo in memos {
            entries.append(["id": memo.id, "modifiedTime": memo.modified, "archivedAt": NSNull(), "deletedAt": NSNull()])
            let file: [String: Any] = [
                "id": memo.id, "title": memo.title, "body": memo.body, "createdAt": "2026-04-01T00:00:00Z", "modifiedAt": memo.modified,
                "archivedAt": NSNull(), "deletedAt": NSNull(), "tags": memo.tags, "pinned": false
            ]
            try JSONSerialization.data(withJSONObject: file, options: [.sortedKeys]).write(to: url.appendingPathComponent("memos/\(memo.id).json"))
        }
        try JSONSerialization.data(withJSONObject: ["schemaVersion": 1, "entries": entries], options: [.sortedKeys])
            .write(to: url.appendingPathComponent("index.json"))
    }
}

/// `reckon show`: one memo's two versions side by side and its body's diff,
/// compared with what a person expects to read, written out by hand.
@Suite struct ShowCommandTests {
    static let groceries = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
    /// Shares its first 8 hex digits with `groceries`.
    static let twin = "3F2504E0-7425-40DE-944B-E07FC1F90AE7"

    /// `device` and `drive` folders in a fresh folder, each holding `groceries` as given.
    static func sides(device: FolderMemo = FolderMemo(id: groceries), drive: FolderMemo = FolderMemo(id: groceries)) throws -> URL {
        let folder = temporaryFolder()
        try FolderMemo.write([device], to: folder.appendingPathComponent("device"))
        try FolderMemo.write([drive], to: folder.appendingPathComponent("drive"))
        return folder
    }

    static func show(_ arguments: [String], in folder: URL, environment: [String: String] = [:]) throws -> RunResult {
        try runArray(["show"] + arguments + ["--local", "device", "--remote", "drive"], environment: environment, in: folder)
    }

    @Test func theSameMemoExitsZeroAndSaysSo() throws {
        let folder = try Self.sides()
        let same = try Self.show(["3f2504e0"], in: folder)
        #expect(same.code == 0, "\(same.stderr)")
        #expect(same.stderr.isEmpty)
        #expect(
            same.stdout == """
                3f2504e0-4f89-11d3-9a0c-0305e82c3301  the same on this device and Google Drive

                            this device            Google Drive
                  title     Groceries              Groceries
                  tags      home                   home
                  created   2026-04-01T00:00:00Z   2026-04-01T00:00:00Z
                  modified  2026-04-19T14:32:00Z   2026-04-19T14:32:00Z
                  pinned    no                     no

                body: the same on both sides
                  Milk
                  Eggs

                """)
    }

    /// A differing title, tags and body: exit 1, the fields marked, the
    /// body's lines removed and added; plain in a pipe, coloured at a terminal.
    @Test func differingTitleTagsAndBodyExitOneWithTheDiff() throws {
        let folder = try Self.sides(
            drive: FolderMemo(id: Self.groceries, title: "Groceries for Sunday", body: "Milk\nEggs, a dozen\nMiso", tags: ["shop", "home"]))
        let differs = try Self.show(["3F2504E0-4F89"], in: folder)
        #expect(differs.code == 1, "\(differs.stderr)")
        #expect(
            differs.stdout == """
                3f2504e0-4f89-11d3-9a0c-0305e82c3301  differs: title, tags, body

                            this device            Google Drive
                * title     Groceries              Groceries for Sunday
                * tags      home                   home, shop
                  created   2026-04-01T00:00:00Z   2026-04-01T00:00:00Z
                  modified  2026-04-19T14:32:00Z   2026-04-19T14:32:00Z
                  pinned    no                     no

                body (- this device, + Google Drive; 1 removed, 2 added):
                  Milk
                - Eggs
                + Eggs, a dozen
                + Miso

                """)
        #expect(!differs.stdout.contains("\u{1B}"), "no escape bytes in a pipe")

        // At a terminal (script gives it one), the same in colour; NO_COLOR takes it away again.
        func atTerminal(_ environment: [String: String]) throws -> String {
            let command = "env -u NO_COLOR \(reckonBinary.path) show 3f2504e0 --local device --remote drive 2>/dev/null"
            let result = try runTool("script", ["-qec", command, "/dev/null"], in: folder, environment: environment)
            return result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        }
        let coloured = try atTerminal(["TERM": "xterm"])
        #expect(coloured.contains("\u{1B}[31m- Eggs\u{1B}[0m\n") && coloured.contains("\u{1B}[32m+ Miso\u{1B}[0m\n"), "\(coloured)")
        #expect(coloured.contains("\u{1B}[1;33m*\u{1B}[0m title     \u{1B}[31mGroceries\u{1B}[0m"), "\(coloured)")
        let plain = try runTool(
            "script", ["-qec", "\(reckonBinary.path) show 3f2504e0 --local device --remote drive 2>/dev/null", "/dev/null"], in: folder,
            environment: ["NO_COLOR": "1"])
        #expect(plain.stdout.replacingOccurrences(of: "\r\n", with: "\n") == differs.stdout)
    }

    /// With a pipeline, each side is labelled as the definition labels it.
    @Test func aPipelineLabelsTheSidesAndNamesItsRemote() throws {
        let folder = try Self.sides(drive: FolderMemo(id: Self.groceries, body: "Milk"))
        try FileManager.default.copyItem(at: folder.appendingPathComponent("drive"), to: folder.appendingPathComponent("nas"))
        try Data(
            #"""
            {"name": "home", "local": {"label": "my phone", "path": "device"},
             "remotes": [{"name": "drive", "label": "Drive", "path": "drive"}, {"name": "nas", "label": "the NAS", "path": "nas"}]}
            """#.utf8
        ).write(to: folder.appendingPathComponent("p.json"))
        let unnamed = try runArray(["show", "3f2504e0", "p.json"], in: folder)
        #expect(unnamed.code == 64)
        #expect(unnamed.stderr.hasPrefix("Error: p.json has 2 remotes; name the one to compare with '--remote <name>' (drive, nas)"))
        let named = try runArray(["show", "3f2504e0", "p.json", "--remote", "nas"], in: folder)
        #expect(named.code == 1)
        #expect(
            named.stdout == """
                3f2504e0-4f89-11d3-9a0c-0305e82c3301  differs: body

                            my phone               the NAS
                  title     Groceries              Groceries
                  tags      home                   home
                  created   2026-04-01T00:00:00Z   2026-04-01T00:00:00Z
                  modified  2026-04-19T14:32:00Z   2026-04-19T14:32:00Z
                  pinned    no                     no

                body (- my phone, + the NAS; 1 removed, 0 added):
                  Milk
                - Eggs

                """)
        let json = try json(try runArray(["show", "3f2504e0", "p.json", "--remote", "nas", "--json"], in: folder).stdout)
        #expect(json["pipeline"] as? String == "home")
        #expect((json["remote"] as? [String: Any])?["name"] as? String == "nas")
        let neither = try runArray(["show", "3f2504e0"], in: folder)
        #expect(neither.code == 64)
        #expect(neither.stderr.hasPrefix("Error: Give a pipeline definition, or both '--local <path>' and '--remote <path>'\n"))
    }

    @Test func jsonHasBothVersionsTheFieldsThatDifferAndTheDiff() throws {
        let folder = try Self.sides(drive: FolderMemo(id: Self.groceries, title: "Groceries for Sunday", body: "Milk\nMiso"))
        let printed = try Self.show(["3f2504e0", "--json"], in: folder)
        #expect(printed.code == 1)
        let shown = try json(printed.stdout)
        #expect(shown["id"] as? String == "3f2504e0-4f89-11d3-9a0c-0305e82c3301")
        #expect(shown["same"] as? Bool == false)
        #expect(shown["sigil"] as? String == "*" && shown["kind"] as? String == "changed")
        #expect(shown["differs"] as? [String] == ["title", "body"])
        #expect(shown["pipeline"] as? String == "reconcile")
        let local = try #require(shown["local"] as? [String: Any])
        let remote = try #require(shown["remote"] as? [String: Any])
        #expect(local["label"] as? String == "this device" && remote["label"] as? String == "Google Drive")
        #expect(remote["name"] as? String == "remote")
        #expect((local["memo"] as? [String: Any])?["title"] as? String == "Groceries")
        #expect((remote["memo"] as? [String: Any])?["body"] as? String == "Milk\nMiso")
        for side in [local, remote] {
            let token = try #require(side["fingerprint"] as? String)
            #expect(token.wholeMatch(of: /1776609120\.000000000-0-_-_-[0-9a-f]{16}/) != nil, "\(token)")
        }
        #expect(local["fingerprint"] as? String != remote["fingerprint"] as? String)
        let diff = try #require(shown["diff"] as? [String: Any])
        #expect(diff["removed"] as? Int == 1 && diff["added"] as? Int == 1)
        #expect(diff["pieces"] as? [[String: String]] == [["same": "Milk"], ["removed": "Eggs"], ["added": "Miso"]])
        let same = try json(try runArray(["show", "3f2504e0", "--json", "--local", "device", "--remote", "device"], in: folder).stdout)
        #expect(same["same"] as? Bool == true && same["sigil"] as? String == "=" && same["kind"] is NSNull)
        #expect(same["differs"] as? [String] == [])
    }

    /// At least 8 hex digits; a start two ids share lists them; an id no side holds is named.
    @Test func anIdCutShortNamesOneMemoOrIsRefused() throws {
        let folder = try Self.sides()
        try FolderMemo.write(
            [FolderMemo(id: Self.groceries), FolderMemo(id: Self.twin, title: "Twin")], to: folder.appendingPathComponent("device"))
        let short = try Self.show(["3f2504e"], in: folder)
        #expect(short.code == 64)
        #expect(short.stdout.isEmpty)
        #expect(short.stderr.hasPrefix("Error: '3f2504e' is too short to name a memo: give at least 8 hex digits of its id\nUsage: reckon show"))
        let shared = try Self.show(["3F2504E0"], in: folder)
        #expect(shared.code == 64)
        #expect(
            shared.stderr.hasPrefix(
                """
                Error: '3F2504E0' starts the ids of 2 memos; give more of its digits:
                  3f2504e0-4f89-11d3-9a0c-0305e82c3301
                  3f2504e0-7425-40de-944b-e07fc1f90ae7
                Usage: reckon show
                """), "\(shared.stderr)")
        let twin = try Self.show(["3f2504e07425"], in: folder)
        #expect(twin.code == 1, "only on this device")
        #expect(twin.stdout.hasPrefix("3f2504e0-7425-40de-944b-e07fc1f90ae7  only on this device\n"))
        let unknown = try Self.show(["0badc0de"], in: folder)
        #expect(unknown.code == 64)
        #expect(unknown.stderr.hasPrefix("Error: '0badc0de' is not the start of the id of any memo on this device or Google Drive\n"))
        let whole = try Self.show(["0badc0de-0000-4000-8000-000000000000"], in: folder)
        #expect(whole.stderr.hasPrefix("Error: '0badc0de-0000-4000-8000-000000000000' is not the id of any memo on this device or Google Drive\n"))
        let notHex = try Self.show(["groceries"], in: folder)
        #expect(notHex.code == 64)
        #expect(notHex.stderr.hasPrefix("Error: 'groceries' is not a memo id: give its id, or at least its first 8 hex digits"))
    }

    /// A damaged memo file on one side is trouble, named with why; the other side's version is still shown.
    @Test func aDamagedMemoFileIsTroubleNamingTheFile() throws {
        let folder = try Self.sides()
        try Data("{ not json".utf8).write(to: folder.appendingPathComponent("drive/memos/\(Self.groceries).json"))
        let damaged = try Self.show(["3f2504e0"], in: folder)
        #expect(damaged.code == 2)
        #expect(damaged.stdout.hasPrefix("3f2504e0-4f89-11d3-9a0c-0305e82c3301  cannot be compared\n"), "\(damaged.stdout)")
        #expect(damaged.stdout.hasSuffix("body: not compared, as a side's version could not be read\n"))
        #expect(damaged.stdout.contains("  title     Groceries              (none)\n"), "\(damaged.stdout)")
        #expect(damaged.stderr.hasPrefix("error: drive/memos/\(Self.groceries).json: "), "\(damaged.stderr)")
        #expect(damaged.stderr.split(separator: "\n").count == 1)
        let json = try json(try Self.show(["3f2504e0", "--json"], in: folder).stdout)
        #expect(((json["remote"] as? [String: Any])?["problems"] as? [String])?.first?.hasPrefix("drive/memos/\(Self.groceries).json: ") == true)
        // A side that cannot be read at all: nothing to show.
        try FileManager.default.removeItem(at: folder.appendingPathComponent("drive/index.json"))
        let gone = try Self.show(["3f2504e0"], in: folder)
        #expect(gone.code == 2)
        #expect(gone.stdout.isEmpty)
        #expect(gone.stderr.hasPrefix("Error: nothing can be shown: Google Drive (drive) could not be read: "), "\(gone.stderr)")
    }

    /// A damaged index.json is trouble even where the memo itself reads the same on both sides, and an
    /// id typed with a line break is shown escaped.
    @Test func aDamagedIndexIsTroubleAndAnIdIsShownEscaped() throws {
        let folder = try Self.sides()
        try Data(#"{"schemaVersion":1,"entries":["#.utf8).write(to: folder.appendingPathComponent("drive/index.json"))
        let shown = try Self.show(["3f2504e0"], in: folder)
        #expect(shown.code == 2, "\(shown.stdout)\(shown.stderr)")
        #expect(shown.stderr.contains("drive/index.json: "), "\(shown.stderr)")
        let typed = try Self.show(["3f2504e0\n"], in: folder)
        #expect(typed.code == 64)
        #expect(typed.stderr.contains(#"'3f2504e0\u{a}'"#), "\(typed.stderr)")
    }

    /// The app's store (made with SQLite) against a memo folder.
    @Test func aStoreAgainstAFolder() throws {
        let folder = temporaryFolder()
        var rows = driftDeviceRows
        rows[0] = StoreBuilder.memo(
            "3F2504E0-4F89-11D3-9A0C-0305E82C3301", title: "Groceries!", body: "Milk, eggs, miso, green onions.\nRice.",
            modified: "2026-04-18T09:15:00Z", created: "2026-04-01T08:00:00Z", tags: ["home"], pinned: true)
        let store = folder.appendingPathComponent("default.store").path
        try StoreBuilder().make(at: store, rows: rows)
        let drive = packageRoot.appendingPathComponent("Samples/drift/drive").path
        let shown = try runArray(["show", "3f2504e0", "--local", store, "--remote", drive])
        #expect(shown.code == 1, "\(shown.stderr)")
        #expect(
            shown.stdout == """
                3f2504e0-4f89-11d3-9a0c-0305e82c3301  differs: title, body

                            this device            Google Drive
                * title     Groceries!             Groceries
                  tags      home                   home
                  created   2026-04-01T08:00:00Z   2026-04-01T08:00:00Z
                  modified  2026-04-18T09:15:00Z   2026-04-18T09:15:00Z
                  pinned    yes                    yes

                body (- this device, + Google Drive; 1 removed, 0 added):
                  Milk, eggs, miso, green onions.
                - Rice.

                """)
        let same = try runArray(["show", "7C9E6679", "--local", store, "--remote", drive, "--json"])
        #expect(same.code == 0)
        let local = try #require(try json(same.stdout)["local"] as? [String: Any])
        #expect((local["fingerprint"] as? String)?.contains("-0-1-_-") == true, "a store's row version is part of its fingerprint")
    }
}
