import Foundation
import ReckonCore
import TestSupport
import Testing

extension Requirement {
    /// Debian's python3-cryptography, which the sample backups' generator
    /// (`Samples/backup/make-encrypted.py`) wraps keys and encrypts with.
    static let pythonCryptography = Requirement("python3-cryptography (cryptography's keywrap and AES for /usr/bin/python3)") {
        let check = "from cryptography.hazmat.primitives.keywrap import aes_key_wrap; from cryptography.hazmat.primitives.ciphers import Cipher"
        return (try? runArray(["-I", "-c", check], executable: debianPython))?.code == 0
    }

    /// A reader of encrypted backups no one here wrote: the PyPI packages
    /// `iphone-backup-decrypt` and `pycryptodome` (3.23 or later, newer than
    /// Debian's) in the virtual environment `.ci/run` makes. Tests never make
    /// it themselves: that needs the network.
    static let backupReader = Requirement(
        "iphone-backup-decrypt and pycryptodome>=3.23 in .build/python-venv (made by .ci/run)"
    ) {
        let check = """
            import Crypto, iphone_backup_decrypt
            assert tuple(int(part) for part in Crypto.__version__.split(".")[:2]) >= (3, 23), Crypto.__version__
            """
        return (try? runArray(["-I", "-c", check], executable: readerPython))?.code == 0
    }
}

/// The virtual environment's Python, where `.ci/run` makes it.
let readerPython = packageRoot.appendingPathComponent(".build/python-venv/bin/python3")

/// The sample backups' folder, the plain backup, the generator and the password of the encrypted ones.
private let backupSamples = packageRoot.appendingPathComponent("Samples/backup")
private let plainBackup = backupSamples.appendingPathComponent("iphone")
private let generator = backupSamples.appendingPathComponent("make-encrypted.py")
private let samplePassword = backupSamples.appendingPathComponent("iphone-encrypted.password")

/// The store's two files in the app group `AppDomainGroup-group.com.example.sixtydmemo`,
/// by the name the reader is asked for and their file ids in the plain backup (SHA-1 of
/// "domain-relativePath", as `make-backup.sh` computes them).
private let storeFiles = [
    (name: "store", path: "Library/Application Support/default.store", fileID: "679080a510f6928cbed13b55b664a01147e3e6f6"),
    (name: "store-wal", path: "Library/Application Support/default.store-wal", fileID: "c604f4b1106ac8e04f700b576126ffe19b3f7aed")
]

/// A committed encrypted sample and the generator's arguments that made it
/// (as `Samples/backup/README.md` gives them).
struct EncryptedSample: CustomTestStringConvertible, Sendable {
    var folder: String
    var arguments: [String]
    /// Whether the keybag has the SHA-256 round (`DPSL`), which the
    /// Python readers require.
    var hasDPSL: Bool
    var testDescription: String { folder }

    static let current = EncryptedSample(
        folder: "iphone-encrypted", arguments: ["--seed", "49", "--dpic", "1000", "--iter", "1000"], hasDPSL: true)
    static let old = EncryptedSample(
        folder: "iphone-encrypted-old", arguments: ["--seed", "50", "--dpic", "1000", "--iter", "1000", "--no-dpsl"], hasDPSL: false)
    static let all = [current, old]

    var url: URL { backupSamples.appendingPathComponent(folder) }
}

/// Runs the generator on the plain sample into `out` (which must not exist).
func generateEncryptedBackup(into out: URL, _ arguments: [String]) throws {
    let result = try runArray(
        ["-I", generator.path, "--from", plainBackup.path, "--out", out.path, "--password-file", samplePassword.path] + arguments,
        executable: debianPython)
    try #require(result.code == 0, "make-encrypted.py failed: \(result.stdout)\(result.stderr)")
}

/// What the reader made of a backup: each file it decrypted (written to
/// `files/<fileID>` in the output folder), the store's two files read by name
/// (`store`, `store-wal`), the folders it listed, and what a wrong password gave.
struct ReaderVerdict: Decodable {
    struct File: Decodable {
        var fileID: String
        var domain: String
        var relativePath: String
        var size: Int
        var protectionClass: Int
    }
    var files: [File]
    var folders: Int
    var wrongPassword: String?
}

