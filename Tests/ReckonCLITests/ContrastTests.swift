import Foundation
import ReckonCore
import TestSupport
import Testing

/// axe-core's `axe.min.js`, as PyPI's `axe-playwright-python` bundles it:
/// `.ci/run` installs that package (without its dependencies) into
/// `.build/python-venv`. It is never committed.
let axeScript: URL? = {
    let lib = packageRoot.appendingPathComponent(".build/python-venv/lib")
    let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? []
    return versions.filter { $0.hasPrefix("python") }.sorted().map {
        lib.appendingPathComponent("\($0)/site-packages/axe_playwright_python/axe.min.js")
    }.first { FileManager.default.fileExists(atPath: $0.path) }
}()

extension Requirement {
    /// axe-core 4.x in `.build/python-venv`, as `.ci/run` installs it.
    static let axe = Requirement("axe-core's axe.min.js from PyPI's axe-playwright-python in .build/python-venv") { axeScript != nil }
}

/// WCAG 2 AA contrast (4.5:1, or 3:1 for large text) on every page a person
/// reads, checked by axe-core's own `color-contrast` rule in Chromium.
@Suite(.needs(.chromium, .chromedriver, .axe))
struct ContrastTests {
    /// axe's version and what its rule found on the page shown: each element
    /// below the ratio it needs, or whose contrast axe could not tell, with
    /// axe's words on its colours and ratio. Text of one character (a count
    /// such as "4") is measured too, not left out as an icon might be. Two
    /// kinds axe cannot tell are left out, checked here by hand: the chart's
    /// axis numbers inside the SVG (`imgNode`: #6c6c70 on white, 5.2:1) and
    /// the read-only text area of the choices file, which axe finds partly
    /// covered (`elmPartiallyObscured`: its text in the browser's own colours).
    static func contrastFindings(in browser: Browser, axe: String) throws -> (version: String, findings: [String]) {
        let value = try browser.script(
            axe + """

                ;return axe.run(document, {
                  runOnly: {type: 'rule', values: ['color-contrast']},
                  checks: {'color-contrast': {options: {ignoreLength: true}}}
                }).then(result => ({
                  version: axe.version,
                  findings: [...result.violations, ...result.incomplete].flatMap(v => v.nodes
                    .filter(n => !n.any.every(c => ['imgNode', 'elmPartiallyObscured'].includes(c.data && c.data.messageKey)))
                    .map(n => `${n.target.join(' ')} "${n.html.slice(0, 80)}": ${n.any.map(c => c.message).join('; ')}`))
                }));
                """)
        return (value["version"].stringValue ?? "", value["findings"].arrayValue.compactMap(\.stringValue))
    }

    /// The report (drift and pipeline, English and Japanese, with the
    /// history chart) and the plan, at a phone's size and a desktop's.
    @Test(arguments: Screen.allCases)
    func everyTextMeetsAAContrast(on screen: Screen) throws {
        let axe = try String(contentsOf: try #require(axeScript), encoding: .utf8)
        let pages = try measuredPages()
        let browser = try Browser(screen)
        defer { browser.close() }
        for (name, page) in pages {
            try browser.open(page)
            let (version, findings) = try Self.contrastFindings(in: browser, axe: axe)
            #expect(version.hasPrefix("4."), "axe-core 4.x, not \(version)")
            #expect(findings.isEmpty, "\(name) at \(screen.width) px:\n\(findings.joined(separator: "\n"))")
        }
    }
}
