import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An error in words a person knows: the file and errno's own words, never
/// a library's error domain or code.
package func errorWords(_ error: any Error) -> String {
    switch error {
    case let output as OutputError: return output.description
    case let read as ReadFailure: return read.message
    default: break
    }
    guard let (path, reason) = fileErrorParts(error) else { return String(describing: error) }
    return path.map { "cannot write \($0): \(reason)" } ?? reason
}

/// The file a write failed on (when the error names one) and why, in
/// errno's words; nil for an error that is not about a file.
package func fileErrorParts(_ error: any Error) -> (path: String?, reason: String)? {
    if let output = error as? OutputError { return (output.path, output.reason) }
    let bridged = error as NSError
    guard bridged.domain == NSCocoaErrorDomain || bridged.domain == NSPOSIXErrorDomain else { return nil }
    let path = bridged.userInfo[NSFilePathErrorKey] as? String ?? (bridged.userInfo[NSURLErrorKey] as? URL)?.path
    var code = bridged.domain == NSPOSIXErrorDomain ? Int32(bridged.code) : nil
    if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
        code = Int32(underlying.code)
    }
    return (path, code.map { String(cString: strerror($0)) } ?? "the file system refused")
}
