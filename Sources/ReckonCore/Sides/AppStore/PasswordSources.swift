import CCrypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension BackupPassword {
    /// The environment variable that may hold the password.
    package static let variable = "RECKON_BACKUP_PASSWORD"

    /// Takes the password out of the C string `value` (the variable's, as
    /// `getenv` gives it): its bytes copied, then cleared where they were (so
    /// `/proc/<pid>/environ` no longer shows them). The command line calls
    /// it once, first thing, before any other thread runs, then removes the
    /// variable, so that no child reckon starts inherits it and no
    /// `ProcessInfo` dictionary ever holds it as a `String`; nil when empty.
    package static func take(from value: UnsafeMutablePointer<CChar>) -> SecretBytes? {
        let count = strlen(value)
        let secret = count == 0 ? nil : SecretBytes(copying: UnsafeRawBufferPointer(start: value, count: count))
        OPENSSL_cleanse(value, count)
        return secret
    }
}

/// A file holding a backup's password, named by `--password-file` or a
/// definition's `"passwordFile"`. As ssh treats a private key, it is read
/// only when it is a regular file (never through a link) owned by reckon's
/// user, which no one else may read or write (`mode & 0o077 == 0`). One
/// trailing newline is dropped.
package struct PasswordFile: Sendable, Hashable {
    package var url: URL
    /// The path as the user wrote it, for messages.
    package var shown: String

    /// The most a password file may hold.
    package static let limit = 4096

    package init(url: URL, shown: String) {
        self.url = url
        self.shown = shown
    }

    /// The password, read with read(2) into memory reckon clears. Throws a
    /// usage failure (exit 64) for a file that is missing, a link, not a
    /// regular file, another user's, open to others, empty or too big; a
    /// failure that is not usage for a read the system refused.
    package func read() throws(BackupPassword.Failure) -> SecretBytes {
        let name = "the password file \(escapedForDisplay(shown))"
        // O_NONBLOCK: a FIFO put in its place must not hold reckon at open().
        let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT: throw .init("\(name) does not exist", isUsage: true)
            case ELOOP: throw .init("\(name) is a link; reckon reads a password file only by its own name, never through a link", isUsage: true)
            default: throw .init("\(name) cannot be opened: \(String(cString: strerror(code)))", isUsage: code == EACCES || code == ENOTDIR)
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw .init("\(name) cannot be read: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .init("\(name) is not a regular file; put the password alone in a file with mode 0600", isUsage: true)
        }
        guard info.st_uid == geteuid() else {
            throw .init(
                "\(name) belongs to another user (uid \(info.st_uid)); reckon reads a password file only when it is its own user's (uid \(geteuid()))",
                isUsage: true)
        }
        let mode = info.st_mode & 0o7777
        guard mode & 0o077 == 0 else {
            throw .init(
                "\(name) may be read or changed by others (mode \(String(format: "%04o", mode))); make it private with chmod 600 \(escapedForDisplay(shown)), as ssh asks of a key",
                isUsage: true)
        }
        guard info.st_size <= off_t(Self.limit) else {
            throw .init("\(name) holds \(info.st_size) bytes, more than a password (at most \(Self.limit))", isUsage: true)
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.limit + 1, alignment: 16)
        defer {
            OPENSSL_cleanse(buffer.baseAddress, buffer.count)
            buffer.deallocate()
        }
        var count = 0
        while count < buffer.count {
            let got = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw .init("\(name) cannot be read: \(String(cString: strerror(errno)))") }
            if got == 0 { break }
            count += got
        }
        guard count <= Self.limit else {
            throw .init("\(name) holds more than a password (at most \(Self.limit) bytes)", isUsage: true)
        }
        if count > 0 && buffer[count - 1] == UInt8(ascii: "\n") { count -= 1 }
        guard count > 0 else { throw .init("\(name) is empty; put the backup's password in it", isUsage: true) }
        return SecretBytes(copying: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// Checks the file as `read` does, before any side is read, so that a
    /// file reckon would refuse is said at once (exit 64); the password
    /// read is let go, and read again only if a backup asks for it.
    package func check() throws(BackupPassword.Failure) {
        _ = try read()
    }
}

/// Where the command line finds an encrypted backup's password, in this
/// order: the variable `RECKON_BACKUP_PASSWORD` (taken out of the
/// environment when reckon starts), a password file (`--password-file`,
/// else the side's own `"passwordFile"`), a prompt when standard input is a
/// terminal.
package struct PasswordSources: Sendable {
    package var environment: SecretBytes?
    /// The command line's file; it wins over a definition's.
    package var file: PasswordFile?
    /// Whether standard input is a terminal, to ask at.
    package var terminal: Bool
    /// Runs a password prompt at the terminal (`TerminalPrompt`), given as
    /// a body to call once: the command line's puts the terminal back, and
    /// lets the signal go on, if SIGINT or SIGTERM comes while it asks; nil
    /// asks with no handler around.
    package var aroundPrompt: (@Sendable (_ body: () -> Void) -> Void)?

    package init(environment: SecretBytes? = nil, file: PasswordFile? = nil, terminal: Bool = false) {
        self.environment = environment
        self.file = file
        self.terminal = terminal
    }

    /// The sentence for an encrypted backup when no way gave a password.
    package static let noPasswordMessage =
        "the iPhone backup is encrypted and no password was given: set the variable \(BackupPassword.variable), "
        + "name a password file with mode 0600 (--password-file FILE, or \"passwordFile\" in a pipeline), or run reckon at a terminal to type it"

    /// The password of the backup shown as `shown`, which may name its own
    /// password file (`own`).
    package func password(for shown: String, file own: PasswordFile?) -> BackupPassword {
        let environment = environment
        let file = file ?? own
        let (terminal, aroundPrompt) = (terminal, aroundPrompt)
        return BackupPassword { () throws(BackupPassword.Failure) -> SecretBytes in
            if let environment { return environment.withBytes { SecretBytes(copying: $0) } }
            if let file { return try file.read() }
            if terminal { return try TerminalPrompt.ask("Password of the iPhone backup \(escapedForDisplay(shown)): ", around: aroundPrompt) }
            throw BackupPassword.Failure(Self.noPasswordMessage)
        }
    }
}

/// Asks for a password at the terminal on standard input: the prompt on
/// stderr, echo off while it is typed, and the terminal put back as it was
/// afterwards. It installs no handler: the password sources' `aroundPrompt`
/// runs it, and the command line's puts the terminal back on SIGINT or
/// SIGTERM before the signal goes on.
package enum TerminalPrompt {
    /// Asks with `prompt`, inside `around` when one is given.
    package static func ask(_ prompt: String, around: (@Sendable (_ body: () -> Void) -> Void)?) throws(BackupPassword.Failure) -> SecretBytes {
        guard let around else { return try askQuietly(prompt) }
        var outcome: Result<SecretBytes, BackupPassword.Failure>?
        around { outcome = Result { () throws(BackupPassword.Failure) in try askQuietly(prompt) } }
        guard let outcome else { return try askQuietly(prompt) }
        return try outcome.get()
    }

    /// The prompt itself: echo off, the password read, the terminal back.
    private static func askQuietly(_ prompt: String) throws(BackupPassword.Failure) -> SecretBytes {
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else {
            throw .init("the terminal's settings cannot be read (\(String(cString: strerror(errno)))), so the password cannot be typed unseen")
        }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        quiet.c_lflag |= tcflag_t(ECHONL)
        defer { tcsetattr(0, TCSANOW, &saved) }
        guard tcsetattr(0, TCSAFLUSH, &quiet) == 0 else {
            throw .init("echo cannot be turned off at the terminal (\(String(cString: strerror(errno)))), so the password is not asked")
        }
        let bytes = Array(prompt.utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: PasswordFile.limit, alignment: 16)
        defer {
            OPENSSL_cleanse(buffer.baseAddress, buffer.count)
            buffer.deallocate()
        }
        var count = 0
        var ended = false
        while true {
            var byte: UInt8 = 0
            let got = read(0, &byte, 1)
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw .init("the password could not be read from the terminal: \(String(cString: strerror(errno)))") }
            if got == 0 || byte == UInt8(ascii: "\n") {
                ended = got == 1
                break
            }
            if count < buffer.count { buffer[count] = byte }
            count += 1
            byte = 0
        }
        if !ended { _ = write(2, "\n", 1) }
        guard count <= buffer.count else { throw .init("the password typed is longer than \(PasswordFile.limit) bytes") }
        guard count > 0 else { throw .init("no password was typed for the encrypted iPhone backup") }
        return SecretBytes(copying: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }
}
