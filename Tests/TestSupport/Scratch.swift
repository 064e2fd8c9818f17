import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The folder this test process makes its files in, under the system's
/// temporary folder, named by the process id. It goes when the process
/// exits, and the next test process removes any left by one that died.
public let testScratch: URL = {
    let temporary = FileManager.default.temporaryDirectory
    for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? [] {
        guard name.hasPrefix(scratchPrefix), let pid = pid_t(name.dropFirst(scratchPrefix.count)),
            kill(pid, 0) != 0 && errno == ESRCH
        else { continue }
        removeTree(temporary.appendingPathComponent(name).path)
    }
    let url = temporary.appendingPathComponent(scratchPrefix + String(getpid()))
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    atexit { removeTree(testScratch.path) }
    return url
}()

private let scratchPrefix = "reckon-tests-"

/// How many folders `scratchFolder` made.
private let foldersMade = Atomic(0)

/// A new empty folder in `testScratch`, named `prefix` and a number. The
/// name is short: a socket's path holds at most 107 bytes.
public func scratchFolder(_ prefix: String) -> URL {
    let url = testScratch.appendingPathComponent("\(prefix)-\(foldersMade.add(1, ordering: .relaxed).newValue)")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Removes `path` and everything under it, never following a link. Names
/// are kept as bytes, so one that is not UTF-8 goes too. Folders are made
/// writable first: some tests take that right away.
public func removeTree(_ path: String) {
    removeTree(bytes: Array(path.utf8CString))
}

private func removeTree(bytes path: [CChar]) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    guard info.st_mode & S_IFMT == S_IFDIR else {
        unlink(path)
        return
    }
    chmod(path, 0o700)
    var names: [[CChar]] = []
    if let folder = opendir(path) {
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.bindMemory(to: CChar.self).prefix { $0 != 0 }) }
            if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
        }
        closedir(folder)
    }
    for name in names { removeTree(bytes: path.dropLast() + [0x2F] + name + [0]) }
    rmdir(path)
}