/// Decrypts a backup with iphone-backup-decrypt. With `derive` "password",
/// the reader derives the key from the password itself; with "sha1", the
/// keybag before iOS 10.2 (which the reader cannot derive a key for: it
/// requires DPSL), the key is PBKDF2-HMAC-SHA1(password, SALT, ITER) from
/// Python's hashlib and the reader does everything else: it parses the
/// keybag, unwraps the class keys, decrypts Manifest.db and each file.
private let readerScript = #"""
    import hashlib, json, os, plistlib, sys
    from iphone_backup_decrypt import EncryptedBackup, utils
    from iphone_backup_decrypt.exceptions import IncorrectPassphraseError

    backup, password_file, out, derive = sys.argv[1:5]
    with open(password_file, "rb") as f:
        password = f.read()
    for ending in (b"\r\n", b"\n"):
        if password.endswith(ending):
            password = password[: -len(ending)]
            break

    verdict = {"files": [], "folders": 0, "wrongPassword": None}
    if derive == "password":
        reader = EncryptedBackup(backup_directory=backup, passphrase=password)
        try:
            EncryptedBackup(backup_directory=backup, passphrase=password + b"!").test_decryption()
            verdict["wrongPassword"] = "decrypted"
        except IncorrectPassphraseError as error:
            verdict["wrongPassword"] = type(error).__name__
    else:
        with open(os.path.join(backup, "Manifest.plist"), "rb") as f:
            bag = utils.BackupKeyBag(plistlib.load(f)["BackupKeyBag"])
        key = hashlib.pbkdf2_hmac("sha1", password, bag.attrs[b"SALT"], bag.attrs[b"ITER"], 32)
        reader = EncryptedBackup(backup_directory=backup, passphrase_key=key)

    os.makedirs(os.path.join(out, "files"))
    def each(*, file_id, domain, relative_path, file_plist, **rest):
        verdict["files"].append({"fileID": file_id, "domain": domain, "relativePath": relative_path,
                                 "size": file_plist.filesize, "protectionClass": file_plist.protection_class})
        return os.path.join(out, "files", file_id)
    reader.extract_files(relative_paths_like="%", domain_like="%", output_folder=out, filter_callback=each)
    verdict["folders"] = len(list(reader.get_folders(relative_paths_like="%")))
    for name, path in (("store", "Library/Application Support/default.store"),
                       ("store-wal", "Library/Application Support/default.store-wal")):
        data = reader.extract_file_as_bytes(path, domain_like="AppDomainGroup-group.com.example.sixtydmemo")
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(json.dumps(verdict))
    """#

/// Decrypts `backup` with the reader into a new scratch folder; gives the folder and the verdict.
private func readWithReader(_ backup: URL, derive: String) throws -> (out: URL, verdict: ReaderVerdict) {
    let out = scratchFolder("reader").appendingPathComponent("out")
    let result = try runArray(["-I", "-c", readerScript, backup.path, samplePassword.path, out.path, derive], executable: readerPython)
    try #require(result.code == 0, "iphone-backup-decrypt failed on \(backup.lastPathComponent): \(result.stdout)\(result.stderr)")
    let verdict = try JSONDecoder().decode(ReaderVerdict.self, from: Data(result.stdout.utf8))
    return (out, verdict)
}

/// The plain backup's data files (`<xx>/<fileID>`), by file id.
private func plainFiles() throws -> [String: URL] {
    var files: [String: URL] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: plainBackup.path) where name.count == 2 {
        let folder = plainBackup.appendingPathComponent(name)
        for id in try FileManager.default.contentsOfDirectory(atPath: folder.path) { files[id] = folder.appendingPathComponent(id) }
    }
    return files
}

/// Checks what the reader decrypted against the plain backup, byte for byte.
private func expectSameAsPlain(_ out: URL, _ verdict: ReaderVerdict, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let plain = try plainFiles()
    #expect(Set(verdict.files.map(\.fileID)) == Set(plain.keys), "the files the reader found", sourceLocation: sourceLocation)
    #expect(verdict.folders == 5, "the folder rows the reader listed", sourceLocation: sourceLocation)
    for file in verdict.files {
        guard let original = plain[file.fileID] else { continue }
        let decrypted = try Data(contentsOf: out.appendingPathComponent("files/\(file.fileID)"))
        #expect(decrypted == (try Data(contentsOf: original)), "\(file.domain) \(file.relativePath)", sourceLocation: sourceLocation)
        #expect(file.size == decrypted.count, "the record's Size of \(file.relativePath)", sourceLocation: sourceLocation)
    }
    for (name, path, id) in storeFiles {
        let original = try #require(plain[id], "the plain backup holds \(path)", sourceLocation: sourceLocation)
        let decrypted = try Data(contentsOf: out.appendingPathComponent(name))
        #expect(!decrypted.isEmpty, sourceLocation: sourceLocation)
        #expect(decrypted == (try Data(contentsOf: original)), "\(path), read by name", sourceLocation: sourceLocation)
    }
}

/// The encrypted sample backups, `Samples/backup/iphone-encrypted` (the
/// keybag of iOS 10.2 and later) and `iphone-encrypted-old` (the keybag
/// before it, without the SHA-256 round): that they are what the generator
/// makes, and, where `.ci/run` made the virtual environment, that a reader
/// no one here wrote decrypts them to the plain sample's bytes. That
/// reader requires DPSL, so the old keybag's key derivation is checked
/// against the generator only; the rest of that backup is read by it.
@Suite struct EncryptedFixtureTests {
    /// The committed samples are the generator's output, byte for byte, and are encrypted.
    @Test(.needs(.python3, .pythonCryptography), arguments: EncryptedSample.all)
    func committedSampleIsTheGeneratorsOutput(sample: EncryptedSample) throws {
        let out = scratchFolder("generated").appendingPathComponent(sample.folder)
        try generateEncryptedBackup(into: out, sample.arguments)
        let made = try fingerprint(out)
        #expect(made.count == 14, "9 files and 5 folders: \(made.keys.sorted())")
        let committed = try fingerprint(sample.url)
        let differing = Set(made.keys).union(committed.keys).filter { made[$0] != committed[$0] }.sorted()
        #expect(differing.isEmpty, "\(sample.folder) differs from the generator's output in \(differing)")

        let again = scratchFolder("generated").appendingPathComponent(sample.folder)
        try generateEncryptedBackup(into: again, sample.arguments)
        #expect(try fingerprint(again) == made, "two runs of the generator differ")

        let manifest = try Data(contentsOf: sample.url.appendingPathComponent("Manifest.db"))
        #expect(!manifest.starts(with: Data("SQLite format 3".utf8)), "Manifest.db is not encrypted")
        #expect(manifest.count % 16 == 0)
        for (id, original) in try plainFiles() {
            let encrypted = try Data(contentsOf: sample.url.appendingPathComponent("\(id.prefix(2))/\(id)"))
            let plain = try Data(contentsOf: original)
            #expect(encrypted.count == (plain.count / 16 + 1) * 16, "\(id) is PKCS#7 padded")
            #expect(encrypted.prefix(16) != plain.prefix(16), "\(id) is not encrypted")
        }
        let plist =
            try PropertyListSerialization.propertyList(
                from: try Data(contentsOf: sample.url.appendingPathComponent("Manifest.plist")), format: nil) as? [String: Any]
        #expect(plist?["IsEncrypted"] as? Bool == true)
        #expect((plist?["ManifestKey"] as? Data)?.count == 44)
        #expect((plist?["BackupKeyBag"] as? Data).map { $0.count > 0 } == true)
    }

    /// CI proves the format: iphone-backup-decrypt decrypts each committed
    /// sample to the plain sample's bytes (the old one from a key derived
    /// with hashlib, since it requires DPSL), and refuses a wrong password.
    @Test(.needs(.backupReader), arguments: EncryptedSample.all)
    func readerNoOneHereWroteDecryptsTheSample(sample: EncryptedSample) throws {
        let (out, verdict) = try readWithReader(sample.url, derive: sample.hasDPSL ? "password" : "sha1")
        try expectSameAsPlain(out, verdict)
        #expect(Set(verdict.files.map(\.protectionClass)) == [3, 4])
        if sample.hasDPSL { #expect(verdict.wrongPassword == "IncorrectPassphraseError") }
    }

    /// A backup made at the iteration counts of a real one (10,000,000 of
    /// the SHA-256 round, 10,000 of the SHA-1 round), read by
    /// iphone-backup-decrypt from the password.
    @Test(.needs(.python3, .pythonCryptography, .backupReader))
    func backupAtTheRealIterationCountsIsRead() throws {
        let out = scratchFolder("real-counts").appendingPathComponent("backup")
        try generateEncryptedBackup(into: out, ["--seed", "4910", "--dpic", "10000000", "--iter", "10000"])
        let (decrypted, verdict) = try readWithReader(out, derive: "password")
        try expectSameAsPlain(decrypted, verdict)
        #expect(verdict.wrongPassword == "IncorrectPassphraseError")
    }
}
