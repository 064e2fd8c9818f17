import Foundation
import ReckonCore
import SeededGenerator

/// reckon-bench: generates memo folders and runs reckon side by side with the
/// tools a user would reach for instead, printing medians, ratios and peak RSS.
let usage = """
    USAGE: reckon-bench generate --out <dir> [--seed <n>] [--only <text>]
           reckon-bench run --data <dir> [--rounds <n>] [--reckon <path>] [--only <text>] [--except <text>] [--set long|short]
                            [--sftp-transfers <n>] [--zip-level <n>] [--against <path>]
           reckon-bench decode-index <index.json>

      generate      writes <dir>/index-1m (1,000,000 index entries), two data sets of pairs
                    (a Drive copy and a device copy): <dir>/pair-10k and <dir>/pair-100k (memos of
                    30–429 words, ~1.5% drift) and <dir>/pair-short-10k and <dir>/pair-short-100k
                    (memos of 20–300 words, ~1% drift), <dir>/store-1m/default.store (1,000,000
                    memos in the app's Core Data store, about 2 GB) and <dir>/pair-100k/store/default.store
                    (the device copy of pair-100k as a store); --only writes the parts whose name holds
                    the text ("store", "short")
      run           runs each row's sides in turn (a warm-up of each, then reckon and each peer, for
                    --rounds rounds, 5 unless given) and prints a table with each row's target and
                    whether it was met; builds nothing: build reckon first with 'swift build -c release';
                    every row on a pair runs on both data sets, its name ending in "100k" or "100k short"
                    ("10k", "10k short"); --set long or --set short keeps one;
                    --only keeps the rows whose name holds the text ("counts", "reconcile", "export",
                    "nightly", "archive", "sftp", "first run", "1% changed", "bsdtar", "store", "fleet",
                    "report page", "short", "100k"), or one of several texts parted by '|' ("export|nightly");
                    --except leaves out the rows whose name holds the text, or one of several ("sftp|store");
                    each export row is timed against zip -qr of memos/ and against its floor: an export
                    of json and markdown made once, untimed, whose files a hidden subcommand writes again
                    and deflates at --zip-level (1) on every core, then flushes with syncfs; the peak RSS
                    rows come from the export rows of 10k and 100k of a set, run together;
                    the archive rows (verify, restore) export the set's Drive folder once first;
                    the sftp rows serve a set's Drive folder (and a copy with 1% changed) and
                    index-1m with 'rclone serve sftp' on 127.0.0.1 themselves, as the remote srv:;
                    the first run's peers are rclone copy of srv:memos at rclone's defaults and with
                    --transfers <n> (--sftp-transfers, 8: reckon's own count for sftp; give 4 for a
                    reckon that leaves rclone's default, and the second peer is left out);
                    the store and sftp rows first check once that the compared commands agree;
                    --against <path> times, instead of the peers, each row's reckon command run by
                    the binary at <path> (an old reckon) against the same command run by --reckon:
                    a warm-up of each, then old new old new … for --rounds rounds, and flags a row
                    whose new median is more than 5% slower; rows whose timed command is not reckon's
                    (the bsdtar row, the report page row) are left out;
                    the report page row ("report page") runs a deep reconcile --out of pair-100k once,
                    prints its differences and report.html's size, and times Chromium loading that page
                    (/usr/bin/chromium through /usr/bin/chromedriver) against pages of its size that run nothing
      decode-index  decodes an index.json with Foundation's JSONDecoder (a peer for counting)

    """

/// Whether a row or part named `name` is wanted: `--only`'s texts, parted
/// by '|', hold one that `name` holds; with no `--only`, every row is.
func wanted(_ name: String, only: String?) -> Bool {
    only.map { $0.split(separator: "|").contains { name.contains($0) } } ?? true
}

