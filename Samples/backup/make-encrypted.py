#!/usr/bin/env python3
"""make-encrypted.py: makes an encrypted twin of a plain iPhone backup folder
(Samples/backup/iphone, made by make-backup.sh), laid out and encrypted as
Finder, iTunes and idevicebackup2 write an encrypted backup since iOS 10.2.

    make-encrypted.py --from iphone --out iphone-encrypted \\
        --password-file iphone-encrypted.password --seed 49 --dpic 1000 --iter 1000 [--no-dpsl]

The password is read from --password-file, or from stdin without it; never
from the command line. Its bytes are used as they are, less one line ending
at the end ("\\n" or "\\r\\n"), so a file written by `echo` and one written
without a newline give the same password.

What it writes, from the plain backup:
  Manifest.plist  a binary property list: the plain one's keys, with
                  IsEncrypted true, WasPasscodeSet as it was,
                  BackupKeyBag (the keybag below) and ManifestKey
                  (4-byte little-endian protection class 4, then the
                  manifest key wrapped with class 4's key: 44 bytes).
  Manifest.db     the plain one's rows with each row's `file` column set to
                  an NSKeyedArchiver binary plist of an MBFile (below),
                  VACUUMed, then AES-256-CBC with a zero IV under the
                  manifest key, PKCS#7 padded (so 16 bytes longer).
  <xx>/<fileID>   each file AES-256-CBC with a zero IV under its own key,
                  PKCS#7 padded to a multiple of 16 bytes.
  Info.plist, Status.plist   copied unchanged.

The keybag (BackupKeyBag) is a list of TLV records: a 4-byte tag, a 4-byte
big-endian length, the value; numbers are 4-byte big-endian. In order:
  VERS 4 (3 with --no-dpsl), TYPE 1 (a backup keybag), UUID (16 bytes),
  HMCK (40 bytes), WRAP 0, SALT (20 bytes), ITER, then, unless --no-dpsl,
  DPWT 1, DPIC, DPSL (20 bytes);
  then for each protection class 1 to 11: UUID (16 bytes), CLAS, WRAP 3,
  KTYP 0, WPKY (the class key wrapped with the passcode key: 40 bytes).
The first UUID and WRAP are the bag's own; each later UUID starts a class.
The passcode key is PBKDF2-HMAC-SHA1(PBKDF2-HMAC-SHA256(password, DPSL,
DPIC), SALT, ITER), 32 bytes; with --no-dpsl (the keybag before iOS 10.2)
PBKDF2-HMAC-SHA1(password, SALT, ITER). Keys are wrapped with RFC 3394 AES
key wrap. HMCK is random bytes: nothing here checks it.

Each `file` record (NSKeyedArchiver, $version 100000, $top {root: UID 1}):
  $objects[0] "$null"
  $objects[1] the MBFile: $class, Birth, Flags 0, GroupID 501, InodeNumber,
              LastModified, LastStatusChange, Mode, ProtectionClass,
              RelativePath (UID), Size (the plain size), UserID 501, and for
              a file EncryptionKey (UID)
  then the relative path string, for a file the EncryptionKey object
  {$class, NS.data: 4-byte little-endian class + the file key wrapped with
  that class's key (44 bytes)} and its class NSMutableData, and last the
  class MBFile. Files are class 3 (the store and its WAL) or 4 (the
  preferences); folders (flags 2) have class 0, Mode 0o40755, Size 0 and no
  EncryptionKey.

Every random byte (keys, salts, UUIDs, inode numbers) comes from
random.Random(seed) in a fixed order, and SQLite's version field in
Manifest.db's header is copied from the plain Manifest.db, so the same
arguments and the same plain backup give the same bytes on any machine.

Needs Python 3.9 or later and the `cryptography` package (Debian:
python3-cryptography). It makes OUT afresh (it must not exist, or be an
empty folder) and never writes the plain Manifest.db anywhere but a private
temporary folder.
"""

import argparse
import datetime
import hashlib
import os
import plistlib
import random
import shutil
import sqlite3
import struct
import sys
import tempfile

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.keywrap import aes_key_wrap

