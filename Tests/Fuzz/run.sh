#!/usr/bin/env bash
# Fuzzes one of reckon's readers with libFuzzer, seeded from the samples and
# the hostile-input corpus.  Usage: Tests/Fuzz/run.sh index|memo [seconds]
# Crashing inputs are written to .build/fuzz/<reader>/ as crash-*.
set -euo pipefail
cd "$(dirname "$0")/../.."
reader="${1:?usage: Tests/Fuzz/run.sh index|memo [seconds]}"
seconds="${2:-600}"
case "$reader" in
  index) entry=Tests/Fuzz/IndexFuzzer.swift; seeds=$(find Samples Tests/ReckonCLITests/Fixtures -name index.json) ;;
  memo)  entry=Tests/Fuzz/MemoFuzzer.swift;  seeds=$(find Samples Tests/ReckonCLITests/Fixtures -path '*/memos/*.json' -type f -size -64k) ;;
  *) echo "unknown reader '$reader': use index or memo" >&2; exit 64 ;;
esac
work=".build/fuzz/$reader"
mkdir -p "$work/corpus"
for seed in $seeds; do cp "$seed" "$work/corpus/$(sha256sum "$seed" | cut -c1-16)"; done
# ReckonCore, its simdjson readers and the differential checks (a test file)
# are compiled into the fuzzer itself, so
# the sanitizers see all of it (a module map stands in for the one SwiftPM writes).
mkdir -p "$work/CSimdJSON"
printf 'module CSimdJSON {\n  umbrella "%s"\n  export *\n}\n' "$PWD/Sources/CSimdJSON/include" > "$work/CSimdJSON/module.modulemap"
for source in Sources/CSimdJSON/*.cpp; do
  clang++ -std=c++17 -O1 -fsanitize=fuzzer-no-link,address -DSIMDJSON_THREADS_ENABLED=1 -I Sources/CSimdJSON/include \
    -c "$source" -o "$work/$(basename "$source" .cpp).o"
done
swiftc -sanitize=fuzzer,address -parse-as-library -O -swift-version 6 -module-name ReckonCore -package-name reckon -D RECKON_FUZZER \
  -I Sources/CArchive -I Sources/CCrypto -I Sources/CLinux -I Sources/CSQLite -I "$work/CSimdJSON" \
  $(find Sources/ReckonCore -name '*.swift') Tests/ReckonCoreTests/ReaderDifferential.swift "$entry" "$work"/simd_*.o -lsimdjson -lstdc++ -o "$work/fuzzer"
"$work/fuzzer" "$work/corpus" -max_total_time="$seconds" -max_len=65536 -timeout=10 -artifact_prefix="$work/" -print_final_stats=1
