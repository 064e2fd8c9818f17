import Foundation

/// The keys of an encrypted iPhone backup (iOS 10.2 and later, and the
/// keybag before it, without the SHA-256 round), as far as reckon reads it:
///
/// - `Manifest.plist`'s `BackupKeyBag` is a list of tag, length, value
///   (4-byte tags, 4-byte big-endian lengths). Its first `UUID` and `WRAP`
///   are the bag's own, with `SALT`, `ITER` and (iOS 10.2+) `DPSL`, `DPIC`;
///   each later `UUID` starts a protection class: `CLAS`, `WRAP`, `WPKY`.
/// - The passcode key is PBKDF2-HMAC-SHA1(PBKDF2-HMAC-SHA256(password, DPSL,
///   DPIC), SALT, ITER); it unwraps (RFC 3394) each class key whose `WRAP & 2`.
///   An unwrap that fails its integrity check means the password is wrong.
/// - `ManifestKey` (a 4-byte little-endian class, then a wrapped key)
///   decrypts `Manifest.db`; each file's key is in its `Files.file` record,
///   wrapped with its class's key; files are AES-256-CBC with a zero IV,
///   cut to the record's `Size`.
package enum EncryptedBackup {
    /// The parts of `BackupKeyBag` reckon uses.
    struct Keybag {
        var salt: Data
        var iterations: Int
        var dpsl: Data?
        var dpic: Int
        /// Each protection class's wrapped key, with whether the passcode key wraps it.
        var classes: [UInt32: (wrapped: Data, byPasscode: Bool)]
    }

    /// The class keys of one backup, unwrapped, and how long their derivation took.
    package final class ClassKeys: Sendable {
        let keys: [UInt32: SecretBytes]
        package let seconds: Double

        init(keys: [UInt32: SecretBytes], seconds: Double) {
            self.keys = keys
            self.seconds = seconds
        }

        /// A key wrapped with its class's key (a 4-byte little-endian class, then 40 bytes), unwrapped.
        func unwrap(_ classAndKey: Data) -> SecretBytes? {
            guard classAndKey.count == 44 else { return nil }
            let bytes = [UInt8](classAndKey.prefix(4))
            let protectionClass = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
            guard let classKey = keys[protectionClass] else { return nil }
            return BackupCrypto.unwrap(Data(classAndKey.dropFirst(4)), with: classKey)
        }
    }

    /// A file's key and its plain size, from its `Files.file` record; no
    /// size for `Manifest.db`, a SQLite file, whose padding is taken off
    /// unless it is a whole number of pages.
    package struct FileKey: Sendable {
        let key: SecretBytes
        let size: Int?
    }

    /// The wrong password, in the words: nothing else is read after it.
    static let wrongPassword = "the backup's password is wrong"

    /// The keybag in `data`, or why it is not one.
    static func keybag(_ data: Data) throws(PhoneBackup.Failure) -> Keybag {
        let bytes = [UInt8](data)
        var position = 0
        var bag: [String: Data] = [:]
        var classes: [UInt32: (wrapped: Data, byPasscode: Bool)] = [:]
        var current: [String: Data]?
        func close(_ fields: [String: Data]?) {
            guard let fields, let clas = fields["CLAS"], clas.count == 4, let key = fields["WPKY"] else { return }
            let number = clas.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let wrap = fields["WRAP"].map { $0.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } } ?? 0
            classes[number] = (key, wrap & 2 != 0)
        }
        while position < bytes.count {
            guard position + 8 <= bytes.count, let tag = String(bytes: bytes[position..<position + 4], encoding: .ascii),
                let length = BinaryPlist.number(bytes, at: position + 4, size: 4), position + 8 + length <= bytes.count
            else { throw PhoneBackup.Failure(message: "its keybag (BackupKeyBag in Manifest.plist) is damaged; make a new backup") }
            let value = Data(bytes[(position + 8)..<(position + 8 + length)])
            position += 8 + length
            if tag == "UUID" && bag["UUID"] != nil {
                close(current)
                current = [:]
            }
            if current != nil { current![tag] = value } else { bag[tag] = value }
        }
        close(current)
        func integer(_ tag: String) -> Int? {
            guard let value = bag[tag], (1...8).contains(value.count) else { return nil }
            return value.reduce(0) { $0 << 8 | Int($1) }
        }
        guard let salt = bag["SALT"], let iterations = integer("ITER"), !classes.isEmpty else {
            throw PhoneBackup.Failure(
                message: "its keybag (BackupKeyBag in Manifest.plist) has no salt, iteration count or class keys; make a new backup")
        }
        let dpsl = bag["DPSL"]
        return Keybag(salt: salt, iterations: iterations, dpsl: dpsl, dpic: integer("DPIC") ?? 0, classes: classes)
    }

    /// The class keys, from the password: one key derivation, then every
    /// class key the passcode key wraps. Fails with `wrongPassword` when an unwrap fails.
    static func unlock(_ keybag: Keybag, password: SecretBytes) throws(PhoneBackup.Failure) -> ClassKeys {
        let start = DispatchTime.now().uptimeNanoseconds
        let passcodeKey: SecretBytes
        do {
            passcodeKey = try BackupCrypto.passcodeKey(
                password, dpsl: keybag.dpsl, dpic: keybag.dpic, salt: keybag.salt, iterations: keybag.iterations)
        } catch {
            throw PhoneBackup.Failure(message: "its keybag cannot be used: \(error.message); make a new backup")
        }
        var keys: [UInt32: SecretBytes] = [:]
        for (number, wrapped) in keybag.classes where wrapped.byPasscode {
            guard let key = BackupCrypto.unwrap(wrapped.wrapped, with: passcodeKey) else { throw PhoneBackup.Failure(message: wrongPassword) }
            keys[number] = key
        }
        return ClassKeys(keys: keys, seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }

    /// A data file's key and size from its `Files.file` record (a keyed
    /// archive of an `MBFile`); nil when the record holds none that unwraps.
    static func fileKey(_ record: Data, with keys: ClassKeys) -> FileKey? {
        guard case .dictionary(let top)? = BinaryPlist.parse(record), case .array(let objects)? = top["$objects"],
            case .dictionary(let tops)? = top["$top"], case .uid(let rootIndex)? = tops["root"], rootIndex < objects.count
        else { return nil }
        let root = objects[rootIndex]
        guard case .integer(let size)? = root.archived("Size", in: objects), size >= 0 else { return nil }
        let wrapped: Data
        switch root.archived("EncryptionKey", in: objects) {
        case .data(let data)?: wrapped = data
        case let value?:
            guard case .data(let data)? = value.archived("NS.data", in: objects) else { return nil }
            wrapped = data
        case nil: return nil
        }
        return keys.unwrap(wrapped).map { FileKey(key: $0, size: Int(size)) }
    }
}

extension BackupPassword {
    /// The class keys of the backup whose keybag is `keybag`, unlocked the
    /// first time it is asked in this run, and kept in memory only.
    func classKeys(for keybag: Data, unlock: (SecretBytes) throws(PhoneBackup.Failure) -> EncryptedBackup.ClassKeys) throws(PhoneBackup.Failure)
        -> EncryptedBackup.ClassKeys
    {
        if let known = unlocked.withLock({ $0[keybag] }) { return try known.get() }
        let result = Result { () throws(PhoneBackup.Failure) in
            let password: SecretBytes
            do throws(BackupPassword.Failure) {
                password = try self.password()
            } catch {
                throw PhoneBackup.Failure(message: error.message, isUsage: error.isUsage)
            }
            return try unlock(password)
        }
        unlocked.withLock { $0[keybag] = result }
        return try result.get()
    }
}