CLASSES = range(1, 12)
MANIFEST_CLASS = 4
CLASS_WRAP = 3  # WRAP_DEVICE | WRAP_PASSCODE; a reader unwraps a class when WRAP & 2
STORE_CLASS = 3  # NSFileProtectionCompleteUntilFirstUserAuthentication, an app's default
OTHER_CLASS = 4
FILE_MODE = 0o100644
FOLDER_MODE = 0o40755
USER_ID = 501


def tlv(tag, value):
    if isinstance(value, int):
        value = struct.pack(">I", value)
    assert len(tag) == 4
    return tag + struct.pack(">I", len(value)) + value


def encrypt(key, data):
    padder = padding.PKCS7(128).padder()
    padded = padder.update(data) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(bytes(16))).encryptor()
    return encryptor.update(padded) + encryptor.finalize()


def read_password(path):
    if path is None:
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    for ending in (b"\r\n", b"\n"):
        if data.endswith(ending):
            data = data[: -len(ending)]
            break
    if not data:
        sys.exit("make-encrypted.py: the password is empty")
    return data


def mbfile(rng, relative_path, size, mode, protection_class, encryption_key, time):
    """The NSKeyedArchiver binary plist of one MBFile."""
    record = {
        "Birth": time,
        "Flags": 0,
        "GroupID": USER_ID,
        "InodeNumber": rng.getrandbits(32),
        "LastModified": time,
        "LastStatusChange": time,
        "Mode": mode,
        "ProtectionClass": protection_class,
        "RelativePath": plistlib.UID(2),
        "Size": size,
        "UserID": USER_ID,
    }
    objects = ["$null", record, relative_path]
    if encryption_key is not None:
        record["EncryptionKey"] = plistlib.UID(len(objects))
        objects.append({"$class": plistlib.UID(len(objects) + 1), "NS.data": encryption_key})
        objects.append({"$classes": ["NSMutableData", "NSData", "NSObject"], "$classname": "NSMutableData"})
    record["$class"] = plistlib.UID(len(objects))
    objects.append({"$classes": ["MBFile", "NSObject"], "$classname": "MBFile"})
    archive = {
        "$archiver": "NSKeyedArchiver",
        "$objects": objects,
        "$top": {"root": plistlib.UID(1)},
        "$version": 100000,
    }
    return plistlib.dumps(archive, fmt=plistlib.FMT_BINARY, sort_keys=True)


