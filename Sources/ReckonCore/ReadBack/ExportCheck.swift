import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension ExportFolder {
    /// Something in an export folder that reckon did not make: its path
    /// relative to the folder (empty for the folder itself) and why.
    package struct InTheWay: Error, Sendable, Equatable {
        package var path: String
        package var reason: String
    }

    /// What in `dir` stops a new export from replacing it, or nil when `dir`
    /// is absent, empty, or holds only an earlier reckon export: its
    /// `manifest.json` (written by reckon), the files that manifest lists
    /// `"in": "folder"` (or without `in`, as schema 1 wrote), each with the
    /// very size and SHA-256 listed, the folders that hold them, and staging
    /// folders of reckon exports that died. A listed file whose bytes
    /// changed is in the way too: reckon did not write those bytes. The
    /// first such file by name is given. Without `checkingBytes` only the
    /// names and sizes are compared (a quick second look before publishing).
    package static func inTheWay(of dir: URL, checkingBytes: Bool = true) -> InTheWay? {
        switch FileKind(path: dir.path) {
        case .missing: return nil
        case .directory: break
        case let other: return InTheWay(path: "", reason: "\(other.description) stands where the export folder must be")
        }
        let names: [String]
        switch listNames(dir.path) {
        case .success(let listed): names = listed
        case .failure(let failure): return failure
        }
        if names.isEmpty { return nil }
        let manifestPath = dir.appendingPathComponent(Exporter.manifestName).path
        guard names.contains(Exporter.manifestName) else {
            let what = FileKind(path: dir.path + "/" + names[0]) == .directory ? "folder" : "file"
            return InTheWay(path: names[0], reason: "reckon did not make this \(what): the folder holds no manifest.json of an earlier export")
        }
        guard FileKind(path: manifestPath).isRegular,
            let data = try? readRegularFile(atPath: manifestPath, limit: 1 << 30),
            case .object(let manifest)? = try? JSONValue.parse(data),
            manifest["generator"] == .string("reckon"),
            case .array(let records)? = manifest["files"]
        else {
            return InTheWay(path: Exporter.manifestName, reason: "is not a manifest an earlier reckon export wrote")
        }
        var listed: [String: (size: Int64, sha256: String)] = [:]
        var folders: Set<String> = []
        if case .array(let formats)? = manifest["formats"], formats.contains(.string(ExportFormat.markdown.rawValue)) {
            folders.insert(Exporter.markdownName)
        }
        for record in records {
            guard case .object(let file) = record, case .string(let path)? = file["path"], case .number(let size)? = file["size"],
                case .string(let sha256)? = file["sha256"], let bytes = Int64(size)
            else {
                return InTheWay(path: Exporter.manifestName, reason: "is not a manifest an earlier reckon export wrote (a file record is malformed)")
            }
            guard file["in"] == nil || file["in"] == .string(ExportManifest.Place.folder.rawValue) else { continue }
            listed[path] = (bytes, sha256)
            var parts = path.split(separator: "/").dropLast()
            while !parts.isEmpty {
                folders.insert(parts.joined(separator: "/"))
                parts = parts.dropLast()
            }
        }
        /// The first name under `folder` (relative `prefix`) that is in the way.
        func check(_ folder: String, _ prefix: String, _ names: [String]) -> InTheWay? {
            for name in names {
                let path = prefix + name
                let full = folder + "/" + name
                if prefix.isEmpty && name == Exporter.manifestName { continue }
                if prefix.isEmpty, let pid = stagingProcess(name), PrivateFolder.processIsGone(pid) { continue }
                switch FileKind(path: full) {
                case .directory:
                    guard folders.contains(path) else {
                        return InTheWay(
                            path: path, reason: "reckon did not make this folder: the manifest.json of the earlier export lists nothing in it")
                    }
                    switch listNames(full, shown: path) {
                    case .success(let inner): if let found = check(full, path + "/", inner) { return found }
                    case .failure(let failure): return failure
                    }
                case .regular(let size):
                    guard let record = listed[path] else {
                        return InTheWay(path: path, reason: "reckon did not make this file: the manifest.json of the earlier export does not list it")
                    }
                    let same =
                        size == record.size
                        && (!checkingBytes || (try? Exporter.sizeAndDigest(of: URL(fileURLWithPath: full)).1.hex) == record.sha256)
                    guard same else {
                        return InTheWay(path: path, reason: "changed since reckon exported it: its size or SHA-256 is not what manifest.json lists")
                    }
                case let other:
                    return InTheWay(path: path, reason: "is \(other.description), which reckon never makes in an export")
                }
            }
            return nil
        }
        return check(dir.path, "", names)
    }

    /// The memos the earlier export in `dir` holds, as its manifest counts
    /// them, and whether archived ones are among them; nil when `dir` holds
    /// no export whose manifest says so.
    package static func exportedCounts(in dir: URL) -> (counts: MemoCounts, includeArchived: Bool)? {
        guard let data = try? readRegularFile(atPath: dir.appendingPathComponent(Exporter.manifestName).path, limit: 1 << 30),
            case .object(let manifest)? = try? JSONValue.parse(data),
            case .object(let counts)? = manifest["counts"],
            case .number(let active)? = counts["active"], let active = Int(active),
            case .number(let archived)? = counts["archived"], let archived = Int(archived)
        else { return nil }
        return (MemoCounts(active: active, archived: archived), manifest["includeArchived"] == .bool(true))
    }

    /// What in `dir` reckon could not delete, so that removing `dir` would
    /// stop part of the way: a folder whose entries it may not remove (its
    /// permissions), or a file or folder marked immutable or append-only
    /// (`chattr +i`, `+a`), which not even root can delete. Nil when all of
    /// it can go. The first found by name is given.
    package static func removalBlocker(of dir: URL) -> InTheWay? {
        func check(_ full: String, _ path: String) -> InTheWay? {
            if reckon_is_immutable(full) == 1 {
                return InTheWay(path: path, reason: "is marked immutable or append-only (chattr), so it cannot be deleted")
            }
            guard FileKind(path: full) == .directory else { return nil }
            guard access(full, W_OK | X_OK) == 0 else {
                return InTheWay(path: path, reason: "what it holds cannot be deleted (\(AtomicFile.lastError()))")
            }
            switch listNames(full, shown: path) {
            case .success(let names):
                for name in names {
                    if let found = check(full + "/" + name, path.isEmpty ? name : path + "/" + name) { return found }
                }
                return nil
            case .failure(let failure): return failure
            }
        }
        return check(dir.path, "")
    }

    /// The names in a folder, sorted by their bytes, or why it cannot be listed.
    private static func listNames(_ path: String, shown: String = "") -> Result<[String], InTheWay> {
        var names: [String] = []
        let listed = listFolder(atPath: path) { name, _ in names.append(String(decoding: name, as: UTF8.self)) }
        guard listed else { return .failure(InTheWay(path: shown, reason: "the folder cannot be read (\(AtomicFile.lastError()))")) }
        return .success(names.sorted(by: utf8Precedes))
    }
}
