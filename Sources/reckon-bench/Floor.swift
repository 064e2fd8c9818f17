import CLinux
import CZip
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The export's floor (issue 34): the least any writer of the same export
/// must do on this machine, done by a hidden subcommand and nothing else.
/// It writes the same files (`memos.json` and every Markdown file of an
/// export made earlier, untimed) into a new folder, and deflates each as one
/// raw deflate stream at the zip's level with its CRC-32, as a zip entry is
/// made, on every core; the compressed bytes go to one part file per core,
/// and the new folder's file system is flushed once with `syncfs`, as the
/// export flushes its own. It reads no memo, renders nothing, hashes
/// nothing with SHA-256 and writes no container or manifest, so a writer
/// can only approach it. Files go to the cores largest first, one at a time
/// from a shared list, and each core keeps one zlib stream and resets it per
/// file (a fresh stream per entry would cost more).
enum Floor {
    /// The files a zip of the export holds: `memos.json` and `markdown/…`, by path relative to `from`.
    static func files(in from: URL) throws -> [(path: String, size: Int)] {
        var result: [(path: String, size: Int)] = []
        let json = from.appendingPathComponent("memos.json")
        if let size = try? FileManager.default.attributesOfItem(atPath: json.path)[.size] as? Int {
            result.append(("memos.json", size))
        }
        let markdown = from.appendingPathComponent("markdown")
        for name in try FileManager.default.contentsOfDirectory(atPath: markdown.path).sorted() {
            let size = (try? FileManager.default.attributesOfItem(atPath: markdown.appendingPathComponent(name).path)[.size] as? Int) ?? 0
            result.append(("markdown/\(name)", size))
        }
        return result.sorted { $0.size > $1.size }
    }

    /// The next file's number, shared by the cores.
    final class Queue: @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0
        let count: Int
        init(count: Int) { self.count = count }
        func take() -> Int? {
            lock.lock()
            defer { lock.unlock() }
            guard next < count else { return nil }
            next += 1
            return next - 1
        }
    }

    /// What went wrong on a core, if anything.
    final class Problems: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var first: String?
        func add(_ text: String) {
            lock.lock()
            if first == nil { first = text }
            lock.unlock()
        }
    }

    /// Writes and deflates; prints the files, bytes in and out, and the cores used.
    static func run(from: URL, to: URL, level: Int32, jobs: Int) throws {
        let files = try files(in: from)
        try FileManager.default.createDirectory(at: to.appendingPathComponent("markdown"), withIntermediateDirectories: true)
        let queue = Queue(count: files.count)
        let problems = Problems()
        let totals = Totals()
        DispatchQueue.concurrentPerform(iterations: jobs) { core in
            let part = open(to.appendingPathComponent("part-\(core).deflate").path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard part >= 0 else { return problems.add("cannot write part-\(core).deflate in \(to.path)") }
            defer { close(part) }
            var stream = z_stream()
            guard deflateInit2_(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
            else { return problems.add("zlib's deflateInit2 failed") }
            defer { deflateEnd(&stream) }
            var input = [UInt8](repeating: 0, count: 1 << 16)
            var output = [UInt8](repeating: 0, count: 1 << 16)
            var bytesIn = 0
            var bytesOut = 0
            while let n = queue.take() {
                let (path, size) = files[n]
                if input.count < size { input = [UInt8](repeating: 0, count: size) }
                let source = open(from.appendingPathComponent(path).path, O_RDONLY | O_CLOEXEC)
                guard source >= 0 else { return problems.add("cannot read \(from.appendingPathComponent(path).path)") }
                var have = 0
                while have < size {
                    let got = input.withUnsafeMutableBytes { read(source, $0.baseAddress! + have, size - have) }
                    guard got > 0 else { break }
                    have += got
                }
                close(source)
                let target = open(to.appendingPathComponent(path).path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o444)
                guard target >= 0 else { return problems.add("cannot create \(to.appendingPathComponent(path).path)") }
                let wrote = input.withUnsafeBytes { write(target, $0.baseAddress!, have) }
                close(target)
                guard wrote == have else { return problems.add("cannot write \(to.appendingPathComponent(path).path)") }
                let bound = Int(deflateBound(&stream, uLong(have)))
                if output.count < bound { output = [UInt8](repeating: 0, count: bound) }
                deflateReset(&stream)
                let (status, produced, _) = input.withUnsafeMutableBufferPointer { inBuffer in
                    output.withUnsafeMutableBufferPointer { outBuffer in
                        stream.next_in = inBuffer.baseAddress
                        stream.avail_in = uInt(have)
                        stream.next_out = outBuffer.baseAddress
                        stream.avail_out = uInt(outBuffer.count)
                        let status = deflate(&stream, Z_FINISH)
                        let crc = crc32(0, inBuffer.baseAddress, uInt(have))
                        return (status, outBuffer.count - Int(stream.avail_out), crc)
                    }
                }
                guard status == Z_STREAM_END else { return problems.add("zlib's deflate of \(path) ended with \(status)") }
                guard output.withUnsafeBytes({ write(part, $0.baseAddress!, produced) }) == produced else {
                    return problems.add("cannot write part-\(core).deflate in \(to.path)")
                }
                bytesIn += have
                bytesOut += produced
            }
            totals.add(bytesIn, bytesOut)
        }
        if let problem = problems.first { throw BenchError(problem) }
        let fd = open(to.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0, reckon_syncfs(fd) == 0 else { throw BenchError("cannot flush \(to.path)") }
        close(fd)
        say(
            "floor: wrote \(files.count) files, \(totals.bytesIn) bytes, and deflated them at level \(level) to \(totals.bytesOut) bytes on \(jobs) cores"
        )
    }

    final class Totals: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var bytesIn = 0
        private(set) var bytesOut = 0
        func add(_ bytesIn: Int, _ bytesOut: Int) {
            lock.lock()
            self.bytesIn += bytesIn
            self.bytesOut += bytesOut
            lock.unlock()
        }
    }
}
