import CZip
import Foundation

/// Where an entry's data lies in its zip and what the central directory
/// says of it: enough to read it apart from libarchive, on any thread.
struct PlacedEntry: Sendable, Equatable {
    /// Where its data starts (after its local header).
    var dataOffset: UInt64
    var compressedSize: UInt64
    var size: UInt64
    var crc32: UInt32
    /// 0 stored, 8 deflated.
    var method: UInt16
}

/// Inflates a zip's entries with zlib, apart from libarchive, so that each
/// thread can read entries of one zip at once: one per thread, owning its
/// zlib stream and buffers. Only ever says whether an entry is whole; what
/// is wrong with one that is not is left to libarchive, whose words
/// `verify` and `restore` give. Not `Sendable`.
final class EntryInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let input: UnsafeMutableRawBufferPointer
    private let output: UnsafeMutableRawBufferPointer

    init() {
        // zlib keeps a pointer back to its stream, so the stream stays where it was made.
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        input = .allocate(byteCount: 1 << 18, alignment: 16)
        output = .allocate(byteCount: 1 << 18, alignment: 16)
        precondition(inflateInit2_(stream, -MAX_WBITS, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK, "zlib's inflateInit2 failed")
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        input.deallocate()
        output.deallocate()
    }

    /// Reads `entry` of `file` to its end, handing its bytes to `chunk` in
    /// order; true when it is whole: stored or deflated, inflated to
    /// exactly its size with all of its compressed bytes used, and its
    /// CRC-32 the one the zip gives it. Reading stops at the first byte
    /// past its size, so an entry that inflates to more than it says (a
    /// zip bomb) costs no more than what it says. What `chunk` throws is
    /// passed on.
    func read(_ entry: PlacedEntry, of file: ZipFile, _ chunk: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        var offset = entry.dataOffset
        var left = entry.compressedSize
        var produced: UInt64 = 0
        var crc = CZip.crc32(0, nil, 0)
        /// Hands over `count` bytes from `bytes`; false past the entry's size.
        func hand(_ bytes: UnsafeMutableRawBufferPointer, _ count: Int) throws -> Bool {
            guard count > 0 else { return true }
            produced += UInt64(count)
            guard produced <= entry.size else { return false }
            crc = CZip.crc32(crc, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(count))
            try chunk(UnsafeRawBufferPointer(rebasing: bytes[..<count]))
            return true
        }
        switch entry.method {
        case 0:
            while left > 0 {
                let count = Int(min(left, UInt64(output.count)))
                guard file.read(into: UnsafeMutableRawBufferPointer(rebasing: output[..<count]), at: offset) else { return false }
                offset += UInt64(count)
                left -= UInt64(count)
                guard try hand(output, count) else { return false }
            }
        case 8:
            guard inflateReset(stream) == Z_OK else { return false }
            stream.pointee.avail_in = 0
            while true {
                if stream.pointee.avail_in == 0 && left > 0 {
                    let count = Int(min(left, UInt64(input.count)))
                    guard file.read(into: UnsafeMutableRawBufferPointer(rebasing: input[..<count]), at: offset) else { return false }
                    offset += UInt64(count)
                    left -= UInt64(count)
                    stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    stream.pointee.avail_in = UInt32(count)
                }
                stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
                stream.pointee.avail_out = UInt32(output.count)
                let status = inflate(stream, Z_NO_FLUSH)
                guard try hand(output, output.count - Int(stream.pointee.avail_out)) else { return false }
                if status == Z_STREAM_END { break }
                // Anything else, a damaged stream or one cut short (no progress, nothing left to give it), is not whole.
                guard status == Z_OK else { return false }
            }
            guard stream.pointee.avail_in == 0 && left == 0 else { return false }
        default:
            return false
        }
        return produced == entry.size && UInt32(truncatingIfNeeded: crc) == entry.crc32
    }
}
