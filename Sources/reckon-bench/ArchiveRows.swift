import Foundation
import ReckonCore

/// The benchmark rows that read an export back, on the export of a data
/// set's 100,000-memo Drive folder (made once, untimed, with archived
/// memos): `reckon verify` of the folder against `unzip -t` of its zip plus
/// `sha256sum -c` of every file its manifest lists; `reckon verify` of the
/// zip alone against `unzip -t`; `reckon restore` against `unzip -d D`
/// followed by `sync -f D`.
struct ArchiveRows {
    static func names(_ set: DataSet) -> [String] {
        ["archive: verify, \(set.label) export", "archive: verify memos.zip, \(set.label)", "archive: restore, \(set.label) export"]
    }

    let set: DataSet
    let export: URL
    let zip: URL
    let scratch: URL
    let reckon: String
    /// How many outputs were set aside so far.
    private let setAside = Counter()

    final class Counter: @unchecked Sendable { var value = 0 }

    /// `sha256sum -c`'s list of every file the manifest lists, by absolute path.
    let sums: URL

    /// Exports the set's Drive folder into the scratch folder and lists
    /// its manifest's files for `sha256sum -c` (in a child, so that the
    /// benchmark's own peak RSS stays small); throws when either fails.
    init(data: String, set: DataSet, scratch: URL, reckon: String) throws {
        self.set = set
        self.scratch = scratch.appendingPathComponent("archive-\(set.folder)")
        self.reckon = reckon
        export = self.scratch.appendingPathComponent("export")
        zip = export.appendingPathComponent("memos.zip")
        sums = self.scratch.appendingPathComponent("manifest.sha256")
        try FileManager.default.createDirectory(at: self.scratch, withIntermediateDirectories: true)
        let drive = "\(data)/\(set.folder)/drive/60dMemo"
        let made = try capture([reckon, "export", drive, "--out", export.path, "--include-archived"])
        guard made.code == 0 else { throw BenchError("reckon export of \(drive) exited with \(made.code)") }
        let listed = try capture([CommandLine.arguments[0], "manifest-sums", export.path, sums.path], environment: [:])
        guard listed.code == 0 else { throw BenchError("cannot list the files of \(export.path)/manifest.json: \(listed.errors)") }
        say("archive, \(set.label): \(listed.output.trimmingCharacters(in: .whitespacesAndNewlines))")
    }

    var restored: URL { scratch.appendingPathComponent("restored") }
    var unzipped: URL { scratch.appendingPathComponent("unzipped") }

    /// Writes `sha256sum`'s list for every file on disk that `export`'s
    /// manifest lists (`<sha256>  <absolute path>`): those `"in": "folder"`;
    /// the entries it lists `"in": "zip"` are what `unzip -t` inflates and checks.
    static func writeSums(export: URL, to list: URL) throws {
        let data = try Data(contentsOf: export.appendingPathComponent("manifest.json"))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], let files = object["files"] as? [[String: Any]]
        else { throw BenchError("\(export.path)/manifest.json has no list of files") }
        var text = ""
        var listed = 0
        for file in files where file["in"] as? String == ExportManifest.Place.folder.rawValue {
            listed += 1
            guard let path = file["path"] as? String, let sha = file["sha256"] as? String else {
                throw BenchError("\(export.path)/manifest.json lists a file without a path or a sha256")
            }
            text += "\(sha)  \(export.path)/\(path)\n"
        }
        try Data(text.utf8).write(to: list)
        say("listed the \(listed) files on disk of the manifest's \(files.count) for sha256sum -c (the others are in the zip)")
    }

    /// Moves the outputs of the last run aside, not deleting them, for the
    /// reason the export rows give (ext4 is slow to create files right
    /// after many were deleted).
    func clear() {
        let aside = scratch.appendingPathComponent("set-aside")
        try? FileManager.default.createDirectory(at: aside, withIntermediateDirectories: true)
        for folder in [restored, unzipped] where FileManager.default.fileExists(atPath: folder.path) {
            setAside.value += 1
            rename(folder.path, aside.appendingPathComponent("\(setAside.value)-\(folder.lastPathComponent)").path)
        }
    }

    func pairs(wanted: [String]) -> [Pair] {
        let names = Self.names(set)
        let all = [
            Pair(
                name: names[0], reckon: [reckon, "verify", export.path], peer: ["unzip", "-tq", zip.path],
                peerName: "unzip -t memos.zip + sha256sum -c of the manifest's files", prepare: { warm([export.path]) },
                peerAfter: [["sha256sum", "-c", "--quiet", "--strict", sums.path]],
                target: .atMost(1.0, "≤ 1.0× their time")),
            Pair(
                name: names[1], reckon: [reckon, "verify", zip.path], peer: ["unzip", "-tq", zip.path], peerName: "unzip -t",
                prepare: { warm([zip.path]) }, target: .atMost(1.0, "≤ 1.0× its time")),
            Pair(
                name: names[2], reckon: [reckon, "restore", export.path, "--to", restored.path],
                peer: ["unzip", "-q", zip.path, "-d", unzipped.path], peerName: "unzip -d D && sync -f D",
                prepare: {
                    clear()
                    warm([export.path])
                },
                peerAfter: [["sync", "-f", unzipped.path]],
                target: .atMost(1.0, "≤ 1.0× their time"))
        ]
        return all.filter { wanted.contains($0.name) }
    }

    /// Checks once, untimed, that the commands do what they are compared
    /// for: verify and `unzip -t` find the export whole, and the restored
    /// folder reconciles with the Drive folder it was exported from, every
    /// memo `=`. Prints what it found; false when something is off.
    func check(data: String) -> Bool {
        do {
            let verified = try capture([reckon, "verify", export.path])
            let tested = try capture(["unzip", "-tq", zip.path])
            let summed = try capture(["sha256sum", "-c", "--quiet", "--strict", sums.path])
            clear()
            let restore = try capture([reckon, "restore", export.path, "--to", restored.path])
            let reconciled = try capture([reckon, "reconcile", "--local", "\(data)/\(set.folder)/drive/60dMemo", "--remote", restored.path])
            clear()
            if verified.code == 0, tested.code == 0, summed.code == 0, restore.code == 0, reconciled.code == 0 {
                say(
                    "check: reckon verify, unzip -t and sha256sum -c find the \(set.label) export whole; restored, it reconciles with \(set.folder)/drive, every memo '='"
                )
                return true
            }
            say(
                "check FAILED: \(set.label): verify exit \(verified.code), unzip -t exit \(tested.code), sha256sum -c exit \(summed.code), restore exit \(restore.code), reconcile of the restored folder exit \(reconciled.code)"
            )
        } catch {
            say("check FAILED: \(error)")
        }
        return false
    }
}
