import Foundation
import SeededGenerator

/// The one seed of every random test: `RECKON_TEST_SEED` when set, else a
/// seed drawn once per test process. Each random test prints it, so
/// `RECKON_TEST_SEED=<printed seed> swift test --filter <test>` gives that
/// test the very same inputs again.
public enum TestSeed {
    public static let value: UInt64 = {
        guard let text = ProcessInfo.processInfo.environment["RECKON_TEST_SEED"] else { return UInt64.random(in: 0...UInt64.max) }
        guard let seed = UInt64(text) else { fatalError("RECKON_TEST_SEED is '\(text)': it must be a whole number from 0 to \(UInt64.max)") }
        return seed
    }()

    /// A generator seeded with `value` for the test `test`, which it names
    /// when it prints the seed.
    public static func generator(for test: String = #function) -> SeededRandom {
        print("\(test): RECKON_TEST_SEED=\(value) replays it")
        return SeededRandom(seed: value)
    }
}
