import Foundation
import Testing

/// Standard output that cannot be written (a full disk, here `/dev/full`)
/// is said in words on stderr with exit 2, after the command's work; it is
/// never a crash. Before, Foundation's `FileHandle.write` stopped the
/// program with its error domain and a stack trace.
@Suite struct StandardOutputTests {
    @Test(arguments: [
        ["counts", "Samples/drift/drive"],
        ["counts", "Samples/drift/drive", "--json"],
        ["reconcile", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive"],
        ["--version"]
    ])
    func anOutputThatCannotBeWrittenIsNamedNotACrash(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = reckonBinary
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        let errors = Pipe()
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stderr = String(decoding: BackgroundRead(errors.fileHandleForReading).wait(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 2, "\(stderr)")
        #expect(stderr == "Error: cannot write to standard output: No space left on device\n")
    }
}
