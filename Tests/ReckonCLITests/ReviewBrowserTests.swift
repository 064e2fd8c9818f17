import Foundation
import ReckonCore
import TestSupport
import Testing

/// A person reviews the report in Chromium, chooses a version per memo in
/// the page, copies the commands it builds, runs them, and the next
/// reconcile is in sync.
@Suite(.needs(.chromium, .chromedriver))
struct ReviewBrowserTests {
    static let edited = "A1111111-1111-4111-8111-111111111111"
    static let onlyHere = "B2222222-2222-4222-8222-222222222222"
    static let onlyThere = "C3333333-3333-4333-8333-333333333333"

    /// Writes a memo folder holding `memos` (id, title, body, modified).
    func memoFolder(_ memos: [(String, String, String, String)]) throws -> URL {
        let folder = temporaryFolder()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("memos"), withIntermediateDirectories: true)
        let entries = memos.map { ["id": $0.0, "modifiedTime": $0.3] }
        try JSONSerialization.data(withJSONObject: ["schemaVersion": 1, "entries": entries], options: [.sortedKeys])
            .write(to: folder.appendingPathComponent("index.json"))
        for (id, title, body, modified) in memos {
            try JSONSerialization.data(
                withJSONObject: ["id": id, "title": title, "body": body, "createdAt": "2026-04-01T08:00:00Z", "modifiedAt": modified],
                options: [.sortedKeys]
            ).write(to: folder.appendingPathComponent("memos/\(id).json"))
        }
        return folder
    }

    /// Runs a command line copied from the page as a person would, in a
    /// POSIX shell, with the built reckon first on `PATH`.
    func runCopied(_ line: String) throws -> RunResult {
        let path = reckonBinary.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        return try runArray(["-c", line], environment: ["PATH": path], executable: URL(fileURLWithPath: "/bin/sh"))
    }

    @Test func choicesMadeInThePageAreCarriedOutAndTheSidesAgree() throws {
        // A title that looks like an option and a body that looks like markup change nothing in the command.
        let local = try memoFolder([
            (Self.edited, "' --take \(Self.onlyThere)=local '", "Kyoto, then Nara.\n<b>bold</b>", "2026-04-12T10:00:00Z"),
            (Self.onlyHere, "Only here", "Here.", "2026-04-15T11:00:00Z")
        ])
        let remote = try memoFolder([
            (Self.edited, "' --take \(Self.onlyThere)=local '", "Kyoto, then Nara, then Osaka.\n<b>bold</b>", "2026-04-13T18:30:00Z"),
            (Self.onlyThere, "Only there", "There.", "2026-04-14T08:00:00Z")
        ])
        let out = temporaryFolder()
        let first = try reckon("reconcile", "--local", local.path, "--remote", remote.path, "--out", out.path)
        #expect(first.code == 1, "\(first.stderr)")

        let browser = try Browser(.desktop)
        defer { browser.close() }
        try browser.open(out.appendingPathComponent("report.html"))
        let base = "reckon plan --local '\(realPath(local.path))' --remote '\(realPath(remote.path))' --out '\(realPath(out.path))'"
        let ids = [Self.edited, Self.onlyHere, Self.onlyThere].map { $0.lowercased() }
        // Each --take carries what the report saw of the memo on each side.
        let seen = try ids.map { try Self.seen($0, in: browser) }
        #expect(
            try browser.value(of: "textarea.plan") == "\(base) --take \(ids[1])=local\(seen[1]) --take \(ids[2])=remote\(seen[2])",
            "a memo on one side only, which the sides never agreed on, is chosen at first, as a plan copies it; the edit is not")
        #expect(try browser.value(of: "textarea.apply") == "reckon apply '\(realPath(out.path))/plan.json'")
        #expect(try browser.text(of: "li.memo[data-id='\(Self.edited.lowercased())'] del") == "- Kyoto, then Nara.")
        #expect(try browser.text(of: "li.memo[data-id='\(Self.edited.lowercased())'] ins") == "+ Kyoto, then Nara, then Osaka.")

        // Newer for all: Google Drive's edit, the memo only this device has, the one only Drive has.
        try browser.click("button.newer")
        #expect(
            try browser.value(of: "textarea.plan")
                == "\(base) --take \(ids[0])=remote\(seen[0]) --take \(ids[1])=local\(seen[1]) --take \(ids[2])=remote\(seen[2])")
        // Reset clears every choice; then the person chooses each memo by tapping its label.
        try browser.click("button.reset")
        #expect(try browser.value(of: "textarea.plan") == base)
        try browser.click("label[for=choice-0-local]")
        try browser.click("label[for=choice-1-local]")
        try browser.click("label[for=choice-2-remote]")
        let plan = try #require(try browser.value(of: "textarea.plan"))
        #expect(plan == "\(base) --take \(ids[0])=local\(seen[0]) --take \(ids[1])=local\(seen[1]) --take \(ids[2])=remote\(seen[2])")
        let choices = try #require(try browser.value(of: "textarea.choices"))
        let file = try #require(try JSONSerialization.jsonObject(with: Data(choices.utf8)) as? [String: Any])
        #expect((file["choices"] as? [[String: Any]])?.compactMap { $0["take"] as? String } == ["local", "local", "remote"])
        #expect(try browser.attribute("href", of: "a.save")?.hasPrefix("data:application/json;charset=utf-8,") == true)

        let planned = try runCopied(plan)
        #expect(planned.code == 1, "actions planned: \(planned.stdout)\(planned.stderr)")
        // At a terminal apply asks before it overwrites; here the person's "yes" is --yes.
        let apply = try #require(try browser.value(of: "textarea.apply"))
        #expect(!apply.contains("--yes"))
        let applied = try runCopied(apply + " --yes")
        #expect(applied.code == 0, "\(applied.stdout)\(applied.stderr)")

        let next = try reckon("reconcile", "--local", local.path, "--remote", remote.path, "--out", out.path)
        #expect(next.code == 0, "in sync: \(next.stdout)")
        let kept = try read(remote.appendingPathComponent("memos/\(Self.edited).json"))
        #expect(kept.contains("Kyoto, then Nara.\\n"), "this device's version was kept: \(kept)")
    }
}