def main():
    parser = argparse.ArgumentParser(description="Make an encrypted twin of a plain iPhone backup folder.")
    parser.add_argument("--from", dest="source", required=True, help="the plain backup folder")
    parser.add_argument("--out", required=True, help="the folder to make")
    parser.add_argument("--password-file", help="a file holding the password (else it is read from stdin)")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--dpic", type=int, required=True, help="iterations of the PBKDF2-HMAC-SHA256 round")
    parser.add_argument("--iter", type=int, required=True, help="iterations of the PBKDF2-HMAC-SHA1 round")
    parser.add_argument("--no-dpsl", action="store_true", help="the keybag before iOS 10.2: no SHA-256 round")
    args = parser.parse_args()
    if args.dpic < 1 or args.iter < 1:
        sys.exit("make-encrypted.py: --dpic and --iter must be at least 1")

    password = read_password(args.password_file)
    with open(os.path.join(args.source, "Manifest.plist"), "rb") as f:
        manifest = plistlib.load(f)
    if manifest.get("IsEncrypted"):
        sys.exit("make-encrypted.py: " + args.source + " is already encrypted")
    if os.path.exists(args.out) and os.listdir(args.out):
        sys.exit("make-encrypted.py: " + args.out + " exists and is not empty")
    os.makedirs(args.out, exist_ok=True)

    # Every random byte, in this order.
    rng = random.Random(args.seed)
    bag_uuid = rng.randbytes(16)
    hmck = rng.randbytes(40)
    salt = rng.randbytes(20)
    dpsl = None if args.no_dpsl else rng.randbytes(20)
    class_uuids, class_keys = {}, {}
    for c in CLASSES:
        class_uuids[c] = rng.randbytes(16)
        class_keys[c] = rng.randbytes(32)
    manifest_key = rng.randbytes(32)

    if dpsl is None:
        passcode_key = hashlib.pbkdf2_hmac("sha1", password, salt, args.iter, 32)
    else:
        first = hashlib.pbkdf2_hmac("sha256", password, dpsl, args.dpic, 32)
        passcode_key = hashlib.pbkdf2_hmac("sha1", first, salt, args.iter, 32)

    bag = [tlv(b"VERS", 3 if dpsl is None else 4), tlv(b"TYPE", 1), tlv(b"UUID", bag_uuid), tlv(b"HMCK", hmck),
           tlv(b"WRAP", 0), tlv(b"SALT", salt), tlv(b"ITER", args.iter)]
    if dpsl is not None:
        bag += [tlv(b"DPWT", 1), tlv(b"DPIC", args.dpic), tlv(b"DPSL", dpsl)]
    for c in CLASSES:
        bag += [tlv(b"UUID", class_uuids[c]), tlv(b"CLAS", c), tlv(b"WRAP", CLASS_WRAP), tlv(b"KTYP", 0),
                tlv(b"WPKY", aes_key_wrap(passcode_key, class_keys[c]))]

    manifest["IsEncrypted"] = True
    manifest["BackupKeyBag"] = b"".join(bag)
    manifest["ManifestKey"] = struct.pack("<I", MANIFEST_CLASS) + aes_key_wrap(class_keys[MANIFEST_CLASS], manifest_key)
    time = int(manifest["Date"].replace(tzinfo=datetime.timezone.utc).timestamp())

    work = tempfile.mkdtemp(prefix="make-encrypted-")
    try:
        database = os.path.join(work, "Manifest.db")
        shutil.copyfile(os.path.join(args.source, "Manifest.db"), database)
        with open(database, "rb") as f:
            version_field = f.read(100)[96:100]
        connection = sqlite3.connect(database, isolation_level=None)
        rows = connection.execute(
            "SELECT rowid, fileID, domain, relativePath, flags FROM Files ORDER BY rowid").fetchall()
        connection.execute("BEGIN")
        for rowid, file_id, domain, relative_path, flags in rows:
            if file_id != hashlib.sha1((domain + "-" + relative_path).encode()).hexdigest():
                sys.exit("make-encrypted.py: the fileID of " + domain + "-" + relative_path + " is not its SHA-1")
            if flags == 1:
                with open(os.path.join(args.source, file_id[:2], file_id), "rb") as f:
                    data = f.read()
                key = rng.randbytes(32)
                protection_class = STORE_CLASS if domain.startswith("AppDomainGroup-") else OTHER_CLASS
                wrapped = struct.pack("<I", protection_class) + aes_key_wrap(class_keys[protection_class], key)
                record = mbfile(rng, relative_path, len(data), FILE_MODE, protection_class, wrapped, time)
                os.makedirs(os.path.join(args.out, file_id[:2]), exist_ok=True)
                with open(os.path.join(args.out, file_id[:2], file_id), "wb") as f:
                    f.write(encrypt(key, data))
            elif flags == 2:
                record = mbfile(rng, relative_path, 0, FOLDER_MODE, 0, None, time)
            else:
                sys.exit("make-encrypted.py: flags " + str(flags) + " of " + file_id + " is not a file or a folder")
            connection.execute("UPDATE Files SET file = ? WHERE rowid = ?", (record, rowid))
        connection.execute("COMMIT")
        connection.execute("VACUUM")
        connection.close()
        with open(database, "r+b") as f:
            f.seek(96)
            f.write(version_field)
        with open(database, "rb") as f:
            plain_manifest = f.read()
        with open(os.path.join(args.out, "Manifest.db"), "wb") as f:
            f.write(encrypt(manifest_key, plain_manifest))
    finally:
        shutil.rmtree(work)

    with open(os.path.join(args.out, "Manifest.plist"), "wb") as f:
        plistlib.dump(manifest, f, fmt=plistlib.FMT_BINARY, sort_keys=True)
    for name in ("Info.plist", "Status.plist"):
        shutil.copyfile(os.path.join(args.source, name), os.path.join(args.out, name))


if __name__ == "__main__":
    main()
