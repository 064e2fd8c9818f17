#!/usr/bin/env bash
# make-backup.sh: makes iphone/ next to itself, a small unencrypted iPhone
# backup folder laid out as Finder, iTunes or `idevicebackup2 backup --full`
# write one, holding the sample store from ../store (run ../store/make-store.sh
# first if it is missing).
#
# It is the sample for reading the device's memos out of a backup:
#   Manifest.db        SQLite: Files (fileID, domain, relativePath, flags, file)
#                      and an empty Properties table, as in a real backup
#   <xx>/<fileID>      each file, where fileID = SHA-1 hex of
#                      "<domain>-<relativePath>" and xx its first two digits
#   Manifest.plist     IsEncrypted false; Info.plist, Status.plist
# The app keeps its store in an app group, as SwiftData apps with widgets do:
#   AppDomainGroup-group.com.example.sixtydmemo
#     Library/Application Support/default.store (and -wal; no -shm)
# Other rows make finding it a real search: the app's own AppDomain (its
# preferences only), an unrelated app, a HomeDomain file, and directory rows
# (flags 2; files are flags 1). The `file` column (Apple's archived file
# attributes) is left NULL. All names, identifiers and dates are made up.
#
# Needs only the sqlite3 CLI and coreutils. Run from anywhere; it replaces
# iphone/ and ends with a self-check that fails loudly.
set -euo pipefail
cd "$(dirname "$0")"

for f in ../store/default.store ../store/default.store-wal; do
  [ -s "$f" ] || { echo "make-backup.sh: $f is missing; run ../store/make-store.sh" >&2; exit 1; }
done
rm -rf iphone
mkdir iphone
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/manifest.sql" <<'SQL'
.bail on
CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, relativePath TEXT, flags INTEGER, file BLOB);
CREATE INDEX FilesDomainIdx ON Files(domain);
CREATE INDEX FilesRelativePathIdx ON Files(relativePath);
CREATE INDEX FilesFlagsIdx ON Files(flags);
CREATE TABLE Properties (key TEXT PRIMARY KEY, value BLOB);
SQL

