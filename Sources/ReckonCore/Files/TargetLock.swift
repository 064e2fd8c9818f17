import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The lock apply and undo hold on a memo folder they write: one per
/// target, not per pipeline, so two pipelines naming one folder never write
/// it at once. The locks lie in one folder shared by every pipeline —
/// `/run/lock/reckon/` when it can be used, else `$TMPDIR/reckon-locks/` —
/// each named by the first 16 hex digits of the SHA-256 of the target's
/// real path (the folder holding `index.json`) or, for a remote, of how
/// `SideIdentity` names it (a hash, so no secret shows).
package enum TargetLock {
    /// Why no lock folder can be used, or why a side is never a target.
    package struct Refusal: Error, CustomStringConvertible {
        package var description: String
    }

    /// Takes the target's lock, or throws `RunLock.Busy` naming the process
    /// that holds it. `folder` is the lock folder (tests give their own).
    package static func lock(_ side: SideSpec, in folder: URL? = nil) throws -> RunLock {
        let name = try lockName(side)
        let folder = try folder ?? lockFolder()
        try checkPrivate(folder)
        return try RunLock(at: folder.appendingPathComponent(name + ".lock"))
    }

    /// The lock file's name for a side: 16 hex digits.
    package static func lockName(_ side: SideSpec) throws(Refusal) -> String {
        let place = try side.kind.lockPlace(shown: Rclone.masked(side.path))
        return String(SHA256.hex(of: Data(place.utf8)).prefix(16))
    }

    /// `/run/lock/reckon` when it is, or can be made, a folder of this
    /// user's that no one else can write; else `$TMPDIR/reckon-locks`, made
    /// so when missing.
    package static func lockFolder() throws -> URL {
        let shared = URL(fileURLWithPath: "/run/lock/reckon")
        if access("/run/lock", W_OK) == 0 || FileKind(path: shared.path) == .directory {
            if (try? made(shared)) != nil { return shared }
        }
        do {
            return try made(URL(fileURLWithPath: PrivateFolder.temporaryRoot).appendingPathComponent("reckon-locks"))
        } catch let error as OutputError {
            throw OutputError(path: error.path, reason: PrivateFolder.namingTMPDIR(error.reason))
        }
    }

    /// The folder, made with mode 0700 when missing, and checked.
    private static func made(_ folder: URL) throws -> URL {
        if mkdir(folder.path, 0o700) != 0 && errno != EEXIST {
            throw OutputError(path: folder.path, reason: AtomicFile.lastError())
        }
        try checkPrivate(folder)
        return folder
    }

    /// Refuses a lock folder that is a link, not a folder, someone else's, or writable by others.
    private static func checkPrivate(_ folder: URL) throws {
        var info = stat()
        guard lstat(folder.path, &info) == 0 else { throw OutputError(path: folder.path, reason: AtomicFile.lastError()) }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: throw OutputError(path: folder.path, reason: "a link stands where the lock folder must be; reckon does not follow it")
        default: throw OutputError(path: folder.path, reason: "\(FileKind(path: folder.path).description) stands where the lock folder must be")
        }
        guard info.st_uid == getuid(), info.st_mode & 0o022 == 0 else {
            throw OutputError(
                path: folder.path,
                reason: "the lock folder belongs to another user or others can write in it; reckon keeps its locks only in a folder of its own")
        }
    }
}
