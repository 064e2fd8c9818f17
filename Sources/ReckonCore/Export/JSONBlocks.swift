import CZip
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `memos.json` deflated for the zip in blocks, on every core, into a
/// file of its own beside the zip, which takes it as the entry's
/// compressed bytes (`ZipBuilder.Entry.Contents.deflated`).
///
/// The memos set where a block ends: after a memo whose id, mixed, has
/// four zero bits on top (about one memo in 16), and 4 MiB after the last
/// end. The bytes are handed over as `memos.json` is written, and the
/// blocks made on other cores, about 1 MiB of them at a time, while the
/// memos are still being written; the last once `close` is called. Each
/// block is deflated on its own by zlib (raw deflate, level 1) and ends in
/// a full flush, so the blocks one after another, then zlib's empty last
/// block, are one deflate stream, whose CRC-32 zlib joins from theirs. The
/// same memos give the same blocks whatever the worker count, and a memo
/// changed, added or removed changes its own block only: a block whose SHA-256 the
/// previous run recorded (`previous`) is copied from that run's zip
/// instead of deflated again, once those bytes are seen to inflate to
/// exactly this block's, so an index that lies cannot spoil the zip.
///
/// One caller hands the bytes over, marks the ends and closes it; the zip waits for it.
package final class JSONBlocks: @unchecked Sendable {
    /// One block: the SHA-256, size and CRC-32 of its bytes, and where its
    /// compressed bytes are (in this file while it is written; in the zip
    /// once the zip is finished).
    package struct Block: Sendable, Equatable {
        package var digest: SHA256.Digest
        package var size: Int
        package var crc: UInt32
        package var offset: UInt64
        package var compressedSize: Int

        func write(to record: inout Record) {
            record.add(digest)
            record.add(size)
            record.add(UInt64(crc))
            record.add(offset)
            record.add(compressedSize)
        }

        init(digest: SHA256.Digest, size: Int, crc: UInt32, offset: UInt64, compressedSize: Int) {
            self.digest = digest
            self.size = size
            self.crc = crc
            self.offset = offset
            self.compressedSize = compressedSize
        }

        init(from reader: inout RecordReader) {
            self.init(
                digest: reader.digest(), size: reader.int(), crc: UInt32(truncatingIfNeeded: reader.uint64()), offset: reader.uint64(),
                compressedSize: reader.int())
        }
    }

    /// The blocks the previous run wrote, by SHA-256, and its zip, which
    /// holds their compressed bytes at the offsets recorded.
    package struct Previous: Sendable {
        let blocks: [SHA256.Digest: Block]
        let zip: PreviousZip
    }

    /// The stream once every block is written: the uncompressed size and
    /// CRC-32, the compressed size, the blocks, and how many were copied.
    package struct Finished: Sendable {
        package let url: URL
        package let size: Int
        package let crc: UInt32
        package let compressedSize: Int
        package let blocks: [Block]
        package let copied: Int
    }

    /// The file's name in the staging folder: one of the zip's parts, which a dead run's cleanup knows.
    package static let fileName = ZipBuilder.partPrefix + "memos-json"
    /// A block's bytes when the content gives no end sooner.
    static let blockLimit = 4 << 20
    /// How many bytes of blocks the cores take at a time.
    static let roundBytes = 1 << 20
    /// How zlib deflates a block: raw (no header), level 1, window and memory as zlib's defaults.
    package static var settings: String { "memos.json in blocks, zlib \(String(cString: zlibVersion())) level 1" }

    private let url: URL
    private let previous: Previous?
    /// The bytes of the block being gathered.
    private var current: [UInt8] = []
    /// Whole blocks not yet handed to a core, and how many bytes they hold.
    private var gathered: [[UInt8]] = []
    private var gatheredBytes = 0
    /// Rounds of blocks being made on other cores, oldest first.
    private var making: [Pending<[Result<Made, OutputError>]>] = []
    /// How many rounds are made at once at most, so memory stays bounded.
    private let roundsAtOnce: Int
    /// The threads the blocks are made on.
    private let workers: Workers
    /// What the blocks written so far add up to, in this file.
    private var output: OutputFile?
    private var written: (blocks: [Block], crc: uLong, size: Int, copied: Int) = ([], 0, 0, 0)
    /// What first stopped the stream, told when it is finished.
    private var failure: OutputError?
    private var work: Pending<Result<Finished, OutputError>>?

    /// Will write the compressed stream to a new file at `url`, copying
    /// blocks from `previous`, making blocks on `workers`' threads.
    package init(url: URL, previous: Previous?, on workers: Workers = Workers()) {
        self.url = url
        self.previous = previous
        self.workers = workers
        roundsAtOnce = 2 * workers.threads
    }

    /// The next bytes of `memos.json` were written.
    package func wrote(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes[...]
        while current.count + rest.count >= Self.blockLimit {
            let taken = Self.blockLimit - current.count
            current.append(contentsOf: rest.prefix(taken))
            rest = rest.dropFirst(taken)
            endBlock()
        }
        current.append(contentsOf: rest)
    }

    /// The entry of the memo `id` ends here.
    package func memoEnded(id: MemoID) {
        // Fibonacci hashing: the top bits of the product depend on every bit of the id.
        let endsBlock = ((id.high ^ id.low) &* 0x9E37_79B9_7F4A_7C15) >> 60 == 0
        if endsBlock, !current.isEmpty { endBlock() }
    }

    /// Ends the block being gathered, and hands a round to the cores once
    /// it holds `roundBytes`.
    private func endBlock() {
        gatheredBytes += current.count
        gathered.append(current)
        current = []
        if gatheredBytes >= Self.roundBytes { startRound() }
    }

    /// Makes the gathered blocks on another core, after writing out the
    /// oldest round when as many as `roundsAtOnce` are being made.
    private func startRound() {
        guard !gathered.isEmpty else { return }
        if making.count >= roundsAtOnce { writeOldestRound() }
        let (blocks, previous, shown) = (gathered, previous, url.path)
        gathered = []
        gatheredBytes = 0
        making.append(Pending(on: workers) { blocks.map { Self.make($0, from: previous, shown: shown) } })
    }

    /// Writes the oldest round's blocks, in order, after those written before.
    private func writeOldestRound() {
        let made = making.removeFirst().wait()
        guard failure == nil else { return }
        do throws(OutputError) {
            if output == nil { output = try OutputFile(url) }
            for outcome in made {
                var made = try outcome.get()
                made.block.offset = UInt64(output!.size)
                try output!.write(made.bytes)
                if made.copied { written.copied += 1 }
                written.crc = crc32_combine(written.crc, uLong(made.block.crc), off_t(made.block.size))
                written.size += made.block.size
                written.blocks.append(made.block)
            }
        } catch {
            failure = error
        }
    }

    /// Waits for the cores: nothing writes into the staging folder once the export is over.
    deinit {
        _ = work?.wait()
        for round in making { _ = round.wait() }
    }

    /// `memos.json` is whole: its last block ends, and the blocks not yet
    /// written are made and written on another core.
    package func close() {
        if !current.isEmpty { endBlock() }
        startRound()
        work = Pending(on: workers) { [self] in
            Result { () throws(OutputError) in
                do throws(OutputError) {
                    while !making.isEmpty { writeOldestRound() }
                    if let failure { throw failure }
                    if output == nil { output = try OutputFile(url) }
                    guard let last = Self.deflate([], flush: Z_FINISH) else {
                        throw OutputError(path: url.path, reason: "zlib could not end the stream")
                    }
                    try output!.write(last)
                    _ = try output!.finish()
                    return Finished(
                        url: url, size: written.size, crc: UInt32(written.crc), compressedSize: output!.size, blocks: written.blocks,
                        copied: written.copied)
                } catch {
                    // A part of the zip is told as the zip.
                    guard error.path == url.path else { throw error }
                    throw OutputError(path: url.deletingLastPathComponent().appendingPathComponent(Exporter.zipName).path, reason: error.reason)
                }
            }
        }
    }

    /// The stream, once every block is written.
    package func finished() throws(OutputError) -> Finished {
        guard let work else { preconditionFailure("a stream is closed before it is finished") }
        return try work.wait().get()
    }

    /// A block made on a core: its compressed bytes, and whether they were copied.
    private struct Made: Sendable {
        var block: Block
        var bytes: Data
        var copied: Bool
    }

    /// One block, made from its `bytes`: copied from the previous run's
    /// zip when that run wrote a block with these bytes, else deflated.
    private static func make(_ bytes: [UInt8], from previous: Previous?, shown: String) -> Result<Made, OutputError> {
        let digest = bytes.withUnsafeBytes { SHA256.digest(of: $0) }
        let crc = UInt32(bytes.withUnsafeBytes { crc32(0, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), uInt($0.count)) })
        if let old = previous?.blocks[digest], old.size == bytes.count,
            let copy = previous?.zip.bytes(at: old.offset, count: old.compressedSize), inflates(copy, to: bytes)
        {
            return .success(
                Made(block: Block(digest: digest, size: bytes.count, crc: crc, offset: 0, compressedSize: copy.count), bytes: copy, copied: true))
        }
        guard let deflated = deflate(bytes, flush: Z_FULL_FLUSH) else {
            return .failure(OutputError(path: shown, reason: "zlib could not deflate a block of memos.json"))
        }
        return .success(
            Made(block: Block(digest: digest, size: bytes.count, crc: crc, offset: 0, compressedSize: deflated.count), bytes: deflated, copied: false)
        )
    }

    /// Whether `compressed` inflates (raw) to exactly `bytes` and stops
    /// where another block may follow: at a block's end, on a byte, and not
    /// in the stream's last block (zlib's `data_type` is then 128).
    static func inflates(_ compressed: Data, to bytes: [UInt8]) -> Bool {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return false }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: bytes.count + 1)
        let status = run(&stream, over: [UInt8](compressed), into: &output) { CZip.inflate(&$0, Z_SYNC_FLUSH) }
        // Compared by memcmp: a generic walk over the bytes cost a nightly run at 100k 0.17 s of CPU.
        return status == Z_OK && stream.avail_in == 0 && stream.data_type == 128 && Int(stream.avail_out) == 1
            && bytes.withUnsafeBytes { expected in
                output.withUnsafeBytes { made in expected.isEmpty || memcmp(made.baseAddress!, expected.baseAddress!, expected.count) == 0 }
            }
    }

    /// Points `stream` at all of `input` and at `output`, and makes one zlib call (`step`).
    private static func run(_ stream: inout z_stream, over input: [UInt8], into output: inout [UInt8], _ step: (inout z_stream) -> Int32) -> Int32 {
        var input = input
        return input.withUnsafeMutableBufferPointer { input in
            output.withUnsafeMutableBufferPointer { output in
                stream.next_in = input.baseAddress
                stream.avail_in = uInt(input.count)
                stream.next_out = output.baseAddress
                stream.avail_out = uInt(output.count)
                return step(&stream)
            }
        }
    }

    /// `bytes` deflated raw at level 1, ending with `flush`; nil when zlib fails.
    static func deflate(_ bytes: [UInt8], flush: Int32) -> Data? {
        var stream = z_stream()
        guard deflateInit2_(&stream, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        // Room for the worst case, and the flush's own few bytes.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 64)
        let status = run(&stream, over: bytes, into: &output) { CZip.deflate(&$0, flush) }
        let expected = flush == Z_FINISH ? Z_STREAM_END : Z_OK
        guard status == expected, stream.avail_in == 0, stream.avail_out > 0 else { return nil }
        return Data(output[..<(output.count - Int(stream.avail_out))])
    }
}
