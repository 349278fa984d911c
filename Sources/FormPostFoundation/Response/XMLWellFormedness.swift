import FormPost
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Checks that bytes are a well-formed XML document with `XMLParser`, which reports where
/// a document goes wrong (`XMLDocument` on Linux would accept some broken documents).
final class XMLWellFormedness: NSObject, XMLParserDelegate {
    private var sawElement = false

    /// Nil when `data` is well formed, else where and why it is not.
    static func problem(in data: Data) -> String? {
        let checker = XMLWellFormedness()
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.delegate = checker
        let parsed = parser.parse()
        if !parsed || parser.parserError != nil {
            let code = (parser.parserError as NSError?)?.code ?? 0
            return "malformed XML at line \(parser.lineNumber), column \(parser.columnNumber) (XMLParser error \(code))"
        }
        return checker.sawElement ? nil : "no XML element in the body"
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
        sawElement = true
    }
}
