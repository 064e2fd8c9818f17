import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Something a test needs from the machine it runs on: root to mount a
/// file system, or a program such as unzip or rclone.
public struct Requirement: Sendable {
    /// What is needed, in words ("/usr/bin/unzip").
    public let what: String
    let isMet: @Sendable () -> Bool

    public init(_ what: String, isMet: @escaping @Sendable () -> Bool) {
        self.what = what
        self.isMet = isMet
    }

    /// Root with the right to mount (CAP_SYS_ADMIN), for a tmpfs or a bind mount.
    public static let root = Requirement("root with CAP_SYS_ADMIN, to mount a file system") {
        guard geteuid() == 0, let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
            let capabilities = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return capabilities & (1 << 21) != 0
    }

    /// At least `count` processors, for a test of work that runs at once.
    public static func processors(_ count: Int) -> Requirement {
        Requirement("\(count) processors") { ProcessInfo.processInfo.activeProcessorCount >= count }
    }

    /// The program at `path`, or named `path` on PATH.
    public static func tool(_ path: String) -> Requirement {
        Requirement(path) {
            guard !path.contains("/") else { return FileManager.default.isExecutableFile(atPath: path) }
            return (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
                .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(path)") }
        }
    }
}

/// Whether this is a CI run (the variable `CI` set, as `.ci/run` sets it):
/// there every test must run.
public let isCI = ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty } ?? false

/// Why a CI run failed a test: something it needs is missing.
struct MissingRequirement: Error, CustomStringConvertible {
    var missing: [String]
    var description: String { "CI runs every test, and this one needs \(missing.joined(separator: ", ")), which this machine lacks" }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test (or suite) only where each of `requirements` is met;
    /// elsewhere it is skipped, naming what it needs. When `CI` is set, a
    /// missing requirement fails the test instead, so a CI run never passes
    /// green over a test it did not run.
    public static func needs(_ requirements: Requirement..., sourceLocation: SourceLocation = #_sourceLocation) -> Self {
        enabled(Comment(rawValue: "needs " + requirements.map(\.what).joined(separator: ", ")), sourceLocation: sourceLocation) {
            let missing = requirements.filter { !$0.isMet() }.map(\.what)
            guard !missing.isEmpty else { return true }
            if isCI { throw MissingRequirement(missing: missing) }
            return false
        }
    }
}
