import Foundation
import ReckonCore

/// `reckon init`: a pipeline definition for one device and one cloud
/// folder, written beside its outputs, checked, and the lines that run it
/// every night.
struct InitCommand: ReckonCommand {
    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        /// The device's memos, as `reconcile` takes them.
        let local = ReconcileCommand.options.local
        let remote = Option<String>(
            "--remote", value: "remote",
            help: "The cloud memo folder: a named rclone remote (gdrive:60dMemo, set up with rclone config) or a folder on disk.", required: true)
        let dir = Option<String>(
            "--dir", value: "dir", help: "The folder to write NAME.json into; the outputs go to its out/NAME/.", required: true,
            completion: .directory)
        let name = Option<String>(
            "--name", value: "name", help: "The pipeline's name, and its file's (default: reckon).",
            expected: "up to 100 letters, digits, '-' and '_', starting with a letter or digit"
        ) { text in
            let allowed = text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") }
            return allowed && text.count <= 100 && text.first.map { $0.isLetter || $0.isNumber } == true ? text : nil
        }
        let app = SharedOptions.app
        let passwordFile = SharedOptions.passwordFile
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "init", abstract: "Write a pipeline definition for this device and a cloud folder, check it, and show how to run it every night.",
        options: Self.options,
        exitCodes: [
            (0, "written and valid"), (2, "the file could not be written"),
            (64, "usage error, the file exists, the remote holds a secret, or rclone's config does not hold it; nothing written")
        ])

    var local: String
    var remote: String
    var dir: String
    var name: String
    var app: String?
    var arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws(UsageError) {
        local = arguments.required(Self.options.local)
        remote = arguments.required(Self.options.remote)
        dir = arguments.required(Self.options.dir)
        name = try arguments.value(Self.options.name) ?? "reckon"
        app = try arguments.value(Self.options.app)
        self.arguments = arguments
    }

    func run(_ console: Console, settings: ProcessSettings) throws(UsageError) -> ExitCode {
        // The message shows nothing of what may hold a secret.
        if let why = SideKinds.notKeptInDefinition(remote) { throw arguments.usage("'--remote' is \(why)") }
        let (folder, file, shown) = try newFile()
        let strings = Strings.forLanguage("en")
        let localSide = try side(
            .local, name: "device", label: strings.defaultLocalLabel, path: local, app: app, arguments: arguments, settings: settings)
        let remoteSide = try side(
            .remote, name: "drive", label: strings.defaultRemoteLabel, path: remote, app: app, arguments: arguments, settings: settings)
        guard localSide.kind.place != remoteSide.kind.place else {
            throw arguments.usage("'--local' and '--remote' name the same place, \(local); a side is always in sync with itself")
        }
        // A side on this machine is read now (its index only), so a
        // definition that cannot run is never written.
        for (option, spec) in [("--local", localSide), ("--remote", remoteSide)] {
            if let why = spec.whyUnreadableHere(process: settings) { throw arguments.usage("'\(option)' \(why); nothing was written") }
        }
        let definition = InitialDefinition(name: name, local: localSide, remote: remoteSide)
        do {
            try AtomicFile.makeFolder(folder)
            try AtomicFile.write(JSONWriter.data(definition.json(relativeTo: folder)) + [0x0A], to: file, replacing: false)
        } catch {
            // Another init of the same name came first.
            if FileKind(path: file.path) != .missing {
                throw arguments.usage("\(shown) exists; reckon init never replaces a definition, so nothing was written")
            }
            console.err("Error: \(errorWords(error))\n")
            return .trouble
        }
        guard let loaded = checkedDefinition(file.path, console: console, settings: settings) else {
            unlink(file.path)
            return .usage
        }
        // As validate checks it: a named remote rclone's config does not hold is refused.
        let offline = loaded.checkOffline(file: shown, process: settings)
        if let wrong = offline.wrong {
            unlink(file.path)
            throw arguments.usage("'\(wrong.key?.hasPrefix("local") == true ? "--local" : "--remote")' \(wrong.message); nothing was written")
        }
        console.out(nextSteps(loaded, file: file, shown: shown, definition: definition))
        for line in offline.notChecked { console.out(escapedForDisplay("Not checked: \(line)") + "\n") }
        return .done
    }

    /// The definition's file in `--dir` and how it is shown, checked before
    /// anything is read: no link that leads nowhere, no control character,
    /// no file already there.
    func newFile() throws(UsageError) -> (folder: URL, file: URL, shown: String) {
        let folder = outputURL(dir)
        // A link to a folder is the user's choice; one that leads nowhere is never written through, as for export --out.
        if FileKind(path: fileURL(dir).path) == .link, FileKind(path: folder.path) == .missing {
            throw arguments.usage("'--dir' \(dir) is a link that leads nowhere; reckon does not write through it, so nothing was written")
        }
        let file = folder.appendingPathComponent(name + ".json")
        let shown = joinPath(dir, name + ".json")
        // The crontab and systemd lines below name the file by its path; neither can hold a tab or a line break.
        if file.path.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw arguments.usage(
                "'--dir' \(escapedForDisplay(folder.path)) holds a control character (such as a tab or a line break), which a crontab line and a systemd ExecStart= line cannot name; nothing was written (choose a folder whose path has none)"
            )
        }
        guard FileKind(path: file.path) == .missing else {
            throw arguments.usage("\(shown) exists; reckon init never replaces a definition, so nothing was written")
        }
        return (folder, file, shown)
    }

    /// What `init` prints once the file is written and valid: how to run it
    /// now, every night from cron, or with a systemd timer.
    func nextSteps(_ loaded: PipelineDefinition, file: URL, shown: String, definition: InitialDefinition) -> String {
        let reckon = realPath("/proc/self/exe")
        let unit = "reckon-\(name)"
        // The lines as a shell, cron (where % ends the command) and systemd
        // (where % and $ are its own, and arguments are quoted C-style) read them.
        let shell = "\(shellQuoted(reckon)) run --quiet \(shellQuoted(file.path))"
        let cron = shell.replacingOccurrences(of: "%", with: "\\%")
        let exec = "\(systemdQuoted(reckon)) run --quiet \(systemdQuoted(file.path))"
        return """
            Wrote \(escapedForDisplay(shown)): \(escapedForDisplay(loaded.local.label)) against \(escapedForDisplay(loaded.remotes[0].label)), \
            reports in \(escapedForDisplay(joinPath(dir, definition.reports))), exports in \(escapedForDisplay(joinPath(dir, definition.exports))).

            Run it now:
              \(shellQuoted(reckon)) run \(shellQuoted(file.path))

            Every night at 03:15, from cron (crontab -e):
              15 3 * * * \(cron)

            Or with systemd, as ~/.config/systemd/user/\(unit).service:
              [Unit]
              Description=reckon: check the memos of \(name)
              [Service]
              Type=oneshot
              ExecStart=\(exec)
            and ~/.config/systemd/user/\(unit).timer:
              [Unit]
              Description=Run \(unit) every night
              [Timer]
              OnCalendar=*-*-* 03:15:00
              Persistent=true
              [Install]
              WantedBy=timers.target
            then: systemctl --user enable --now \(unit).timer

            """
    }
}

/// `text` as one word for a shell: as it is when it holds only characters
/// no shell reads specially, else quoted as `RepairCommand.quoted` does.
func shellQuoted(_ text: String) -> String {
    let plain = text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/._-+:,@=".contains($0)) }
    return plain && !text.isEmpty ? text : RepairCommand.quoted(text)
}

/// `text` as one argument of a systemd `ExecStart=` line: in double quotes,
/// with its escapes, its specifier `%` and its variable `$` doubled.
func systemdQuoted(_ text: String) -> String {
    var quoted = ""
    for character in text {
        switch character {
        case "\\": quoted += "\\\\"
        case "\"": quoted += "\\\""
        case "%": quoted += "%%"
        case "$": quoted += "$$"
        default: quoted.append(character)
        }
    }
    return "\"" + quoted + "\""
}
