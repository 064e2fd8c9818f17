import Foundation

/// The benchmark rows that read an export back: `reckon verify` against
/// `unzip -t`, and `reckon restore` against `unzip`, on the export of the
/// 100,000-memo Drive folder (made once, untimed, with archived memos).
struct ArchiveRows {
    static let names = ["archive: verify, 100k export", "archive: verify memos.zip, 100k", "archive: restore, 100k export"]

    let export: URL
    let zip: URL
    let scratch: URL
    let reckon: String
    /// How many outputs were set aside so far.
    private let setAside = Counter()

    final class Counter: @unchecked Sendable { var value = 0 }

    /// Exports `pair-100k/drive/60dMemo` into the scratch folder; throws when that fails.
    init(data: String, scratch: URL, reckon: String) throws {
        self.scratch = scratch
        self.reckon = reckon
        export = scratch.appendingPathComponent("archive-export")
        zip = export.appendingPathComponent("memos.zip")
        let drive = "\(data)/pair-100k/drive/60dMemo"
        let made = try capture([reckon, "export", drive, "--out", export.path, "--include-archived"])
        guard made.code == 0 else { throw BenchError("reckon export of \(drive) exited with \(made.code)") }
    }

    var restored: URL { scratch.appendingPathComponent("restored") }
    var unzipped: URL { scratch.appendingPathComponent("unzipped") }

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
        let all = [
            Pair(
                name: Self.names[0], reckon: [reckon, "verify", export.path], peer: ["unzip", "-tq", zip.path], peerName: "unzip -t (the zip alone)",
                prepare: { warm([export.path]) }),
            Pair(
                name: Self.names[1], reckon: [reckon, "verify", zip.path], peer: ["unzip", "-tq", zip.path], peerName: "unzip -t",
                prepare: { warm([zip.path]) }),
            Pair(
                name: Self.names[2], reckon: [reckon, "restore", export.path, "--to", restored.path],
                peer: ["unzip", "-q", zip.path, "-d", unzipped.path], peerName: "unzip -d",
                prepare: {
                    clear()
                    warm([export.path])
                })
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
            clear()
            let restore = try capture([reckon, "restore", export.path, "--to", restored.path])
            let reconciled = try capture([reckon, "reconcile", "--local", "\(data)/pair-100k/drive/60dMemo", "--remote", restored.path])
            clear()
            if verified.code == 0, tested.code == 0, restore.code == 0, reconciled.code == 0 {
                say("check: reckon verify and unzip -t find the 100k export whole; restored, it reconciles with pair-100k/drive, every memo '='")
                return true
            }
            say(
                "check FAILED: verify exit \(verified.code), unzip -t exit \(tested.code), restore exit \(restore.code), reconcile of the restored folder exit \(reconciled.code)"
            )
        } catch {
            say("check FAILED: \(error)")
        }
        return false
    }
}
