#!/usr/bin/env bash
# make-store.sh: makes default.store and default.store-wal next to itself.
#
# They are a sample of the notes app's own storage: a SwiftData / Core Data
# SQLite store holding the device side of ../drift (the same 6 memos as
# ../drift/device/60dMemo: 4 Active, 1 Archived, 1 soft-deleted), so that
# reckon can show the seed's drift picture from the app's real format.
# The tables and rows are in make-store.sql, with comments on their layout.
#
# As in a running app, the newest change is not yet in the main file: memo
# 7C9E6679... is committed only to default.store-wal. A reader that ignores
# the WAL (immutable=1, or a copy of default.store alone) sees 5 memos with
# 3 Active; a reader that copies both files sees all 6. No -shm is kept:
# SQLite rebuilds it.
#
# Needs only the sqlite3 CLI and coreutils. Run from anywhere; it replaces
# its old outputs, and ends with a self-check that fails loudly.
set -euo pipefail
cd "$(dirname "$0")"

rm -f default.store default.store-wal default.store-shm default.store-journal
sqlite3 -bail default.store < make-store.sql > /dev/null
rm -f default.store-shm

fail() { echo "make-store.sh: self-check failed: $*" >&2; exit 1; }
[ -s default.store-wal ] || fail "default.store-wal is missing or empty"

# The main file alone (immutable=1 ignores the WAL) holds the old state.
old=$(sqlite3 'file:default.store?immutable=1' \
  "select count(*), sum(ZDELETEDAT is null and ZARCHIVEDAT is null),
          sum(hex(ZID) = '7C9E6679742540DE944BE07FC1F90AE7') from ZMEMO")
[ "$old" = "5|3|0" ] || fail "default.store alone should hold 5 memos, 3 Active, no 7C9E6679; got $old"

# A copy of both files, opened normally, holds the new state, and every row
# matches ../drift/device/60dMemo/memos/*.json field by field.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp default.store default.store-wal "$tmp/"
new=$(sqlite3 "$tmp/default.store" \
  "select count(*), sum(ZDELETEDAT is null and ZARCHIVEDAT is null),
          sum(ZDELETEDAT is null and ZARCHIVEDAT is not null), sum(ZDELETEDAT is not null) from ZMEMO")
[ "$new" = "6|4|1|1" ] || fail "the store with its WAL should hold 6 memos (4 Active, 1 Archived, 1 deleted); got $new"

bad=$(sqlite3 "$tmp/default.store" <<'SQL'
with j(file, m) as (
  select name, json(data) from fsdir('../drift/device/60dMemo/memos') where name like '%.json')
select j.file from j left join ZMEMO z
  on hex(z.ZID) = upper(replace(json_extract(j.m, '$.id'), '-', ''))
where z.Z_PK is null
   or z.ZTITLE is not json_extract(j.m, '$.title')
   or z.ZBODY is not json_extract(j.m, '$.body')
   or z.ZPINNED is not json_extract(j.m, '$.pinned')
   or strftime('%Y-%m-%dT%H:%M:%fZ', z.ZCREATEDAT + 978307200, 'unixepoch')
      is not strftime('%Y-%m-%dT%H:%M:%fZ', json_extract(j.m, '$.createdAt'))
   or strftime('%Y-%m-%dT%H:%M:%fZ', z.ZMODIFIEDAT + 978307200, 'unixepoch')
      is not strftime('%Y-%m-%dT%H:%M:%fZ', json_extract(j.m, '$.modifiedAt'))
   or strftime('%Y-%m-%dT%H:%M:%fZ', z.ZARCHIVEDAT + 978307200, 'unixepoch')
      is not strftime('%Y-%m-%dT%H:%M:%fZ', json_extract(j.m, '$.archivedAt'))
   or strftime('%Y-%m-%dT%H:%M:%fZ', z.ZDELETEDAT + 978307200, 'unixepoch')
      is not strftime('%Y-%m-%dT%H:%M:%fZ', json_extract(j.m, '$.deletedAt'))
   -- tags: a bplist00 array of n < 15 objects has marker byte A<n> at offset 8,
   -- and holds each short ASCII string's bytes as they are
   or substr(z.ZTAGS, 1, 8) is not cast('bplist00' as blob)
   or hex(substr(z.ZTAGS, 9, 1)) is not printf('A%X', json_array_length(j.m, '$.tags'))
   or exists (select 1 from json_each(j.m, '$.tags') t
              where instr(z.ZTAGS, cast(t.value as blob)) = 0)
union all
select 'only 6 rows expected, and one per file'
where (select count(*) from j) != 6 or (select count(*) from ZMEMO) != 6;
SQL
)
[ -z "$bad" ] || fail "rows differ from ../drift/device/60dMemo: $bad"
echo "made default.store and default.store-wal: 6 memos, 7C9E6679... only in the WAL"
