import CCrypto
import Foundation
import Synchronization

/// Bytes that must not outlive their use (a backup's password, a key): held
/// in memory reckon allocated, never in a `String`, and cleared with
/// `OPENSSL_cleanse` when let go.
package final class SecretBytes: @unchecked Sendable {
    /// Never changed after `init`; cleared in `deinit`.
    private let buffer: UnsafeMutableRawBufferPointer

    /// A copy of `bytes`; the caller clears its own.
    package init(copying bytes: UnsafeRawBufferPointer) {
        buffer = .allocate(byteCount: max(bytes.count, 1), alignment: 16)
        if let base = bytes.baseAddress { buffer.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
        count = bytes.count
    }

    /// `count` bytes that `fill` writes.
    package init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        buffer = .allocate(byteCount: max(count, 1), alignment: 16)
        self.count = count
        // Should `fill` throw, `deinit` clears and frees the buffer.
        try fill(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
    }

    package let count: Int

    /// Lends the bytes to `body`, which must not keep them.
    package func withBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    deinit {
        OPENSSL_cleanse(buffer.baseAddress, buffer.count)
        buffer.deallocate()
    }
}

/// Where an encrypted iPhone backup's password comes from: the command line
/// makes one (the environment, a password file, a prompt at a terminal), and
/// the backup asks it at most once per run, only when it finds the backup
/// encrypted. The password never becomes a `String`.
package final class BackupPassword: Sendable, Hashable {
    /// Why no password could be had, in one sentence a person understands
    /// (never holding the password).
    package struct Failure: Error, CustomStringConvertible {
        package var message: String
        /// A usage error (a password file that is not private, say): exit 64; else trouble.
        package var isUsage: Bool
        package var description: String { message }

        package init(_ message: String, isUsage: Bool = false) {
            self.message = message
            self.isUsage = isUsage
        }
    }

    private let ask: @Sendable () throws(Failure) -> SecretBytes
    private let asked = Mutex<Result<SecretBytes, Failure>?>(nil)
    /// Each backup's class keys, by its keybag, or why they could not be had: one key derivation per run.
    let unlocked = Mutex<[Data: Result<EncryptedBackup.ClassKeys, PhoneBackup.Failure>]>([:])
    /// The stores found in each backup (by folder and app), or why none could be: its manifest read once per run.
    let found = Mutex<[String: Result<[PhoneBackup.StoreFiles], PhoneBackup.Failure>]>([:])

    /// `ask` gives the password; it is called at most once.
    package init(_ ask: @escaping @Sendable () throws(Failure) -> SecretBytes) { self.ask = ask }

    /// The password, asked the first time.
    package func password() throws(Failure) -> SecretBytes {
        try asked.withLock { known in
            if known == nil { known = Result { () throws(Failure) in try ask() } }
            return known!
        }.get()
    }

    package static func == (a: BackupPassword, b: BackupPassword) -> Bool { a === b }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
