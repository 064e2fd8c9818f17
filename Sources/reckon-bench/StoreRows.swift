import Foundation

/// The benchmark rows where the device is a store.
enum StoreRows {
    /// What a careful person runs on a copy of the store: the integrity
    /// check reckon runs, then Active and Archived of the memo entity with
    /// soft-deleted memos left out.
    static let peerSQL = """
        PRAGMA quick_check;
        SELECT CASE WHEN ZARCHIVEDAT IS NULL THEN 'Active' ELSE 'Archived' END AS state, COUNT(*) FROM ZMEMO
          WHERE Z_ENT IN (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Memo') AND ZDELETEDAT IS NULL
          GROUP BY state ORDER BY state;
        """

    struct Paths {
        var bigStore: String
        var pairStore: String
        var device: String
        var drive: String
        /// Where the peer script copies the store.
        var copy: URL

        init(data: String, scratch: URL) {
            bigStore = "\(data)/store-1m/default.store"
            pairStore = "\(data)/pair-100k/store/default.store"
            device = "\(data)/pair-100k/device/60dMemo"
            drive = "\(data)/pair-100k/drive/60dMemo"
            copy = scratch.appendingPathComponent("store-copy")
        }

        /// The peer script's commands: `cp` of the store (and its `-wal`
        /// when there is one) into the scratch folder, then `sqlite3` on the copy.
        var peerCopy: [String] {
            ["cp", bigStore] + (FileManager.default.fileExists(atPath: bigStore + "-wal") ? [bigStore + "-wal"] : []) + [copy.path]
        }
        var peerQuery: [String] { ["sqlite3", copy.appendingPathComponent("default.store").path, StoreRows.peerSQL] }

        /// An empty scratch folder for the copy (untimed).
        func clearCopy() {
            try? FileManager.default.removeItem(at: copy)
            try? FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        }
    }

    static func pairs(_ paths: Paths, reckon: String) -> [Pair] {
        let storeFolder = (paths.bigStore as NSString).deletingLastPathComponent
        let pairStoreFolder = (paths.pairStore as NSString).deletingLastPathComponent
        return [
            Pair(
                name: "counts, 1M-row store", reckon: [reckon, "counts", paths.bigStore, "--json"],
                peer: paths.peerCopy, peerName: "cp + sqlite3 quick_check, GROUP BY",
                prepare: {
                    paths.clearCopy()
                    warm([storeFolder])
                },
                peerAfter: [paths.peerQuery], cleanup: { try? FileManager.default.removeItem(at: paths.copy) }),
            Pair(
                name: "reconcile (deep), 100k store vs folder", reckon: [reckon, "reconcile", "--local", paths.pairStore, "--remote", paths.drive],
                peer: [reckon, "reconcile", "--local", paths.device, "--remote", paths.drive], peerName: "reckon, folder vs folder",
                prepare: { warm([pairStoreFolder, paths.device, paths.drive]) })
        ]
    }

    /// Checks once, untimed, that the compared commands agree: reckon's
    /// counts with the peer script's, and the store-vs-folder reconcile with
    /// the folder-vs-folder one, line by line. Prints what it found; false
    /// when they differ.
    static func check(_ paths: Paths, reckon: String, scratch: URL, counts: Bool, reconcile: Bool) -> Bool {
        var agreed = true
        if counts {
            do {
                let ours = try capture([reckon, "counts", paths.bigStore, "--json"])
                paths.clearCopy()
                _ = try capture(paths.peerCopy)
                let theirs = try capture(paths.peerQuery)
                try? FileManager.default.removeItem(at: paths.copy)
                let object = (try? JSONSerialization.jsonObject(with: Data(ours.output.utf8))) as? [String: Any]
                let active = object?["active"] as? Int
                let archived = object?["archived"] as? Int
                let lines = theirs.output.split(separator: "\n").map(String.init)
                let expected = ["ok", "Active|\(active ?? -1)", "Archived|\(archived ?? -1)"]
                if ours.code == 0, theirs.code == 0, lines == expected {
                    say(
                        "check: reckon counts and the sqlite3 script agree on the 1M-row store: Active \(active!), Archived \(archived!), quick_check ok"
                    )
                } else {
                    agreed = false
                    say(
                        "check FAILED: reckon counts (exit \(ours.code)) gave active \(active.map(String.init) ?? "?"), archived \(archived.map(String.init) ?? "?"); sqlite3 (exit \(theirs.code)) gave \(lines.joined(separator: "; "))"
                    )
                }
            } catch {
                agreed = false
                say("check FAILED: \(error)")
            }
        }
        if reconcile {
            do {
                var combined: [[String]] = []
                var codes: [Int32] = []
                for (name, local) in [("store", paths.pairStore), ("folder", paths.device)] {
                    let out = scratch.appendingPathComponent("check-\(name)")
                    try? FileManager.default.removeItem(at: out)
                    codes.append(try capture([reckon, "reconcile", "--local", local, "--remote", paths.drive, "--out", out.path]).code)
                    let text = (try? String(contentsOf: out.appendingPathComponent("combined.txt"), encoding: .utf8)) ?? ""
                    combined.append(text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
                    try? FileManager.default.removeItem(at: out)
                }
                let differences = combined[1].filter { !$0.isEmpty && !$0.hasPrefix("=") }.count
                if codes[0] == codes[1], codes[0] < 2, combined[0] == combined[1], combined[0].count > 1 {
                    say(
                        "check: reconcile of the 100k store and of the 100k device folder against Drive give the same combined.txt (\(combined[0].filter { !$0.isEmpty }.count) lines, \(differences) not '=', exit \(codes[0]))"
                    )
                } else {
                    agreed = false
                    let store = Set(combined[0])
                    let folder = Set(combined[1])
                    let onlyStore = combined[0].filter { !folder.contains($0) }
                    let onlyFolder = combined[1].filter { !store.contains($0) }
                    say(
                        "check FAILED: reconcile exits \(codes[0]) (store) and \(codes[1]) (folder); combined.txt \(combined[0].count) and \(combined[1].count) lines; \(onlyStore.count) lines only from the store, \(onlyFolder.count) only from the folder"
                    )
                    for line in onlyStore.prefix(5) { say("  store:  \(line)") }
                    for line in onlyFolder.prefix(5) { say("  folder: \(line)") }
                }
            } catch {
                agreed = false
                say("check FAILED: \(error)")
            }
        }
        return agreed
    }
}

/// Runs a command, untimed, and returns its standard output and exit code.
func capture(_ command: [String]) throws -> (output: String, code: Int32) {
    guard let path = command[0].contains("/") ? command[0] : which(command[0]) else { throw BenchError("\(command[0]) is not installed") }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = Array(command.dropFirst())
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (String(decoding: output, as: UTF8.self), process.terminationStatus)
}
