import Foundation

/// The benchmark rows that run a fleet: `reckon run FOLDER` over many
/// nightly pipelines (deep check, export of the Drive side as JSON,
/// Markdown and zip), `--jobs 2` against `--jobs 1`. From the `--jobs 2`
/// time t of P pipelines on C cores, a fleet runs 3600 × P / (t × C)
/// pipelines per core per hour.
struct FleetRows {
    static let names = ["fleet: run --jobs 2, 200 pipelines of 1,000 memos", "fleet: run --jobs 2, 2 pipelines of 100,000 memos"]

    /// One fleet: its definitions' folder, the folder its outputs go to, its sources.
    struct Fleet {
        var name: String
        var definitions: URL
        var out: URL
        var sources: [String]
        var pipelines: Int
    }

    let scratch: URL
    let reckon: String
    let fleets: [Fleet]
    /// How many outputs were set aside so far.
    private let setAside = ArchiveRows.Counter()

    /// Generates a pair of 1,000 memos in the scratch folder and writes both
    /// fleets' definitions; the large fleet reads `pair-100k` from the data.
    init(data: String, scratch: URL, reckon: String) throws {
        self.scratch = scratch
        self.reckon = reckon
        let root = scratch.appendingPathComponent("fleet")
        let small = root.appendingPathComponent("pair-1k")
        try Generator(memos: 1_000, seed: 42).writePair(to: small)
        func fleet(_ name: String, pipelines: Int, pair: String) throws -> Fleet {
            let definitions = root.appendingPathComponent("definitions-\(name)")
            let out = root.appendingPathComponent("out-\(name)")
            try FileManager.default.createDirectory(at: definitions, withIntermediateDirectories: true)
            let (device, drive) = ("\(pair)/device/60dMemo", "\(pair)/drive/60dMemo")
            for n in 0..<pipelines {
                let user = String(format: "user-%04d", n)
                let text = """
                    {"schemaVersion": 1, "name": "\(user)",
                     "local": {"name": "device", "path": "\(device)"},
                     "remotes": [{"name": "drive", "label": "Google Drive", "path": "\(drive)"}],
                     "reports": {"dir": "\(out.path)/\(user)/reports"},
                     "export": {"from": "drive", "formats": ["json", "markdown", "zip"], "includeArchived": true, "dir": "\(out.path)/\(user)/export"}}
                    """
                try Data(text.utf8).write(to: definitions.appendingPathComponent("\(user).json"))
            }
            return Fleet(name: name, definitions: definitions, out: out, sources: [device, drive], pipelines: pipelines)
        }
        fleets = [try fleet("1k", pipelines: 200, pair: small.path), try fleet("100k", pipelines: 2, pair: "\(data)/pair-100k")]
    }

    /// Moves a fleet's outputs aside, not deleting them, so every run
    /// starts as the first night of each pipeline, on a file system that
    /// did not just free many inodes (see the export rows).
    func clear(_ fleet: Fleet) {
        let aside = scratch.appendingPathComponent("set-aside")
        try? FileManager.default.createDirectory(at: aside, withIntermediateDirectories: true)
        guard FileManager.default.fileExists(atPath: fleet.out.path) else { return }
        setAside.value += 1
        rename(fleet.out.path, aside.appendingPathComponent("\(setAside.value)-fleet-\(fleet.name)").path)
    }

    func pairs(wanted: [String]) -> [Pair] {
        zip(Self.names, fleets).filter { wanted.contains($0.0) }.map { name, fleet in
            Pair(
                name: name, reckon: [reckon, "run", "--quiet", "--jobs", "2", fleet.definitions.path],
                peer: [reckon, "run", "--quiet", "--jobs", "1", fleet.definitions.path], peerName: "reckon run --jobs 1",
                prepare: {
                    clear(fleet)
                    warm(fleet.sources)
                })
        }
    }

    /// Runs each wanted fleet once, untimed, and checks that every pipeline
    /// wrote its report and its export; prints what it found.
    func check(wanted: [String]) -> Bool {
        var whole = true
        for (name, fleet) in zip(Self.names, fleets) where wanted.contains(name) {
            clear(fleet)
            let ran = (try? capture([reckon, "run", "--quiet", fleet.definitions.path]).code) ?? -1
            let done = (0..<fleet.pipelines).filter { n in
                let user = fleet.out.appendingPathComponent(String(format: "user-%04d", n))
                return ["reports/report.json", "export/latest/memos.zip"].allSatisfy {
                    FileManager.default.fileExists(atPath: user.appendingPathComponent($0).path)
                }
            }.count
            clear(fleet)
            if ran == 0 && done == fleet.pipelines {
                say("check: \(name): every one of the \(fleet.pipelines) pipelines wrote its report and its export")
            } else {
                say("check FAILED: \(name): exit \(ran), \(done) of \(fleet.pipelines) pipelines wrote their report and export")
                whole = false
            }
        }
        return whole
    }
}