extension ReviewBrowserTests {
    /// `@LOCAL,REMOTE`: what the page saw of memo `id` on each side, as its `--take` carries it.
    static func seen(_ id: String, in browser: Browser) throws -> String {
        let prints = try ["data-local-print", "data-remote-print"].map { name in
            let print = try browser.attribute(name, of: "li.memo[data-id='\(id)']") ?? ""
            return print.isEmpty ? "none" : print
        }
        return "@" + prints.joined(separator: ",")
    }

    /// After a run that recorded a baseline, a memo edited on Google Drive
    /// alone is chosen at first in the page, as a plan made before that run
    /// would have followed it; the copied lines carry it over although the
    /// baselines moved on with the run.
    @Test func whatChangedOnOneSideAloneIsChosenAtFirst() throws {
        let memo = (Self.edited, "Trip", "Kyoto.", "2026-04-12T10:00:00Z")
        let local = try memoFolder([memo])
        let remote = try memoFolder([memo])
        let out = temporaryFolder()
        #expect(try reckon("reconcile", "--local", local.path, "--remote", remote.path, "--out", out.path).code == 0)
        let edited = try memoFolder([(Self.edited, "Trip", "Kyoto, then Osaka.", "2026-04-13T18:30:00Z")])
        try FileManager.default.removeItem(at: remote)
        try FileManager.default.copyItem(at: edited, to: remote)
        let drift = try reckon("reconcile", "--local", local.path, "--remote", remote.path, "--out", out.path)
        #expect(drift.code == 1)
        #expect(drift.stdout.contains("changed on Google Drive since they last agreed on "))

        let browser = try Browser(.desktop)
        defer { browser.close() }
        try browser.open(out.appendingPathComponent("report.html"))
        #expect(try browser.property("checked", of: "#choice-0-remote").boolValue == true)
        #expect(
            try browser.text(of: "li.memo fieldset p.why")?.hasPrefix("Chosen at first: only Google Drive changed it since the sides last agreed on ")
                == true)
        let plan = try #require(try browser.value(of: "textarea.plan"))
        #expect(plan.hasSuffix(" --take \(Self.edited.lowercased())=remote\(try Self.seen(Self.edited.lowercased(), in: browser))"))
        #expect(try runCopied(plan).code == 1)
        let applied = try runCopied(try #require(try browser.value(of: "textarea.apply")) + " --yes")
        #expect(applied.code == 0, "\(applied.stdout)\(applied.stderr)")
        #expect(try reckon("reconcile", "--local", local.path, "--remote", remote.path, "--out", out.path).code == 0)
        #expect(try read(local.appendingPathComponent("memos/\(Self.edited).json")).contains("then Osaka"))
    }
}
