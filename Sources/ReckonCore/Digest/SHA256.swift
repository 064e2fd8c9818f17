import CCrypto
import Foundation

/// SHA-256 from OpenSSL's libcrypto, the one place reckon hashes bytes.
/// Owns its digest context; not `Sendable`.
package final class SHA256 {
    private let context: OpaquePointer

    package init() {
        context = EVP_MD_CTX_new()!
        precondition(EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1, "EVP_DigestInit_ex(SHA-256) failed")
    }

    deinit { EVP_MD_CTX_free(context) }

    package func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        precondition(EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1, "EVP_DigestUpdate failed")
    }

    package func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// A SHA-256 digest: its 32 bytes held inline, so keeping many costs no allocation each.
    package struct Digest: Sendable, Hashable {
        let words: (UInt64, UInt64, UInt64, UInt64)

        init(words: (UInt64, UInt64, UInt64, UInt64)) { self.words = words }

        fileprivate init(_ bytes: [UInt8]) {
            func word(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
            words = (word(0), word(8), word(16), word(24))
        }

        /// The digest in small hexadecimal letters.
        /// Written straight into the string's own storage: verify and the
        /// manifest make one for each of 184,000 files at 100k.
        package var hex: String {
            String(unsafeUninitializedCapacity: 64) { text in
                let digits = Self.hexDigits.utf8Start
                for (index, word) in [words.0, words.1, words.2, words.3].enumerated() {
                    for nibble in 0..<16 { text[16 * index + nibble] = digits[Int((word >> UInt64(60 - 4 * nibble)) & 15)] }
                }
                return 64
            }
        }

        private static let hexDigits: StaticString = "0123456789abcdef"

        /// The digest in base64, as a Content-Security-Policy names a script by it.
        package var base64: String {
            Data([words.0, words.1, words.2, words.3].flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> UInt64(56 - 8 * $0)) } })
                .base64EncodedString()
        }

        package static func == (a: Digest, b: Digest) -> Bool { a.words == b.words }
        package func hash(into hasher: inout Hasher) {
            hasher.combine(words.0)
            hasher.combine(words.1)
            hasher.combine(words.2)
            hasher.combine(words.3)
        }
    }

    /// The digest of everything updated so far; call once.
    package func finalize() -> Digest {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &digest, &length) == 1 && length == 32, "EVP_DigestFinal_ex failed")
        return Digest(digest)
    }

    /// The digest of some bytes.
    package static func digest(of bytes: UnsafeRawBufferPointer) -> Digest {
        let hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The digest of `data` in small hexadecimal letters.
    package static func hex(of data: Data) -> String {
        data.withUnsafeBytes { digest(of: $0) }.hex
    }

    /// The MD5 of `data` in small hexadecimal letters: only to check a
    /// download against the MD5 a remote's listing gives, never to tell
    /// files apart.
    package static func md5Hex(of data: Data) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = data.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_md5(), nil) }
        precondition(done == 1 && length == 16, "EVP_Digest(MD5) failed")
        return digest.prefix(16).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
