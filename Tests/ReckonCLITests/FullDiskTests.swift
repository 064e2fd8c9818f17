import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A full disk for real (issue 33): each command of the fault sweep runs
/// with its outputs, state, cache and the store's private copy (`TMPDIR`)
/// on a tmpfs sized to what it held before plus 25%, 50% and 75% of what a
/// clean run writes (the files it leaves new or changed, in pages, and the
/// store's private copy), and is held to the sweep's promises. The disk is
/// then made roomy and the command run again, to leave what a clean run
/// leaves. Mounting needs root.
@Suite(.serialized, .needs(.root)) struct FullDiskTests {
    @Test(arguments: FaultCase.all)
    func aFullDiskLosesNothing(_ sweep: FaultCase) throws {
        let report = try FaultSweep(sweep).runOnFullDisks(fractions: [25, 50, 75])
        #expect(report.failures.isEmpty, "\(report.failures.joined(separator: "\n"))")
    }
}

extension FaultSweep {
    /// The tmpfs the outputs and `TMPDIR` are on: `out` and `tmp` of the
    /// work folder are bound to folders of it, so the work folder's paths
    /// stay as they are.
    var disk: URL { scratch.appendingPathComponent("disk") }
    static let roomy = 256 << 20

    /// Runs the case once on a roomy disk, then on a disk of each fraction
    /// of the bytes that clean run wrote.
    func runOnFullDisks(fractions: [Int]) throws -> Report {
        try makeTemplate()
        let before = try Self.comparable(fingerprint(template))
        try stage(1 + fractions.count)
        try use(copy: 0)
        let held = try mountDisk(size: Self.roomy)
        let clean = try reckonRun(sweep.arguments, fault: nil, log: nil)
        let cleanTree = try Self.comparable(fingerprint(work))
        // What the run wrote: each file it left new or changed, in the
        // tmpfs's pages (an export that replaces another adds little to
        // what the disk holds, but writes the whole new one first), and the
        // store's private copy, which is gone by then.
        let page = 4096
        let written =
            try cleanTree.filter { $0.value != before[$0.key] && $0.value != "folder" && !$0.value.hasPrefix("link to ") }.keys.reduce(0) {
                total, path in
                let size = (try FileManager.default.attributesOfItem(atPath: work.path + path)[.size] as? Int) ?? 0
                return total + (size + page - 1) / page * page
            } + privateCopyBytes()

        unmountDisk()
        var failures: [String] = []
        for (index, fraction) in fractions.enumerated() {
            try use(copy: index + 1)
            let size = held + written * fraction / 100
            _ = try mountDisk(size: size)
            defer { unmountDisk() }
            let result = try reckonRun(sweep.arguments, fault: nil, log: nil)
            print("full disk, \(sweep.name), \(size) bytes (\(fraction)%): exit \(result.code)")
            let found = try check(
                result, call: nil, errno: ENOSPC, before: before, clean: cleanTree, cleanCode: clean.code, log: nil,
                beforeRecovery: { try remountDisk(size: Self.roomy) })
            if !found.isEmpty {
                failures.append(
                    "\(sweep.name) on a disk of \(size) bytes (\(fraction)% of the \(written) bytes a clean run writes): "
                        + found.prefix(3).joined(separator: "; "))
            }
        }
        return Report(points: fractions.count, runs: fractions.count, failures: failures)
    }

    /// Mounts a tmpfs of `size` bytes, moves the work folder's `out` and
    /// `tmp` onto it and binds them back in place; gives the bytes it then holds.
    func mountDisk(size: Int) throws -> Int {
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        try #require(mount("tmpfs", disk.path, "tmpfs", 0, "size=\(size)") == 0, "mount: \(String(cString: strerror(errno)))")
        for name in ["out", "tmp"] {
            let place = work.appendingPathComponent(name)
            let onDisk = disk.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: place.path) {
                let copied = try runArray(["-a", place.path, onDisk.path], executable: URL(fileURLWithPath: "/bin/cp"))
                try #require(copied.code == 0, "cp: \(copied.stderr)")
            } else {
                try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true)
                try FileManager.default.createDirectory(at: onDisk, withIntermediateDirectories: true)
            }
            try #require(mount(onDisk.path, place.path, nil, UInt(MS_BIND), nil) == 0, "bind: \(String(cString: strerror(errno)))")
        }
        return try used()
    }

    /// Makes the mounted disk `size` bytes, keeping what it holds.
    func remountDisk(size: Int) throws {
        try #require(mount("tmpfs", disk.path, "tmpfs", UInt(MS_REMOUNT), "size=\(size)") == 0, "remount: \(String(cString: strerror(errno)))")
    }

    func unmountDisk() {
        for name in ["out", "tmp"] { umount(work.appendingPathComponent(name).path) }
        umount(disk.path)
    }

    /// The bytes in use on the disk.
    func used() throws -> Int {
        var info = statvfs()
        try #require(statvfs(disk.path, &info) == 0)
        return Int(info.f_blocks - info.f_bfree) * Int(info.f_frsize)
    }

    /// The store's files, which a run reading the store copies to `TMPDIR`.
    func privateCopyBytes() throws -> Int {
        guard sweep.arguments.contains(FaultCase.storePipeline) else { return 0 }
        let store = work.appendingPathComponent("Samples/store")
        return try FileManager.default.contentsOfDirectory(atPath: store.path).reduce(0) { total, name in
            total + ((try FileManager.default.attributesOfItem(atPath: store.appendingPathComponent(name).path)[.size] as? Int) ?? 0)
        }
    }
}
