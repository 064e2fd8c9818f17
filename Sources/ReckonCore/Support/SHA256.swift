import CCrypto
import Foundation

/// SHA-256 from OpenSSL's libcrypto, the one place reckon hashes bytes.
public enum SHA256 {
    /// The digest of `data` in small hexadecimal letters.
    public static func hex(of data: Data) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = data.withUnsafeBytes { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, EVP_sha256(), nil)
        }
        precondition(ok == 1, "EVP_Digest(SHA-256) failed")
        return digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }
}
