import Foundation

/// What was found where a state file (a side's baseline, a pair's agreement) is kept.
package enum StateFile<Value: Sendable>: Sendable {
    case none
    case found(Value)
    /// A file that cannot be used, and why, in words.
    case unreadable(String)

    /// Reads the state file at `url` with `parse`.
    static func read(_ url: URL, parse: (Data) throws(StateFileError) -> Value) -> StateFile {
        guard FileKind(path: url.path) != .missing else { return .none }
        let data: Data
        do {
            data = try readRegularFile(atPath: url.path, limit: 1 << 32)
        } catch {
            return .unreadable("it \(error.message)")
        }
        do {
            return .found(try parse(data))
        } catch {
            return .unreadable(error.message)
        }
    }
}

/// Why a state file's bytes are not one this reckon reads, in words.
package struct StateFileError: Error, CustomStringConvertible {
    var message: String
    package var description: String { message }
}
