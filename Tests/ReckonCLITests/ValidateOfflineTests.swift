import Foundation
import ReckonCore
import TestSupport
import Testing

/// `validate` used to accept what `run` refuses: rclone flags whose values
/// rclone will not take, a path holding NUL, a remote rclone's config does
/// not hold (and `init` called such a definition "written and valid"). It
/// checks them now without the network, and says what only a run can tell.
@Suite struct ValidateOfflineTests {
    let folder = temporaryFolder()

    init() throws {
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("device/memos"), withIntermediateDirectories: true)
        try Data(#"{"schemaVersion": 1, "entries": []}"#.utf8).write(to: folder.appendingPathComponent("device/index.json"))
        // A config of rclone's own in the test's folder: one remote, `known`, of this machine's files.
        try Data("[known]\ntype = local\n".utf8).write(to: folder.appendingPathComponent("rclone.conf"))
    }

    /// Writes `p.json` with one remote of kind rclone, with `extra` keys, and validates it.
    @discardableResult
    func validate(remote: String, _ extra: String = "", local: String = "device", top: String = "") throws -> RunResult {
        try Data(
            #"""
            {"name": "t", "local": {"path": "\#(local)"}, "remotes": [{"name": "r", "kind": "rclone", "remote": "\#(remote)", "config": "rclone.conf"\#(extra)}]\#(top)}
            """#.utf8
        ).write(to: folder.appendingPathComponent("p.json"))
        return try runArray(["validate", "p.json"], in: folder)
    }

    @Test func flagValuesRcloneWouldNotTakeAreRefusedAsRunRefusesThem() throws {
        for (flags, words) in [
            (#"["--checkers", "/tmp/x"]"#, "the rclone flag --checkers takes a whole number, not '/tmp/x'"),
            (#"["--fast-list=true --config /etc/passwd"]"#, "the rclone flag --fast-list takes true or false, not 'true --config /etc/passwd'"),
            (#"["--transfers=8x"]"#, "the rclone flag --transfers takes a whole number, not '8x'"),
            (#"["--drive-pacer-min-sleep", "soon"]"#, "the rclone flag --drive-pacer-min-sleep takes a duration such as 100ms, not 'soon'"),
            (#"["--user-agent", "a\nb"]"#, "the rclone flag --user-agent takes a value without control characters, not 'a\\u{a}b'")
        ] {
            try validate(remote: "known:x", #", "flags": \#(flags)"#)
            for command in ["validate", "run"] {
                let result = try runArray([command, "p.json"], in: folder)
                #expect(result.code == 64, "\(command) \(flags): \(result.stdout)")
                #expect(result.stderr == "Error: p.json: 'remotes[0].flags' \(words)\n", "\(command) \(flags)")
            }
        }
        let good = #"["--checkers=8", "--fast-list", "--tpslimit", "2.5", "--bwlimit", "08:00,512k 12:00,10M:1M 23:00,off", "--buffer-size=16Mi"]"#
        let result = try validate(remote: "known:x", #", "flags": \#(good)"#)
        #expect(result.code == 0, "\(result.stderr)")
    }

    @Test func aPathHoldingNULIsRefused() throws {
        let result = try validate(remote: ":local:/x", local: #"dev\u0000ice"#)
        #expect(result.code == 64)
        #expect(result.stderr == "Error: p.json: 'local.path' holds a NUL character, which no file name can hold\n")
        let export = try validate(remote: ":local:/x", top: #", "export": {"dir": "out\u0000x"}"#)
        #expect(export.code == 64)
        #expect(export.stderr.contains("'export.dir' holds a NUL character"), "\(export.stderr)")
    }

    @Test(.needs(.rclone)) func aNamedRemoteIsLookedUpInRclonesConfig() throws {
        let missing = try validate(remote: "nosuchremote:x")
        #expect(missing.code == 64)
        #expect(
            missing.stderr
                == "Error: p.json: 'remotes[0].remote' names the rclone remote 'nosuchremote', which rclone's config does not hold (it holds 'known'); set it up with rclone config\n"
        )
        let known = try validate(remote: "known:x")
        #expect(known.code == 0, "\(known.stderr)")
        #expect(known.stdout.contains("\n  checked: rclone's config holds the remote 'known'\n"), "\(known.stdout)")
        #expect(known.stdout.contains("\n  not checked: whether known:x can be reached and holds memos: only a run can tell, over the network\n"))
        // A connection string names no configured remote: nothing to look up, and said so.
        let inline = try validate(remote: ":local:/x")
        #expect(inline.code == 0, "\(inline.stderr)")
        #expect(!inline.stdout.contains("checked: rclone's config"))
        #expect(inline.stdout.contains("not checked: whether :local:/x can be reached"))
    }

    @Test(.needs(.rclone)) func initRefusesARemoteRclonesConfigDoesNotHold() throws {
        let dir = folder.appendingPathComponent("init")
        let environment = [
            "RCLONE_CONFIG": folder.appendingPathComponent("rclone.conf").path, "XDG_CACHE_HOME": folder.appendingPathComponent("cache").path
        ]
        let refused = try runArray(
            ["init", "--local", "device", "--remote", "nosuchremote:x", "--dir", dir.path], environment: environment, in: folder)
        #expect(refused.code == 64)
        #expect(
            refused.stderr.hasPrefix("Error: '--remote' names the rclone remote 'nosuchremote', which rclone's config does not hold"),
            "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was written"))
        #expect(!refused.stdout.contains("valid"))
        #expect(FileKind(path: dir.appendingPathComponent("reckon.json").path) == .missing)
        let written = try runArray(["init", "--local", "device", "--remote", "known:x", "--dir", dir.path], environment: environment, in: folder)
        #expect(written.code == 0, "\(written.stderr)")
        #expect(written.stdout.contains("Not checked: whether known:x can be reached and holds memos"), "\(written.stdout)")
    }
}
