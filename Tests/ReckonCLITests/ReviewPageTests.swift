import Foundation
import ReckonCore
import TestSupport
import Testing

/// Two copies of `Samples/drift/drive` as a device and a drive folder (the
/// same memos on both), in a scratch folder: a pair to edit one side of.
struct SamplePair {
    let folder: URL
    var device: URL { folder.appendingPathComponent("device") }
    var drive: URL { folder.appendingPathComponent("drive") }
    var out: URL { folder.appendingPathComponent("out") }
    /// `Groceries`, which the tests edit.
    static let groceries = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"

    init() throws {
        folder = temporaryFolder()
        let sample = packageRoot.appendingPathComponent("Samples/drift/drive/60dMemo")
        for side in ["device", "drive"] {
            try FileManager.default.copyItem(at: sample, to: folder.appendingPathComponent(side))
        }
    }

    /// The memo file of `id` on `side`.
    func memoFile(_ side: URL, _ id: String = groceries) -> URL { side.appendingPathComponent("memos/\(id).json") }

    /// Sets `fields` in the memo file of `id` on `side` (its index entry left as it is).
    func edit(_ side: URL, _ fields: [String: Any], id: String = groceries) throws {
        let url = memoFile(side, id)
        var memo = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        for (key, value) in fields { memo[key] = value }
        try JSONSerialization.data(withJSONObject: memo, options: [.prettyPrinted, .sortedKeys]).write(to: url)
    }

    /// Sets `fields` of `id`'s entry in `side`'s index.json.
    func editEntry(_ side: URL, _ fields: [String: Any], id: String = groceries) throws {
        let url = side.appendingPathComponent("index.json")
        var index = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        var entries = index["entries"] as! [[String: Any]]
        for position in entries.indices where (entries[position]["id"] as! String).lowercased() == id {
            for (key, value) in fields { entries[position][key] = value }
        }
        index["entries"] = entries
        try JSONSerialization.data(withJSONObject: index, options: [.prettyPrinted, .sortedKeys]).write(to: url)
    }

    /// `reckon` with `arguments`, run in the pair's folder.
    func reckon(_ arguments: [String], environment: [String: String] = [:]) throws -> RunResult {
        try runArray(arguments, environment: environment, in: folder)
    }

    /// `reconcile --out out` of the pair, in `language`.
    func reconcile(language: String = "en", _ more: [String] = []) throws -> RunResult {
        try reckon(["reconcile", "--local", "device", "--remote", "drive", "--out", "out", "--lang", language] + more)
    }

    /// A file the last reconcile wrote to `out`.
    func written(_ name: String) throws -> String { try read(out.appendingPathComponent(name)) }
}

/// What a report's page and report.md tell a person about the memos that
/// differ, and what their command lines carry (issue 48, items 5 to 7).
@Suite struct ReviewPageTests {
    /// The line diff says which side each mark stands for, in the sides'
    /// own labels, on the page and in report.md; the sentence above the
    /// differences points to the page's choices and `reckon plan`.
    @Test(arguments: ["en", "ja"])
    func theLineDiffNamesTheSideOfEachMark(_ language: String) throws {
        let pair = try SamplePair()
        try pair.edit(pair.drive, ["body": "Milk, eggs, miso, green onions.\nTofu."])
        let result = try pair.reconcile(language: language)
        #expect(result.code == 1, "\(result.stderr)")
        let marks =
            language == "en"
            ? "Lines marked - are only in this device's version; lines marked + are only in Google Drive's."
            : "「-」の行はこの端末の版だけに、「+」の行はGoogle Driveの版だけにあります。"
        let markdown = try pair.written("report.md")
        let diff = try #require(markdown.range(of: "```diff\n"))
        let legend = try #require(markdown.range(of: marks + "\n\n```diff\n"), "the marks are named right above the diff")
        #expect(legend.upperBound == diff.upperBound)
        #expect(markdown.contains("+ Tofu."))
        let page = try pair.written("report.html")
        let escaped = marks.replacingOccurrences(of: "'", with: "&#39;")
        #expect(page.contains("<p class=\"marks\">\(escaped)</p><pre class=\"diff\">"))
        // The sentence above the differences.
        let sentence =
            language == "en"
            ? "1 memo differs between this device and Google Drive. Choose which version to keep in the choices of report.html, or with reckon plan --take ID=local|remote|both; reckon never chooses on its own."
            : "1件のメモがこの端末とGoogle Driveで異なります。残す版は report.html の選択か reckon plan --take ID=local|remote|both で選んでください。reckon が自分で選ぶことはありません。"
        // Markdown writes a bar as `\|`.
        for text in [result.stdout, markdown.replacingOccurrences(of: "\\|", with: "|")] {
            #expect(text.contains(sentence))
            #expect(!text.contains("never chooses for you") && !text.contains("勝手に選ぶ"))
        }
        #expect(page.contains(sentence))
    }

