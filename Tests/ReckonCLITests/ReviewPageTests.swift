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
}
