import Foundation

extension Rclone {
    /// What a flag's value must be for rclone to take it.
    enum FlagValue {
        /// `true` or `false` after `=` (`--fast-list=true`); alone, the flag means true.
        case bool
        /// A whole number (`--checkers 8`).
        case whole
        /// A number (`--tpslimit 2.5`).
        case number
        /// A size or a rate: a number with a unit, or rclone's timetable of them (`16M`, `08:00,512k 12:00,off`).
        case size
        /// A duration (`100ms`, `1.5s`).
        case duration
        /// A file on this machine.
        case path
        /// Any text on one line.
        case text
    }

    /// The value each flag on the read-only list takes.
    static let flagValues: [String: FlagValue] = [
        "--fast-list": .bool, "--drive-shared-with-me": .bool, "--drive-skip-shortcuts": .bool, "--drive-skip-gdocs": .bool,
        "--drive-acknowledge-abuse": .bool, "--tpslimit": .number, "--tpslimit-burst": .whole, "--checkers": .whole, "--transfers": .whole,
        "--drive-pacer-burst": .whole, "--bwlimit": .size, "--buffer-size": .size, "--drive-pacer-min-sleep": .duration, "--ca-cert": .path,
        "--drive-service-account-file": .path, "--sftp-known-hosts-file": .path, "--sftp-key-file": .path
    ]

    /// Refuses a value rclone would not take for `flag`, as a run would find
    /// it only once rclone refuses it: so `validate` and `run` refuse the
    /// same flags.
    static func checkValue(_ value: String, of flag: String) throws(Failure) {
        let kind = flagValues[flag] ?? .text
        func refuse(_ what: String) -> Failure {
            Failure(.refused, "the rclone flag \(flag) takes \(what), not \(quoted(masked(value)))")
        }
        if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw refuse("a value without control characters")
        }
        let whole = /[0-9]+/
        let number = /[0-9]+(\.[0-9]+)?/
        let size = /(?i)([0-9]+(\.[0-9]+)?[bkmgtpe]?i?b?|off)/
        switch kind {
        case .bool where !["true", "false"].contains(value): throw refuse("true or false")
        case .whole where value.wholeMatch(of: whole) == nil: throw refuse("a whole number")
        case .number where value.wholeMatch(of: number) == nil: throw refuse("a number")
        case .duration where value.wholeMatch(of: /([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h|d|w|M|y)?)+/) == nil:
            throw refuse("a duration such as 100ms")
        case .size:
            // A size, a rate pair (`10M:100k`), or a timetable of times and those (`08:00,512k 12:00,off`).
            let parts = value.split(whereSeparator: { " ,:".contains($0) || $0 == "-" })
            guard !parts.isEmpty,
                parts.allSatisfy({ $0.wholeMatch(of: size) != nil || $0.wholeMatch(of: /[0-9]{2}|Mon|Tue|Wed|Thu|Fri|Sat|Sun/) != nil })
            else { throw refuse("a size such as 16M") }
        default: break
        }
    }

    /// The remotes rclone's config holds, by name (`rclone listremotes`,
    /// which prints only names: never `config show`, which prints tokens).
    package func listRemotes() throws(Failure) -> [String] {
        let output = try run(["listremotes"])
        return String(decoding: output.stdout, as: UTF8.self).split(separator: "\n").compactMap { line in
            line.hasSuffix(":") ? String(line.dropLast()) : nil
        }
    }
}

extension RcloneSide {
    /// The name of the configured remote the side names (`gdrive` in
    /// `gdrive:60dMemo` or `gdrive,opt=x:60dMemo`); nil for a connection
    /// string (`:sftp,host=…:path`), which names none.
    var remoteName: String? {
        guard !remote.hasPrefix(":"), let end = remote.firstIndex(where: { $0 == ":" || $0 == "," }) else { return nil }
        return String(remote[..<end])
    }

    package func offlineCheck(shown: String, process: ProcessSettings) -> OfflineCheck {
        var check = OfflineCheck(notChecked: ["whether \(shown) can be reached and holds memos: only a run can tell, over the network"])
        guard let name = remoteName else { return check }
        let known: [String]
        do {
            known = try Rclone(process: process, config: config, flags: flags).listRemotes()
        } catch {
            check.notChecked.append("whether rclone's config holds the remote '\(name)': \(error.message)")
            return check
        }
        if known.contains(name) {
            check.checked.append("rclone's config holds the remote '\(name)'")
        } else {
            let holds = known.isEmpty ? "holds no remote" : "holds " + known.map { "'\($0)'" }.joined(separator: ", ")
            check.key = "remote"
            check.wrong = "names the rclone remote '\(name)', which rclone's config does not hold (it \(holds)); set it up with rclone config"
        }
        return check
    }
}