    /// The page's `--take` carries what the report saw of the memo on
    /// each side: copied into `reckon plan`, it plans as the page chose
    /// while the memo is as the report saw it, and is refused, as a
    /// choices file is, once a side edited the memo again.
    @Test func aTakeCopiedFromThePageIsRefusedForAMemoChangedSince() throws {
        let pair = try SamplePair()
        #expect(try pair.reconcile().code == 0)
        try pair.edit(pair.drive, ["body": "Milk, eggs, miso, green onions.\nTofu.", "modifiedAt": "2026-04-20T10:00:00Z"])
        try pair.editEntry(pair.drive, ["modifiedTime": "2026-04-20T10:00:00Z"])
        #expect(try pair.reconcile().code == 1)
        let page = try pair.written("report.html")
        let line = try #require(
            page.firstMatch(of: #/<code class="take">--take (?<id>[0-9a-f-]+)=(?<sides>[a-z|]+)@(?<seen>[^<]+)</code>/#),
            "the page's --take names what the report saw")
        #expect(String(line.id) == SamplePair.groceries)
        #expect(line.sides == "local|remote|both")
        let seen = String(line.seen)
        #expect(page.contains("data-local-print=\"\(seen.split(separator: ",")[0])\""))
        let take = ["--take", "\(line.id)=remote@\(seen)"]
        let plan = ["plan", "--local", "device", "--remote", "drive", "--out", "out"]

        // As the report saw it: planned as chosen.
        let planned = try pair.reckon(plan + take + ["--json"])
        #expect(planned.code == 1, "\(planned.stderr)")
        let actions = try #require(try json(planned.stdout)["actions"] as? [[String: Any]])
        #expect(actions.map { $0["action"] as? String } == ["copy"])
        #expect(actions.first?["to"] as? String == "local")

        // The device edits the memo again: the same line is refused, and nothing is written.
        try FileManager.default.removeItem(at: pair.out.appendingPathComponent("plan.json"))
        try pair.edit(pair.device, ["body": "Milk, eggs, miso, green onions.\nRice.", "modifiedAt": "2026-04-21T08:00:00Z"])
        try pair.editEntry(pair.device, ["modifiedTime": "2026-04-21T08:00:00Z"])
        let refused = try pair.reckon(plan + take)
        #expect(refused.code == 64, "\(refused.stdout)")
        #expect(refused.stderr.contains("\(SamplePair.groceries): changed on this device since the report"), "\(refused.stderr)")
        #expect(refused.stderr.contains("choose again in its page, and copy its plan line again; nothing was written"))
        #expect(!FileManager.default.fileExists(atPath: pair.out.appendingPathComponent("plan.json").path))
        // The same choice through a choices file is refused the same way.
        let prints = seen.split(separator: ",").map { $0 == "none" ? nil : String($0) }
        let file = choicesFile(
            pipeline: "reconcile", remote: "remote", [(id: SamplePair.groceries, take: "remote", local: prints[0], remote: prints[1])])
        try Data(file.utf8).write(to: pair.folder.appendingPathComponent("choices.json"))
        let viaFile = try pair.reckon(plan + ["--choices", "choices.json"])
        #expect(viaFile.code == 64)
        #expect(viaFile.stderr.contains("\(SamplePair.groceries): changed on this device since the report"), "\(viaFile.stderr)")
        // A take without what the report saw still chooses as it always did.
        #expect(try pair.reckon(plan + ["--take", "\(line.id)=remote"]).code == 1)
        // A fingerprint that is not one is a usage mistake.
        let wrong = try pair.reckon(plan + ["--take", "\(line.id)=remote@yesterday"])
        #expect(wrong.code == 64)
        #expect(wrong.stderr.contains("is invalid for '--take <id=side[@fingerprint]>'"), "\(wrong.stderr)")
    }

