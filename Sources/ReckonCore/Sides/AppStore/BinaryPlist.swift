import Foundation

/// A reader of Apple's binary property lists (`bplist00`), as far as an
/// iPhone backup's file records need: Foundation on Linux reads them, but
/// gives a keyed archive's UIDs back as opaque objects, so a record's
/// `$objects` could not be followed. Every offset and count is checked
/// against the data: hostile bytes give nil, never a crash or a loop.
enum BinaryPlist {
    indirect enum Value: Equatable {
        case null
        case bool(Bool)
        case integer(Int64)
        case real(Double)
        case date(Double)
        case data(Data)
        case string(String)
        case uid(Int)
        case array([Value])
        case dictionary([String: Value])
    }

    /// The value `data` holds; nil when it is not a binary property list this reader takes.
    static func parse(_ data: Data) -> Value? {
        let bytes = [UInt8](data)
        guard bytes.count >= 40, bytes.starts(with: Array("bplist00".utf8)) else { return nil }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let refSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(refSize),
            let count = number(bytes, at: trailer + 8, size: 8), let top = number(bytes, at: trailer + 16, size: 8),
            let table = number(bytes, at: trailer + 24, size: 8), count > 0, count < 1 << 24, top < count,
            table >= 8, table + count * offsetSize <= trailer
        else { return nil }
        var offsets: [Int] = []
        offsets.reserveCapacity(count)
        for index in 0..<count {
            guard let offset = number(bytes, at: table + index * offsetSize, size: offsetSize), offset >= 8, offset < table else { return nil }
            offsets.append(offset)
        }
        var reader = Reader(bytes: bytes, offsets: offsets, refSize: refSize)
        return reader.object(top, depth: 0)
    }

    /// A big-endian unsigned number of `size` bytes at `at`; nil past the end or above `Int.max`.
    static func number(_ bytes: [UInt8], at: Int, size: Int) -> Int? {
        guard at >= 0, size <= 8, at + size <= bytes.count else { return nil }
        var value: UInt64 = 0
        for byte in bytes[at..<at + size] { value = value << 8 | UInt64(byte) }
        return value <= UInt64(Int.max) ? Int(value) : nil
    }

    private struct Reader {
        let bytes: [UInt8]
        let offsets: [Int]
        let refSize: Int
        /// Objects being read, so that a list that holds itself is refused.
        var open: Set<Int> = []

        mutating func object(_ index: Int, depth: Int) -> Value? {
            guard index >= 0, index < offsets.count, depth < 64, !open.contains(index) else { return nil }
            open.insert(index)
            defer { open.remove(index) }
            let at = offsets[index]
            let marker = bytes[at]
            let low = Int(marker & 0x0F)
            func length() -> (count: Int, start: Int)? {
                guard low == 0x0F else { return (low, at + 1) }
                guard at + 1 < bytes.count, bytes[at + 1] & 0xF0 == 0x10 else { return nil }
                let size = 1 << Int(bytes[at + 1] & 0x0F)
                guard let count = BinaryPlist.number(bytes, at: at + 2, size: size) else { return nil }
                return (count, at + 2 + size)
            }
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x00: return .null
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: return nil
                }
            case 0x1:
                let size = 1 << low
                guard size <= 8, at + 1 + size <= bytes.count else { return nil }
                var value: UInt64 = 0
                for byte in bytes[(at + 1)..<(at + 1 + size)] { value = value << 8 | UInt64(byte) }
                return .integer(Int64(bitPattern: value))
            case 0x2, 0x3:
                let size = marker >> 4 == 0x3 ? 8 : 1 << low
                guard size == 4 || size == 8, at + 1 + size <= bytes.count else { return nil }
                var raw: UInt64 = 0
                for byte in bytes[(at + 1)..<(at + 1 + size)] { raw = raw << 8 | UInt64(byte) }
                let value = size == 4 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw)
                return marker >> 4 == 0x3 ? .date(value) : .real(value)
            case 0x4:
                guard let (count, start) = length(), start + count <= bytes.count else { return nil }
                return .data(Data(bytes[start..<start + count]))
            case 0x5:
                guard let (count, start) = length(), start + count <= bytes.count else { return nil }
                return String(validating: bytes[start..<start + count], as: UTF8.self).map { .string($0) }
            case 0x6:
                guard let (count, start) = length(), count <= bytes.count, start + 2 * count <= bytes.count else { return nil }
                let units = (0..<count).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
                return String(validating: units, as: UTF16.self).map { .string($0) }
            case 0x8:
                guard let value = BinaryPlist.number(bytes, at: at + 1, size: low + 1) else { return nil }
                return .uid(value)
            case 0xA:
                guard let (count, start) = length(), count <= bytes.count, start + count * refSize <= bytes.count else { return nil }
                var items: [Value] = []
                for position in 0..<count {
                    guard let ref = BinaryPlist.number(bytes, at: start + position * refSize, size: refSize),
                        let item = object(ref, depth: depth + 1)
                    else { return nil }
                    items.append(item)
                }
                return .array(items)
            case 0xD:
                guard let (count, start) = length(), count <= bytes.count, start + 2 * count * refSize <= bytes.count else { return nil }
                var items: [String: Value] = [:]
                for position in 0..<count {
                    guard let keyRef = BinaryPlist.number(bytes, at: start + position * refSize, size: refSize),
                        let valueRef = BinaryPlist.number(bytes, at: start + (count + position) * refSize, size: refSize),
                        case .string(let key)? = object(keyRef, depth: depth + 1), let value = object(valueRef, depth: depth + 1)
                    else { return nil }
                    items[key] = value
                }
                return .dictionary(items)
            default:
                return nil
            }
        }
    }
}

extension BinaryPlist.Value {
    /// The value under `key` of a keyed archive's object, a UID followed into `$objects`.
    func archived(_ key: String, in objects: [BinaryPlist.Value]) -> BinaryPlist.Value? {
        guard case .dictionary(let fields) = self, let value = fields[key] else { return nil }
        guard case .uid(let index) = value else { return value }
        return index < objects.count ? objects[index] : nil
    }
}
