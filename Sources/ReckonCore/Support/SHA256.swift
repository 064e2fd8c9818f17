import CCrypto
import Foundation

/// SHA-256 from OpenSSL's libcrypto, the one place reckon hashes bytes.
/// Owns its digest context; not `Sendable`.
public final class SHA256 {
    private let context: OpaquePointer

    public init() {
        context = EVP_MD_CTX_new()!
        precondition(EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1, "EVP_DigestInit_ex(SHA-256) failed")
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        precondition(EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1, "EVP_DigestUpdate failed")
    }

    public func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// The digest in small hexadecimal letters; call once.
    public func finalize() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &digest, &length) == 1, "EVP_DigestFinal_ex failed")
        let hex = Array("0123456789abcdef".utf8)
        return String(decoding: digest.prefix(Int(length)).flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 15)]] }, as: UTF8.self)
    }

    /// The digest of a file's contents, read in chunks.
    public static func hex(ofFileAt url: URL) throws -> String {
        let input = try FileHandle(forReadingFrom: url)
        defer { try? input.close() }
        let hasher = SHA256()
        while let chunk = try input.read(upToCount: 1 << 16), !chunk.isEmpty { hasher.update(chunk) }
        return hasher.finalize()
    }

    /// The digest of `data` in small hexadecimal letters.
    public static func hex(of data: Data) -> String {
        let hasher = SHA256()
        hasher.update(data)
        return hasher.finalize()
    }
}
