import Foundation

/// Writes an executable shell script at `url`, made by a child process
/// (`install`) so that no descriptor open for writing on it is ever held by
/// this test process. Tests run in parallel threads: a file this process
/// wrote itself can be inherited, still open for writing, by a child another
/// test starts at that moment, and running the script then fails with
/// "Text file busy".
public func writeScript(_ text: String, to url: URL) throws {
    let draft = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).draft")
    try Data(text.utf8).write(to: draft)
    defer { try? FileManager.default.removeItem(at: draft) }
    let install = Process()
    install.executableURL = URL(fileURLWithPath: "/usr/bin/install")
    install.arguments = ["-m", "755", draft.path, url.path]
    try install.run()
    install.waitUntilExit()
    guard install.terminationStatus == 0 else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
    }
}