# add DOMAIN RELATIVEPATH [SOURCE]: a file row (flags 1) copied from SOURCE,
# or without SOURCE a directory row (flags 2).
add() {
  local id flags=2
  id=$(printf '%s-%s' "$1" "$2" | sha1sum | cut -c1-40)
  if [ $# -eq 3 ]; then
    flags=1
    mkdir -p "iphone/${id:0:2}"
    cp "$3" "iphone/${id:0:2}/$id"
  fi
  echo "INSERT INTO Files VALUES ('$id', '$1', '$2', $flags, NULL);" >> "$tmp/manifest.sql"
}

plist() { # plist FILE: a small XML property list with one key, made up
  printf '%s\n' '<?xml version="1.0" encoding="UTF-8"?>' \
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">' \
    '<plist version="1.0">' '<dict>' '	<key>SampleSetting</key>' '	<true/>' '</dict>' '</plist>' > "$1"
}
plist "$tmp/prefs.plist"

group=AppDomainGroup-group.com.example.sixtydmemo
add HomeDomain "Library/Preferences"
add HomeDomain "Library/Preferences/com.apple.sample.plist" "$tmp/prefs.plist"
add AppDomain-com.example.other "Library/Preferences"
add AppDomain-com.example.other "Library/Preferences/com.example.other.plist" "$tmp/prefs.plist"
add AppDomain-com.example.sixtydmemo "Library/Preferences"
add AppDomain-com.example.sixtydmemo "Library/Preferences/com.example.sixtydmemo.plist" "$tmp/prefs.plist"
add "$group" "Library"
add "$group" "Library/Application Support"
add "$group" "Library/Application Support/default.store" ../store/default.store
add "$group" "Library/Application Support/default.store-wal" ../store/default.store-wal
sqlite3 iphone/Manifest.db < "$tmp/manifest.sql"

head='<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>'
udid=00008130-000A5A3B1E000001
cat > iphone/Manifest.plist <<EOF
$head
	<key>Applications</key>
	<dict>
		<key>com.example.other</key>
		<dict>
			<key>CFBundleIdentifier</key><string>com.example.other</string>
			<key>CFBundleVersion</key><string>3.1</string>
			<key>ContainerContentClass</key><string>Data/Application</string>
		</dict>
		<key>com.example.sixtydmemo</key>
		<dict>
			<key>CFBundleIdentifier</key><string>com.example.sixtydmemo</string>
			<key>CFBundleVersion</key><string>1.4</string>
			<key>ContainerContentClass</key><string>Data/Application</string>
		</dict>
	</dict>
	<key>Date</key><date>2026-04-19T15:00:00Z</date>
	<key>IsEncrypted</key><false/>
	<key>Lockdown</key>
	<dict>
		<key>BuildVersion</key><string>23E246</string>
		<key>DeviceName</key><string>Sample iPhone</string>
		<key>ProductType</key><string>iPhone16,1</string>
		<key>ProductVersion</key><string>26.4</string>
		<key>SerialNumber</key><string>SAMPLE00001</string>
		<key>UniqueDeviceID</key><string>$udid</string>
	</dict>
	<key>SystemDomainsVersion</key><string>24.0</string>
	<key>Version</key><string>10.0</string>
	<key>WasPasscodeSet</key><false/>
</dict>
</plist>
EOF
cat > iphone/Info.plist <<EOF
$head
	<key>Build Version</key><string>23E246</string>
	<key>Device Name</key><string>Sample iPhone</string>
	<key>Display Name</key><string>Sample iPhone</string>
	<key>GUID</key><string>5A4D504C45000000000000000000000A</string>
	<key>Installed Applications</key>
	<array>
		<string>com.example.other</string>
		<string>com.example.sixtydmemo</string>
	</array>
	<key>Last Backup Date</key><date>2026-04-19T15:00:00Z</date>
	<key>Product Name</key><string>iPhone 15 Pro</string>
	<key>Product Type</key><string>iPhone16,1</string>
	<key>Product Version</key><string>26.4</string>
	<key>Serial Number</key><string>SAMPLE00001</string>
	<key>Target Identifier</key><string>$udid</string>
	<key>Target Type</key><string>Device</string>
	<key>Unique Identifier</key><string>$udid</string>
</dict>
</plist>
EOF
cat > iphone/Status.plist <<EOF
$head
	<key>BackupState</key><string>new</string>
	<key>Date</key><date>2026-04-19T15:00:00Z</date>
	<key>IsFullBackup</key><true/>
	<key>SnapshotState</key><string>finished</string>
	<key>UUID</key><string>6D1B2C3A-0F4E-4A5B-8C7D-9E0F1A2B3C4D</string>
	<key>Version</key><string>3.3</string>
</dict>
</plist>
EOF

# Self-check: the store's two rows lead, by fileID, to copies of ../store.
fail() { echo "make-backup.sh: self-check failed: $*" >&2; exit 1; }
rows=$(sqlite3 -readonly iphone/Manifest.db \
  "select fileID, relativePath from Files where domain = '$group' and flags = 1 order by relativePath")
[ "$(printf '%s\n' "$rows" | wc -l)" -eq 2 ] || fail "expected 2 store files in $group, got: $rows"
while IFS='|' read -r id path; do
  [ "$id" = "$(printf '%s-%s' "$group" "$path" | sha1sum | cut -c1-40)" ] || fail "fileID of $path"
  cmp -s "iphone/${id:0:2}/$id" "../store/${path##*/}" || fail "iphone/${id:0:2}/$id is not ../store/${path##*/}"
done <<< "$rows"
[ "$(find iphone -type f | wc -l)" -eq 9 ] || fail "expected 9 files in iphone/ (5 backed up, Manifest.db, 3 plists)"
echo "made iphone/: the sample store in $group"
