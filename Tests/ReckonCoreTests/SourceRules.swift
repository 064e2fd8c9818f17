import Foundation

/// The package's `Sources/` folder, for the tests that read the code itself.
let sourcesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources").standardizedFileURL

/// Every line under `Sources/<folder>/` of a file ending in one of
/// `suffixes` that matches one of `rules`, as `Sources/<path>:<line>: <what>:
/// <text>`, in path order. Comment lines are not read, and neither are the
/// files whose path (from `Sources/`) `skipping` is true for.
func offendingLines(
    in folders: [String], suffixes: [String] = [".swift"], skipping: (String) -> Bool = { _ in false },
    rules: [(pattern: String, what: String)]
) throws -> [String] {
    let rules = try rules.map { (try Regex($0.pattern), $0.what) }
    var found: [String] = []
    for folder in folders {
        let root = folder.isEmpty ? sourcesFolder : sourcesFolder.appendingPathComponent(folder)
        let files = (FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? [])
            .map { folder.isEmpty ? $0 : folder + "/" + $0 }
            .filter { file in suffixes.contains { file.hasSuffix($0) } && !skipping(file) }.sorted()
        for file in files {
            let text = try String(contentsOf: sourcesFolder.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                for (regex, what) in rules where line.contains(regex) {
                    found.append("Sources/\(file):\(number + 1): \(what): \(code)")
                }
            }
        }
    }
    return found
}