func value(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// What Foundation's JSONDecoder does with an index, for the counting comparison.
struct DecodedIndex: Decodable {
    struct Entry: Decodable {
        var id: String
        var modifiedTime: String
        var archivedAt: String?
        var deletedAt: String?
    }
    var schemaVersion: Int
    var entries: [Entry]
}

/// Prints a line at once (stdout to a file is otherwise buffered until exit).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "generate":
        guard let out = value("--out", in: arguments) else { throw BenchError("generate needs --out <dir>") }
        let seed = UInt64(value("--seed", in: arguments) ?? "42") ?? 42
        let root = URL(fileURLWithPath: out)
        // Hidden: --scale 0.01 writes a hundredth of every part, under the
        // same names, to try the benchmark end to end in seconds.
        let scale = Double(value("--scale", in: arguments) ?? "1") ?? 1
        func scaled(_ count: Int) -> Int { max(10, Int((Double(count) * scale).rounded())) }
        let only = value("--only", in: arguments)
        let bigStore = root.appendingPathComponent("store-1m/default.store").path
        let pairStore = root.appendingPathComponent("pair-100k/store/default.store").path
        let parts: [(name: String, store: String?, write: () throws -> Void)] = [
            ("index-1m", nil, { try Generator(memos: scaled(1_000_000), seed: seed).writeIndexOnly(to: root.appendingPathComponent("index-1m")) }),
            ("pair-10k", nil, { try Generator(memos: scaled(10_000), seed: seed).writePair(to: root.appendingPathComponent("pair-10k")) }),
            ("pair-100k", nil, { try Generator(memos: scaled(100_000), seed: seed).writePair(to: root.appendingPathComponent("pair-100k")) }),
            // The second data set (issue 34): memos of 20–300 words, ~1% drift.
            (
                DataSet.short.smallFolder, nil,
                {
                    try DataSet.short.generator(memos: scaled(10_000), seed: seed).writePair(
                        to: root.appendingPathComponent(DataSet.short.smallFolder))
                }
            ),
            (
                DataSet.short.folder, nil,
                { try DataSet.short.generator(memos: scaled(100_000), seed: seed).writePair(to: root.appendingPathComponent(DataSet.short.folder)) }
            ),
            // Bodies as in the pairs (30 to 429 words, 1.5 kB on average):
            // a row rarely shares its 4 kB page, so a million make about 2 GB.
            (
                "store-1m", bigStore,
                {
                    let generator = Generator(memos: scaled(1_000_000), seed: seed)
                    var random = SeededRandom(seed: seed)
                    try StoreWriter.write(to: bigStore, count: generator.memos) { _ in
                        generator.memo(&random, withBody: true)
                    }
                }
            ),
            // The same memos as pair-100k/device, so that reconciling the store
            // and that folder against pair-100k/drive must give the same lines.
            (
                "pair-100k/store", pairStore,
                {
                    let device = Generator(memos: scaled(100_000), seed: seed).pairMemos().device
                    try StoreWriter.write(to: pairStore, count: device.count) { device[$0] }
                }
            )
        ]
        for part in parts where wanted(part.name, only: only) {
            say("writing \(out)/\(part.name) …")
            let start = ContinuousClock.now
            try part.write()
            let took = ContinuousClock.now - start
            let seconds = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
            let size = part.store.flatMap { try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int }
            say(String(format: "  took %.1f s", seconds) + (size.map { String(format: ", %.2f GB (%d bytes)", Double($0) / 1e9, $0) } ?? ""))
        }
    case "change-memos":
        // Hidden, for the sftp rows: changes 1% of a generated memo folder in place.
        guard arguments.count > 1 else { throw BenchError("change-memos needs a memo folder") }
        let changed = try SFTPRows.changeOnePercent(of: URL(fileURLWithPath: arguments[1]))
        // With a second path: the names changed, one a line, for rclone's --files-from-raw.
        if arguments.count > 2 { try Data(changed.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: arguments[2])) }
        say("changed \(changed.count) memo files (body and modifiedAt, and index.json's modifiedTime) in the served copy")
    case "manifest-sums":
        // Hidden, for the archive rows: sha256sum's list of every file an export's manifest lists.
        guard arguments.count > 2 else { throw BenchError("manifest-sums needs an export folder and a list to write") }
        try ArchiveRows.writeSums(export: URL(fileURLWithPath: arguments[1]), to: URL(fileURLWithPath: arguments[2]))
    case "floor":
        // Hidden, the export's floor: writes an export's files again and deflates them on every core (see Floor).
        guard let from = value("--from", in: arguments), let to = value("--to", in: arguments) else {
            throw BenchError("floor needs --from <export> --to <folder>")
        }
        let level = Int32(value("--level", in: arguments) ?? "1") ?? 1
        let jobs = Int(value("--jobs", in: arguments) ?? "") ?? ProcessInfo.processInfo.activeProcessorCount
        try Floor.run(from: URL(fileURLWithPath: from), to: URL(fileURLWithPath: to), level: level, jobs: jobs)
    case "decode-index":
        guard arguments.count > 1 else { throw BenchError("decode-index needs a path") }
        let index = try JSONDecoder().decode(DecodedIndex.self, from: Data(contentsOf: URL(fileURLWithPath: arguments[1])))
        let live = index.entries.filter { $0.deletedAt == nil }
        print(#"{"active": \#(live.filter { $0.archivedAt == nil }.count), "archived": \#(live.filter { $0.archivedAt != nil }.count)}"#)
    case "run":
        guard let data = value("--data", in: arguments) else { throw BenchError("run needs --data <dir>") }
        let reckon = value("--reckon", in: arguments) ?? ".build/release/reckon"
        let against = value("--against", in: arguments)
        // 5 rounds unless asked otherwise (the longest rows may be run alone with fewer; the table's heading says how many).
        let rounds = max(1, Int(value("--rounds", in: arguments) ?? "5") ?? 5)
        let bench = CommandLine.arguments[0]
        guard FileManager.default.isExecutableFile(atPath: reckon) else {
            throw BenchError("\(reckon) is not built; run 'swift build -c release' first")
        }
        if let against, !FileManager.default.isExecutableFile(atPath: against) {
            throw BenchError("\(against) (--against) is not an executable")
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reckon-bench-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        // Each export run's output is set aside, not deleted, until the
        // benchmark ends: on ext4 without a journal, creating files within a
        // minute of deleting many is several times slower (the allocator
        // skips recently freed inodes), which would time the benchmark's own
        // clean-up instead of the tool.
        var setAside = 0
        func clear() {
            try? FileManager.default.createDirectory(at: scratch.appendingPathComponent("set-aside"), withIntermediateDirectories: true)
            for name in ["export", "memos.zip"] where FileManager.default.fileExists(atPath: scratch.appendingPathComponent(name).path) {
                setAside += 1
                rename(scratch.appendingPathComponent(name).path, scratch.appendingPathComponent("set-aside/\(setAside)-\(name)").path)
            }
        }
        let only = value("--only", in: arguments)
        let except = value("--except", in: arguments)
        /// A row is run when `--only` wants it and `--except` does not name it (both by texts parted by '|').
        func keep(_ name: String, only: String?) -> Bool {
            wanted(name, only: only) && !(except.map { $0.split(separator: "|").contains { name.contains($0) } } ?? false)
        }
        // Which data sets the pair rows run on: both unless --set names one.
        let setChoice = value("--set", in: arguments)
        let sets = DataSet.all.filter { setChoice == nil || (setChoice == "short") == ($0.label == DataSet.short.label) }
        guard setChoice == nil || setChoice == "short" || setChoice == "long" else { throw BenchError("--set takes 'long' or 'short'") }
        let sftpTransfers = Int(value("--sftp-transfers", in: arguments) ?? "8") ?? 8
        let zipLevel = value("--zip-level", in: arguments) ?? "1"
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let index = "\(data)/index-1m"
        var pairs: [Pair] = []
        let jqProgram = "[.entries[] | select(.deletedAt == null)] | group_by(.archivedAt != null) | map(length)"
        // Counts read index.json alone, which holds no bodies: one row, whatever the data set.
        pairs.append(
            Pair(
                name: "counts, 1M entries", reckon: [reckon, "counts", index, "--json"],
                peer: ["jq", jqProgram, "\(index)/index.json"], peerName: "jq", prepare: { warm([index]) },
                target: .fasterBy(40.7 * 0.95, "≥ 38.7× (issue 34's 40.7× − 5%)")))
        pairs.append(
            Pair(
                name: "counts, 1M entries", reckon: [reckon, "counts", index, "--json"],
                peer: [bench, "decode-index", "\(index)/index.json"], peerName: "JSONDecoder", prepare: { warm([index]) },
                target: .fasterBy(10, "≥ 10×")))
        // Like with like: both write their findings (reckon its four reports and, deep, the baselines; rclone its --combined file).
        let reports = scratch.appendingPathComponent("reports").path
        let combined = scratch.appendingPathComponent("combined.txt").path
        for set in sets {
            let device = "\(data)/\(set.folder)/device/60dMemo"
            let drive = "\(data)/\(set.folder)/drive/60dMemo"
            pairs.append(
                Pair(
                    name: "reconcile (deep), \(set.label)", reckon: [reckon, "reconcile", "--local", device, "--remote", drive],
                    peer: ["rclone", "check", "\(device)/memos", "\(drive)/memos"], peerName: "rclone check",
                    prepare: { warm([device, drive]) }, target: .fasterBy(4, "≥ 4×")))
            pairs.append(
                Pair(
                    name: "reconcile --quick, \(set.label)", reckon: [reckon, "reconcile", "--quick", "--local", device, "--remote", drive],
                    peer: ["rclone", "check", "--size-only", "\(device)/memos", "\(drive)/memos"], peerName: "rclone check --size-only",
                    prepare: { warm([device, drive]) }, target: .fasterBy(5, "≥ 5×")))
            pairs.append(
                Pair(
                    name: "reconcile (deep) --out, \(set.label)",
                    reckon: [reckon, "reconcile", "--local", device, "--remote", drive, "--out", reports],
                    peer: ["rclone", "check", "--combined", combined, "\(device)/memos", "\(drive)/memos"], peerName: "rclone check --combined",
                    prepare: { warm([device, drive]) }, target: .fasterBy(4.2 * 0.95, "≥ 3.99× (issue 34's 4.2× − 5%)")))
            pairs.append(
                Pair(
                    name: "reconcile --quick --out, \(set.label)",
                    reckon: [reckon, "reconcile", "--quick", "--local", device, "--remote", drive, "--out", reports],
                    peer: ["rclone", "check", "--size-only", "--combined", combined, "\(device)/memos", "\(drive)/memos"],
                    peerName: "rclone check --size-only --combined", prepare: { warm([device, drive]) },
                    target: .fasterBy(4.8 * 0.95, "≥ 4.56× (issue 34's 4.8× − 5%)")))
        }
        // The export against zip -qr of memos/ and against its floor (see Floor): an export
        // of json and markdown is made once, untimed, for each, then the floor writes its files
        // again and deflates them at the zip's level on every core.
        let exportSizes = sets.flatMap { set in [(set, set.smallLabel, set.smallFolder), (set, set.label, set.folder)] }
        for (_, label, folder) in exportSizes {
            let name = "export json,markdown,zip, \(label)"
            guard keep(name, only: only) else { continue }
            let source = "\(data)/\(folder)/drive/60dMemo"
            let zipRule = "≤ 1.0× zip's time, or ≤ 1.1× the floor where zip's time is under it"
            var row = Pair(
                name: name,
                reckon: [reckon, "export", source, "--out", scratch.appendingPathComponent("export").path, "--format", "json,markdown,zip"],
                peer: ["zip", "-qr", scratch.appendingPathComponent("memos.zip").path, "\(source)/memos"], peerName: "zip -qr",
                prepare: {
                    clear()
                    warm([source])
                },
                target: Target(text: zipRule) { reckon, zip, peers in
                    reckon <= zip || (peers["floor"].map { zip < $0 && reckon <= 1.1 * $0 } ?? false)
                })
            if against == nil {
                let made = scratch.appendingPathComponent("floor-input-\(folder)")
                guard try capture([reckon, "export", source, "--out", made.path, "--format", "json,markdown"]).code == 0 else {
                    throw BenchError("reckon export of \(source) (the floor's input) failed")
                }
                let out = scratch.appendingPathComponent("floor-out")
                row.others = [
                    Pair(
                        name: name, reckon: [],
                        peer: [bench, "floor", "--from", made.path, "--to", out.path, "--level", zipLevel, "--jobs", String(cores)],
                        peerName: "floor",
                        prepare: {
                            clear()
                            warm([source, made.path])
                        },
                        cleanup: {
                            try? FileManager.default.createDirectory(
                                at: scratch.appendingPathComponent("set-aside"), withIntermediateDirectories: true)
                            setAside += 1
                            rename(out.path, scratch.appendingPathComponent("set-aside/\(setAside)-floor").path)
                        },
                        target: Target(text: "≤ 1.1× the floor where zip's time is under it") { reckon, floor, peers in
                            (peers["zip -qr"] ?? 0) >= floor || reckon <= 1.1 * floor
                        })
                ]
            }
            pairs.append(row)
        }
        // libarchive alone (its own tool, bsdtar) zipping an export's Markdown files and
        // memos.json as reckon's zip thread did until issue 34, one deflate stream per entry at
        // level 1, against zip -qr. The export is made once, untimed, when the row is wanted.
        // glibc is told not to trim the heap, as it would after every entry in bsdtar's one
        // thread (a brk call and fresh pages each time; reckon's zip thread is spared that).
        for set in sets {
            let floorName = "bsdtar alone zips the \(set.label) export's files"
            let floorExport = scratch.appendingPathComponent("libarchive-export-\(set.folder)")
            // Old against new, it has no reckon command to time: not set up.
            let floorWanted = against == nil && keep(floorName, only: only)
            if floorWanted && which("bsdtar") == nil {
                say("the bsdtar row needs bsdtar (apt-get install libarchive-tools): skipped")
            } else if floorWanted {
                let drive = "\(data)/\(set.folder)/drive/60dMemo"
                guard try capture([reckon, "export", drive, "--out", floorExport.path, "--format", "json,markdown"]).code == 0 else {
                    throw BenchError("reckon export of \(drive) failed")
                }
                pairs.append(
                    Pair(
                        name: floorName,
                        reckon: [
                            "bsdtar", "--no-acls", "--no-xattrs", "--no-fflags", "--no-read-sparse", "--format", "zip",
                            "--options", "zip:compression=deflate,zip:compression-level=1,zip:hdrcharset=UTF-8",
                            "-cf", scratch.appendingPathComponent("floor.zip").path, "-C", floorExport.path, "markdown", "memos.json"
                        ],
                        peer: ["zip", "-qr", scratch.appendingPathComponent("memos.zip").path, "\(drive)/memos"], peerName: "zip -qr",
                        prepare: {
                            clear()
                            warm([drive, floorExport.path])
                        },
                        environment: ["GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1073741824"]))
            }
        }
        let storePaths = StoreRows.Paths(data: data, scratch: scratch)
        pairs += StoreRows.pairs(storePaths, reckon: reckon)
        var selected = pairs.filter { keep($0.name, only: only) }
        // The rows over a served folder start their servers only when selected, and stop them on the way out.
        var sftp: [SFTPRows] = []
        defer { for rows in sftp { rows.stop() } }
        for (n, set) in sets.enumerated() {
            // The counts row once, with the first set.
            let sftpWanted = SFTPRows.names(set).filter { keep($0, only: only) && (n == 0 || $0 != SFTPRows.counts) }
            guard !sftpWanted.isEmpty else { continue }
            if which("rclone") == nil {
                say("the sftp rows need rclone (apt-get install rclone): skipped")
                break
            }
            let rows = try SFTPRows(
                data: data, set: set, scratch: scratch, reckon: reckon, jqProgram: jqProgram, transfers: sftpTransfers, wanted: sftpWanted)
            sftp.append(rows)
            selected += rows.pairs
            if !rows.check() { say("the sftp rows compare commands that disagree; see above") }
            var own = rusage()
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &own)
            say(
                "reckon-bench's own peak RSS after setting up the sftp rows: \(own.ru_maxrss / 1024) MB (a child spawned from it shows at least that)"
            )
            say("")
        }
        for set in sets {
            let archiveWanted = ArchiveRows.names(set).filter { keep($0, only: only) }
            if !archiveWanted.isEmpty {
                let archive = try ArchiveRows(data: data, set: set, scratch: scratch, reckon: reckon)
                if !archive.check(data: data) { say("the archive rows compare commands that disagree; see above") }
                selected += archive.pairs(wanted: archiveWanted)
            }
        }
        let fleetWanted = FleetRows.names.filter { keep($0, only: only) }
        if !fleetWanted.isEmpty {
            let fleet = try FleetRows(data: data, scratch: scratch, reckon: reckon)
            if !fleet.check(wanted: fleetWanted) { say("the fleet rows did not run every pipeline; see above") }
            selected += fleet.pairs(wanted: fleetWanted)
        }
        for set in sets where keep(IncrementalRows.name(set), only: only) {
            selected.append(try IncrementalRows(data: data, set: set, scratch: scratch, reckon: reckon).pair)
        }
        // Once, untimed: the compared commands must give the same answers.
        let countsStore = selected.contains { $0.name == "counts, 1M-row store" }
        let reconcileStore = selected.contains { $0.name.hasSuffix("store vs folder") }
        if countsStore || reconcileStore {
            if !StoreRows.check(
                storePaths, reckon: reckon, scratch: scratch, counts: countsStore && which("sqlite3") != nil, reconcile: reconcileStore)
            {
                say("the store rows compare commands that disagree; see above")
            }
            say("")
        }
        if let against {
            // Each row's reckon command once (the 1M counts row has two peers, one command; the two
            // sftp reconcile rows share a command, not a name).
            var seen = Set<[String]>()
            let rows = selected.compactMap { $0.against(against, new: reckon) }.filter { seen.insert([$0.name] + $0.peer).inserted }
            say(
                "reckon-bench: old \(against) against new \(reckon), the same command for each row; \(rounds) rounds after a warm-up, old new alternately, each run from a warm page cache; medians of wall time, peak RSS of the child"
            )
            say("")
            say("| row | old | new | ratio (new / old) | old peak RSS | new peak RSS | |")
            say("| --- | --- | --- | --- | --- | --- | --- |")
            var slower: [String] = []
            for row in rows {
                let (old, new) = try row.run(rounds: rounds)
                let to = median(old.map(\.seconds))
                let tn = median(new.map(\.seconds))
                let ro = old.map(\.peakKilobytes).max()! / 1024
                let rn = new.map(\.peakKilobytes).max()! / 1024
                // Issue 30's bar: no row's median more than 5% slower.
                let flag = tn > to * 1.05 ? String(format: "SLOWER by %.1f%%", (tn / to - 1) * 100) : ""
                if !flag.isEmpty { slower.append(row.name) }
                say(String(format: "| %@ | %.3f s | %.3f s | %.3f | %d MB | %d MB | %@ |", row.name, to, tn, tn / to, ro, rn, flag))
                // Both binaries ran the same command on the same input: their exit codes should agree too.
                let codes = (Set(old.map(\.exitCode)), Set(new.map(\.exitCode)))
                if codes.0 != codes.1 || (old + new).contains(where: { $0.exitCode > 1 }) {
                    say("|  | note: old exited \(codes.0.sorted()), new \(codes.1.sorted()) | | | | | |")
                }
            }
            say("")
            say(
                rows.isEmpty
                    ? "no selected row runs reckon"
                    : slower.isEmpty
                        ? "no row's new median is more than 5% slower than the old"
                        : "new median more than 5% slower than the old: \(slower.joined(separator: "; "))")
            break
        }
        // The report page row is a figure of its own, printed after the table (or alone).
        var pageRuns = keep(ReportPageRow.name, only: only)
        if pageRuns, let missing = ["/usr/bin/chromium", "/usr/bin/chromedriver"].first(where: { !FileManager.default.isExecutableFile(atPath: $0) })
        {
            say("the report page row needs \(missing) (apt-get install chromium chromium-driver): skipped")
            pageRuns = false
        }
        if !pageRuns || !selected.isEmpty {
            say(
                "reckon-bench: \(rounds) round\(rounds == 1 ? "" : "s") after a warm-up, reckon then each peer in turn, each run from a warm page cache; medians of wall time and of CPU time (user + system, with the children each waited for), peak RSS of the child"
            )
            say("data sets: " + sets.map { "\($0.label): \($0.folder) and \($0.smallFolder), \($0.description)" }.joined(separator: "; "))
            say("")
            say(
                "| comparison | reckon | peer | peer time | ratio (peer / reckon) | reckon CPU | peer CPU | reckon peak RSS | peer peak RSS | target | met |"
            )
            say("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        }
        /// reckon's median and peak RSS by row, for the rows computed from others (peak RSS at 10k and 100k).
        var results: [String: (seconds: Double, peakMB: Int)] = [:]
        for pair in selected {
            let peers = [pair] + pair.others
            if let missing = peers.flatMap({ [$0.peer] + $0.peerAfter + ($0.peerPipedInto.map { [$0] } ?? []) }).map({ $0[0] }).first(where: {
                which($0) == nil && !FileManager.default.isExecutableFile(atPath: $0)
            }) {
                say("| \(pair.name) | – | \(pair.peerName) | skipped: \(missing) is not installed | | | | | | | |")
                continue
            }
            let (a, b) = try pair.runAll(rounds: rounds)
            let ta = median(a.map(\.seconds))
            let ca = median(a.map(\.cpuSeconds))
            let ra = a.map(\.peakKilobytes).max()! / 1024
            results[pair.name] = (ta, ra)
            let medians = Dictionary(zip(peers.map(\.peerName), b.map { median($0.map(\.seconds)) })) { first, _ in first }
            for (peer, runs) in zip(peers, b) {
                let tb = median(runs.map(\.seconds))
                let cb = median(runs.map(\.cpuSeconds))
                let rb = runs.map(\.peakKilobytes).max()! / 1024
                let met = peer.target.map { $0.met(ta, tb, medians) ? "yes" : "no" } ?? ""
                say(
                    String(
                        format: "| %@ | %.3f s | %@ | %.3f s | %.2f× | %.2f s | %.2f s | %d MB | %d MB | %@ | %@ |", pair.name, ta,
                        peer.peerName.replacingOccurrences(of: "|", with: "\\|"), tb,
                        tb / ta, ca, cb, ra, rb, peer.target?.text ?? "", met))
            }
            // A run that failed timed the wrong thing (1 is drift found, or rclone's differences).
            if let failed = (a + b.flatMap { $0 }).first(where: { $0.exitCode > 1 }) {
                say("|  | note: a run of this row exited with \(failed.exitCode) | | | | | | | | | |")
            }
        }
        // Peak RSS of the export at 10k against 100k, from the export rows above.
        for set in sets {
            guard let small = results["export json,markdown,zip, \(set.smallLabel)"], let large = results["export json,markdown,zip, \(set.label)"]
            else { continue }
            let met = large.peakMB <= small.peakMB + 30 && large.peakMB <= 200
            say(
                "| peak RSS, export, \(set.label) against \(set.smallLabel) | \(large.peakMB) MB | the export of \(set.smallLabel) | \(small.peakMB) MB | | | | | | ≤ the 10k peak + 30 MB and ≤ 200 MB | \(met ? "yes" : "no") |"
            )
        }
        if pageRuns {
            if !selected.isEmpty { say("") }
            try ReportPageRow.run(data: data, scratch: scratch, reckon: reckon, rounds: rounds)
        }
    default:
        print(usage, terminator: "")
        if let first = arguments.first, first != "--help", first != "-h" {
            FileHandle.standardError.write(Data("Error: Unknown subcommand '\(first)'\n".utf8))
            exit(64)
        }
    }
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(2)
}
