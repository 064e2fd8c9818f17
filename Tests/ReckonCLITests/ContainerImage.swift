import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The programs the container tests run.
extension Requirement {
    static let podman = Requirement.tool("podman")
    static let runc = Requirement("runc, the container runtime podman is told to use here") {
        ["/usr/sbin/runc", "/usr/bin/runc", "/usr/local/bin/runc", "/usr/local/sbin/runc"].contains {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }
    static let ldd = Requirement.tool("ldd")
    /// The release `reckon`, built from these sources: `.ci/run` builds it
    /// in a step of its own (`swift build -c release --product reckon`)
    /// before `swift test`, which never builds it.
    static let releaseBuild = Requirement("\(releaseReckon.path), built from these sources by `swift build -c release --product reckon`") {
        releaseBuildIsCurrent()
    }
}

/// The release `reckon` the image holds.
let releaseReckon = packageRoot.appendingPathComponent(".build/release/reckon")

/// Whether the release `reckon` exists and is newer than every file under
/// `Sources/` and `Package.swift`: an older one would put other code in the image.
func releaseBuildIsCurrent() -> Bool {
    func modified(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }
    guard let built = modified(releaseReckon.path) else { return false }
    let sources = packageRoot.appendingPathComponent("Sources")
    let files = (FileManager.default.subpaths(atPath: sources.path) ?? []).map { sources.appendingPathComponent($0).path }
    return (files + [packageRoot.appendingPathComponent("Package.swift").path]).allSatisfy { (modified($0) ?? 0) <= built }
}

/// Why the image could not be made: says which step, and what it printed.
struct ContainerSetupError: Error, CustomStringConvertible {
    var description: String
}

/// `name` found on this process's PATH, as a shell would find it.
func onPath(_ name: String) -> URL? {
    for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(folder)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return URL(fileURLWithPath: path) }
    }
    return nil
}

/// Runs `tool` (found on PATH) with `arguments`, and throws naming the step
/// and the tool's stderr when it exits with anything but 0.
@discardableResult
func runStep(_ tool: String, _ arguments: [String], environment: [String: String] = [:], in folder: URL = packageRoot) throws -> RunResult {
    guard let executable = onPath(tool) else { throw ContainerSetupError(description: "\(tool) is not on PATH") }
    let result = try runArray(arguments, environment: environment, in: folder, executable: executable)
    guard result.code == 0 else {
        throw ContainerSetupError(description: "\(([tool] + arguments).joined(separator: " ")) exited \(result.code): \(result.stderr)")
    }
    return result
}

/// The user the image runs as (`USER` in the Containerfile): not root, and
/// the `runAsUser` and `runAsGroup` of the Job on the Operations page.
let imageUser = (name: "reckon", uid: 1000, gid: 1000)

/// A folder holding what the top-level `Containerfile` copies into the
/// image: the release `reckon`; rclone; every shared library either loads,
/// as `ldd` names it, under `libraries/` at the path the loader finds it
/// (so the binaries' interpreter and run paths hold there too); the CA
/// bundle; and `passwd` and `group` naming the image's user. `files` is
/// every file the image gets, by its path there.
struct ImageContext {
    let folder: URL
    let files: Set<String>

    /// Makes the context in `folder` from the release reckon.
    static func make(in folder: URL, reckon: URL) throws -> ImageContext {
        guard let rclone = onPath("rclone")?.resolvingSymlinksInPath() else {
            throw ContainerSetupError(description: "rclone is not on PATH, and the image holds it")
        }
        let caBundle = URL(fileURLWithPath: "/etc/ssl/certs/ca-certificates.crt")
        var files: Set<String> = []
        func copy(_ source: URL, to name: String, imagePath: String, mode: mode_t) throws {
            let target = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            // Read through links: the image gets the library itself at the path the loader asks for.
            try Data(contentsOf: source.resolvingSymlinksInPath()).write(to: target)
            chmod(target.path, mode)
            files.insert(imagePath)
        }
        try copy(reckon, to: "reckon", imagePath: "/usr/local/bin/reckon", mode: 0o755)
        try copy(rclone, to: "rclone", imagePath: "/usr/bin/rclone", mode: 0o755)
        for library in try sharedLibraries(of: [reckon, rclone]) {
            try copy(URL(fileURLWithPath: library), to: "libraries" + library, imagePath: library, mode: 0o755)
        }
        try copy(caBundle, to: "ca-certificates.crt", imagePath: "/etc/ssl/certs/ca-certificates.crt", mode: 0o644)
        let (name, uid, gid) = imageUser
        for (file, line) in [("passwd", "\(name):x:\(uid):\(gid):reckon:/nonexistent:/nonexistent\n"), ("group", "\(name):x:\(gid):\n")] {
            try Data(line.utf8).write(to: folder.appendingPathComponent(file))
            chmod(folder.appendingPathComponent(file).path, 0o644)
            files.insert("/etc/" + file)
        }
        return ImageContext(folder: folder, files: files)
    }

