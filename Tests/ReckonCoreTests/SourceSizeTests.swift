import Foundation
import Testing

/// Keeps every Swift file under `Sources/` short enough to read: no file over
/// 600 lines, no function over 80 (from its declaration to its closing brace,
/// comments and blank lines included; closures and nested functions count
/// within their parent). Each offender is printed as `path:line: name is N
/// lines` or `path is N lines`.
@Suite struct SourceSizeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fileLimit = 600
    static let functionLimit = 80

    /// Every `.swift` file under `Sources/`, as a path from the package root, sorted.
    static func sourceFiles() throws -> [String] {
        let sources = root.appendingPathComponent("Sources")
        let walker = FileManager.default.enumerator(atPath: sources.path)
        var paths: [String] = []
        while let path = walker?.nextObject() as? String {
            if path.hasSuffix(".swift") { paths.append("Sources/" + path) }
        }
        return paths.sorted()
    }

    /// How many lines a file's text has, as `wc -l` counts them when it ends
    /// in a newline.
    static func lineCount(_ text: String) -> Int {
        if text.isEmpty { return 0 }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        if text.hasSuffix("\n") { lines -= 1 }
        return lines
    }

    @Test func noSourceFileOrFunctionIsTooLong() throws {
        var offenders: [String] = []
        let files = try Self.sourceFiles()
        #expect(files.count > 50, "the sources were not found under \(Self.root.path)")
        for path in files {
            let text = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
            let lines = Self.lineCount(text)
            if lines > Self.fileLimit { offenders.append("\(path) is \(lines) lines") }
            for function in SourceMeasurer.measure(text) where function.lines > Self.functionLimit {
                offenders.append("\(path):\(function.line): \(function.name) is \(function.lines) lines")
            }
        }
        for offender in offenders { print(offender) }
        let list = offenders.joined(separator: "\n")
        #expect(offenders.isEmpty, "\(offenders.count) over the limits (\(Self.fileLimit) lines a file, \(Self.functionLimit) a function):\n\(list)")
    }

    @Test func aBraceInAStringOrCommentDoesNotCount() {
        let source = """
            struct Page {
                func open() -> String {
                    let brace = "{"  // a { here
                    /* and } here, /* nested { */ too */
                    return brace + "}}"
                }

                func next() {}
            }
            """
        #expect(SourceMeasurer.measure(source).description == "[open@2:5, next@8:1]")
    }

    @Test func multiLineAndRawStringsAreReadWhole() {
        let source = ##"""
            func page() -> String {
                let text = """
                    } a closing brace, and "quotes" \(values.map { "\($0)}" }.count)
                    """
                let raw = #"a \" brace }"#
                return text + raw
            }
            var shown: String {
                "}" + #"\#(page())"#
            }
            """##
        #expect(SourceMeasurer.measure(source).description == "[page@1:7, shown@8:3]")
    }

    @Test func nestedFunctionsAndClosuresCountWithinTheirParent() {
        let source = """
            protocol Shape {
                func area() -> Double
                var sides: Int { get }
            }
            struct Square: Shape {
                var side = 1.0
                var sides: Int { 4 }
                init(side: Double) {
                    self.side = side
                    func check() {
                        precondition(side > 0)
                    }
                    check()
                }
                func area() -> Double {
                    let halves = [side].map { value in
                        value * value
                    }
                    return halves[0] + Self.init(side: 1).side * 0
                }
                static func match(_ name: String) -> Bool { name.wholeMatch(of: /[a-z]{1,3}/) != nil }
            }
            """
        #expect(SourceMeasurer.measure(source).description == "[sides@3:1, sides@7:1, init@8:7, area@15:6, match@21:1]")
    }

    @Test func fileLinesAreCountedAsWcDoes() {
        #expect(Self.lineCount("a\nb\n") == 2)
        #expect(Self.lineCount("a\nb") == 2)
        #expect(Self.lineCount("") == 0)
    }
}
