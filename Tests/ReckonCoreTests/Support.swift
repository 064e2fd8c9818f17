import Foundation
import TestSupport

@testable import ReckonCore

/// A memo folder built in a temporary directory for one test.
struct TempFolder {
    let url: URL

    init() {
        url = scratchFolder("memos")
        try! FileManager.default.createDirectory(at: url.appendingPathComponent("memos"), withIntermediateDirectories: true)
    }

    func write(_ relative: String, _ text: String) {
        let file = url.appendingPathComponent(relative)
        try! FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try! Data(text.utf8).write(to: file)
    }

    /// Writes `index.json` from entry objects written as JSON text.
    func index(_ entries: [String]) {
        write("index.json", #"{"schemaVersion": 1, "entries": [\#(entries.joined(separator: ","))]}"#)
    }

    func spec(_ role: SideRole = .local, name: String? = nil) -> SideSpec {
        SideSpec(role: role, name: name ?? role.rawValue, label: role == .local ? "this device" : "Google Drive", path: url.path, kind: .folder(url))
    }
}

/// An index entry as JSON text.
func entry(_ id: String, modified: String = "2026-04-19T14:32:00Z", archived: String? = nil, deleted: String? = nil, tag: String? = nil) -> String {
    func value(_ text: String?) -> String { text.map { "\"\($0)\"" } ?? "null" }
    return
        #"{"id": "\#(id)", "modifiedTime": "\#(modified)", "archivedAt": \#(value(archived)), "deletedAt": \#(value(deleted))\#(tag.map { ", \"changeTag\": \"\($0)\"" } ?? "")}"#
}

/// A memo file as JSON text.
func memo(
    _ id: String, title: String = "Title", body: String = "Body", modified: String = "2026-04-19T14:32:00Z", archived: String? = nil,
    tags: [String] = []
) -> String {
    let archivedText = archived.map { "\"\($0)\"" } ?? "null"
    let tagsText = tags.map { "\"\($0)\"" }.joined(separator: ",")
    return
        #"{"id": "\#(id)", "title": "\#(title)", "body": "\#(body)", "createdAt": "2026-04-01T00:00:00Z", "modifiedAt": "\#(modified)", "archivedAt": \#(archivedText), "deletedAt": null, "tags": [\#(tagsText)], "pinned": false}"#
}

let idA = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
let idB = "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
let idC = "16FD2706-8BAF-433B-82EB-8C7FADA847DA"
let idD = "A3BB189E-8BF9-3888-9912-ACE4E6543002"

/// Foundation's JSONEncoder as reckon's writer imitates it, to check the
/// writer's bytes against: sorted keys, pretty, slashes left alone.
func makeJSONEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return encoder
}

/// JSON text as it stands nested in a larger document: every line but the
/// first and the empty ones indented by `prefix`.
func indentedAfterFirstLine(_ json: Data, by prefix: String) -> Data {
    let lines = String(decoding: json, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    return Data(lines.enumerated().map { $0 == 0 || $1.isEmpty ? String($1) : prefix + $1 }.joined(separator: "\n").utf8)
}