    /// The shared libraries `binaries` load, by the absolute paths `ldd`
    /// gives (the loader itself included, the kernel's vDSO left out);
    /// throws naming any library ldd cannot find.
    static func sharedLibraries(of binaries: [URL]) throws -> Set<String> {
        var libraries: Set<String> = []
        for binary in binaries {
            let output = try runStep("ldd", [binary.path]).stdout
            for line in output.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                let words = line.split(separator: " ")
                if line.contains("not found") {
                    throw ContainerSetupError(description: "\(binary.path) needs \(words.first ?? ""), which ldd cannot find")
                }
                // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)` or `/lib64/ld-linux-x86-64.so.2 (0x…)`.
                let path = words.count >= 3 && words[1] == "=>" ? words[2] : words.first ?? ""
                if path.hasPrefix("/") { libraries.insert(String(path)) }
            }
        }
        guard !libraries.isEmpty else { throw ContainerSetupError(description: "ldd names no library of \(binaries.map(\.path))") }
        return libraries
    }
}

/// The image's context, made once per test process in a scratch folder
/// (or, with `RECKON_IMAGE_CONTEXT=DIR`, in DIR, an empty or missing folder
/// that is kept, so an operator can build the image from it with `podman
/// build -f Containerfile DIR`).
let imageContext: Result<ImageContext, ContainerSetupError> = {
    do {
        let reckon = releaseReckon
        let kept = ProcessInfo.processInfo.environment["RECKON_IMAGE_CONTEXT"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
        let folder = kept ?? scratchFolder("image")
        if let kept {
            try FileManager.default.createDirectory(at: kept, withIntermediateDirectories: true)
            guard try FileManager.default.contentsOfDirectory(atPath: kept.path).isEmpty else {
                return .failure(ContainerSetupError(description: "RECKON_IMAGE_CONTEXT=\(kept.path) is not empty; give an empty or missing folder"))
            }
        }
        return .success(try ImageContext.make(in: folder, reckon: reckon))
    } catch let error as ContainerSetupError {
        return .failure(error)
    } catch {
        return .failure(ContainerSetupError(description: "the image's context could not be made: \(error)"))
    }
}()

/// podman with a storage of its own in a scratch folder, so a test leaves
/// no image or container behind on the machine, run as this machine needs
/// it: with the `runc` runtime and a containers.conf of its own (given in
/// `CONTAINERS_CONF`, never written to /etc) setting no default ulimits, as
/// crun refuses the hybrid cgroups here.
final class Podman: Sendable {
    let folder: URL

    init() throws {
        folder = scratchFolder("podman")
        try Data("[containers]\ndefault_ulimits = []\n".utf8).write(to: folder.appendingPathComponent("containers.conf"))
    }

    /// Runs `podman` on this storage with `arguments`; throws when it fails.
    @discardableResult
    func callAsFunction(_ arguments: [String]) throws -> RunResult {
        try runStep("podman", globalArguments + arguments, environment: environment, in: folder)
    }

    /// Runs `podman` on this storage with `arguments`, whatever it exits with.
    func run(_ arguments: [String]) throws -> RunResult {
        guard let podman = onPath("podman") else { throw ContainerSetupError(description: "podman is not on PATH") }
        return try runArray(globalArguments + arguments, environment: environment, in: folder, executable: podman)
    }

    private var globalArguments: [String] {
        ["--root", folder.appendingPathComponent("root").path, "--runroot", folder.appendingPathComponent("run").path, "--runtime", "runc"]
    }

    private var environment: [String: String] { ["CONTAINERS_CONF": folder.appendingPathComponent("containers.conf").path] }

    /// Builds the top-level Containerfile over `context` as `tag`.
    func build(_ context: ImageContext, tag: String) throws {
        try self(["build", "--pull=never", "-f", packageRoot.appendingPathComponent("Containerfile").path, "-t", tag, context.folder.path])
    }

    /// Removes every container and image this storage holds, then the storage.
    func removeEverything() {
        _ = try? run(["rm", "--all", "--force"])
        _ = try? run(["rmi", "--all", "--force"])
        removeTree(folder.path)
    }
}