    /// An index entry that disagrees with its own memo file is a problem of
    /// that side, named in words; the page compares the memo by its file
    /// (its times, "newer" and "keep both"); a plan sets the entry from the
    /// file, and the next run finds nothing wrong with the side.
    @Test(arguments: ["en", "ja"])
    func anEntryThatDisagreesWithItsFileIsAProblemAndThePlanFixesTheIndex(_ language: String) throws {
        let pair = try SamplePair()
        // Drive's memo file was saved without its index entry: the entry still says 2026-04-18 09:15.
        try pair.edit(pair.drive, ["body": "Milk, eggs, miso, green onions.\nTofu.", "modifiedAt": "2026-04-20T10:00:00Z"])
        let result = try pair.reconcile(language: language)
        #expect(result.code == 2, "a side with a problem is trouble: \(result.stdout)")
        let words = "index.json says modified 2026-04-18T09:15:00Z, the memo file says 2026-04-20T10:00:00Z"
        let file = "drive/memos/\(SamplePair.groceries).json"
        let named =
            language == "en"
            ? "error: \(file): \(words)" : "エラー: \(file): index.json の項目がメモのファイルと食い違っています（\(words)）"
        #expect(result.stdout.contains(named), "\(result.stdout)")
        let report = try json(try pair.written("report.json"))
        let drive = try #require((report["sides"] as? [[String: Any]])?.first { $0["role"] as? String == "remote" })
        let problems = try #require(drive["problems"] as? [[String: Any]])
        #expect(problems.map { $0["kind"] as? String } == ["index-disagrees"])
        #expect(problems.first?["message"] as? String == words)
        let difference = try #require((report["differences"] as? [[String: Any]])?.first)
        #expect(difference["sigil"] as? String == "*", "the memo is still compared, by its file")
        #expect((difference["onRemote"] as? [String: Any])?["modifiedTime"] as? String == "2026-04-20T10:00:00Z")

        // The page shows the file's time, calls Drive's version the newer one, and offers to keep both.
        let page = try pair.written("report.html")
        #expect(page.contains("data-newer=\"remote\""))
        #expect(page.contains("2026-04-20 10:00 UTC"))
        #expect(page.contains("id=\"choice-0-both\""))
        #expect(!page.contains("same time") && !page.contains("時刻が同じ"))

        // A plan sets the entry from the file; after it, the side has no problem left.
        let plan = try pair.reckon(
            ["plan", "--local", "device", "--remote", "drive", "--out", "out", "--json", "--lang", language])
        #expect(plan.code == 1, "\(plan.stderr)")
        let actions = try #require(try json(plan.stdout)["actions"] as? [[String: Any]])
        #expect(actions.map { $0["action"] as? String } == ["fix-index"])
        #expect(actions.first?["to"] as? String == "remote")
        #expect(
            actions.first?["reason"] as? String
                == "the entry of memos/\(SamplePair.groceries).json in index.json on Google Drive disagrees with the memo file; the entry is set from the file's own fields"
        )
        let applied = try pair.reckon(["apply", "out/plan.json"])
        #expect(applied.code == 0, "\(applied.stdout)\(applied.stderr)")
        #expect(try read(pair.drive.appendingPathComponent("index.json")).contains("2026-04-20T10:00:00Z"))
        let after = try pair.reconcile(language: language)
        #expect(after.code == 1, "the memo still differs, and nothing is wrong with a side: \(after.stdout)")
        #expect(!after.stdout.contains(words))
    }
}
