import CCrypto
import Foundation

/// The cryptography of an encrypted iPhone backup, through libcrypto: the
/// passcode key's two PBKDF2 rounds, RFC 3394 key unwrapping, and
/// AES-256-CBC with a zero IV. Keys go in and out as `SecretBytes`.
enum BackupCrypto {
    struct Failure: Error {
        var message: String
    }

    /// PBKDF2-HMAC-SHA1(PBKDF2-HMAC-SHA256(password, `dpsl`, `dpic`), `salt`, `iterations`), 32 bytes;
    /// only the SHA-1 round when the keybag has no `dpsl` (before iOS 10.2).
    static func passcodeKey(_ password: SecretBytes, dpsl: Data?, dpic: Int, salt: Data, iterations: Int) throws(Failure) -> SecretBytes {
        var first = password
        if let dpsl {
            first = try pbkdf2(password, salt: dpsl, iterations: dpic, digest: EVP_sha256())
        }
        return try pbkdf2(first, salt: salt, iterations: iterations, digest: EVP_sha1())
    }

    private static func pbkdf2(_ secret: SecretBytes, salt: Data, iterations: Int, digest: OpaquePointer?) throws(Failure) -> SecretBytes {
        guard iterations > 0, iterations <= Int(Int32.max) else {
            throw Failure(message: "its iteration count \(iterations) is not one a backup uses")
        }
        do {
            return try SecretBytes(count: 32) { out in
                let done = secret.withBytes { password in
                    salt.withUnsafeBytes { salt in
                        PKCS5_PBKDF2_HMAC(
                            password.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(password.count),
                            salt.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(salt.count), Int32(iterations), digest, 32,
                            out.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
                guard done == 1 else { throw Failure(message: "libcrypto could not derive the key") }
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(message: "\(error)")
        }
    }

    /// `wrapped` (40 bytes) unwrapped with `kek` by RFC 3394; nil when the
    /// integrity check fails: the key-encryption key is not the one it was wrapped with.
    static func unwrap(_ wrapped: Data, with kek: SecretBytes) -> SecretBytes? {
        guard wrapped.count == 40, kek.count == 32, let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        EVP_CIPHER_CTX_set_flags(context, Int32(EVP_CIPHER_CTX_FLAG_WRAP_ALLOW))
        let initialised = kek.withBytes { key in
            EVP_DecryptInit_ex(context, EVP_aes_256_wrap(), nil, key.baseAddress!.assumingMemoryBound(to: UInt8.self), nil)
        }
        guard initialised == 1 else { return nil }
        return try? SecretBytes(count: 32) { out in
            // A wrapped key's plain text may be longer than the key; the buffer has room for all of it.
            var room = [UInt8](repeating: 0, count: 48)
            defer { OPENSSL_cleanse(&room, room.count) }
            var length: Int32 = 0
            let done = wrapped.withUnsafeBytes { input in
                EVP_DecryptUpdate(context, &room, &length, input.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(input.count))
            }
            guard done == 1, length == 32 else { throw Failure(message: "the key could not be unwrapped") }
            out.copyBytes(from: room[0..<32])
        }
    }

    /// Decrypts AES-256-CBC with a zero IV, `body` given the plain text a
    /// piece at a time (each piece is lent and cleared after); `input` gives
    /// the cipher text in pieces of a multiple of 16 bytes, nil at its end.
    static func decrypt(
        with key: SecretBytes, input: () throws -> Data?, body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        guard key.count == 32, let context = EVP_CIPHER_CTX_new() else { throw Failure(message: "libcrypto could not start AES") }
        defer { EVP_CIPHER_CTX_free(context) }
        let zero = [UInt8](repeating: 0, count: 16)
        let initialised = key.withBytes { key in
            EVP_DecryptInit_ex(context, EVP_aes_256_cbc(), nil, key.baseAddress!.assumingMemoryBound(to: UInt8.self), zero)
        }
        guard initialised == 1 else { throw Failure(message: "libcrypto could not start AES") }
        EVP_CIPHER_CTX_set_padding(context, 0)
        var plain = [UInt8](repeating: 0, count: 1 << 20 + 32)
        defer { OPENSSL_cleanse(&plain, plain.count) }
        while let piece = try input() {
            guard !piece.isEmpty else { continue }
            var length: Int32 = 0
            let done = piece.withUnsafeBytes { cipher in
                EVP_DecryptUpdate(context, &plain, &length, cipher.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(cipher.count))
            }
            guard done == 1 else { throw Failure(message: "libcrypto could not decrypt it") }
            try plain.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<Int(length)])) }
        }
        var length: Int32 = 0
        guard EVP_DecryptFinal_ex(context, &plain, &length) == 1 else {
            throw Failure(message: "its length is not a whole number of AES blocks")
        }
    }
}
