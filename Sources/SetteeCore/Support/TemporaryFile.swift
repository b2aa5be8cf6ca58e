import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A file in the temporary directory that no path names: it is made readable by this user
/// alone and removed from its directory as soon as it is open, so that it goes with its
/// last handle, and with the process when the process is killed. Request bodies and
/// uploads past what is kept in memory wait in one (issue 44: a SIGKILL during a large
/// `_bulk_docs` left its spool behind for good), and so do the attachments of a document
/// the replicator passes on without holding it.
package struct TemporaryFile: Sendable {
  private let handle: FileHandle

  /// A new empty file; `purpose` names it in errors ("an upload", "a request body").
  package init(for purpose: String) throws {
    let directory = FileManager.default.temporaryDirectory.path
    let path = "\(directory)/settee-\(Document.generateID())"
    let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw SetteeError(
        .io,
        "cannot create a temporary file for \(purpose) in \(directory): \(String(cString: strerror(errno)))"
      )
    }
    unlink(path)
    handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
  }

  /// Appends `bytes`.
  package func write(_ bytes: some Sequence<UInt8>) throws {
    try handle.write(contentsOf: Data(bytes))
  }

  /// Goes back to the first byte, to read what was written.
  package func rewind() throws {
    try handle.seek(toOffset: 0)
  }

  /// Up to `count` bytes from where reading is; `nil` at the end.
  package func read(upTo count: Int) throws -> [UInt8]? {
    guard let data = try handle.read(upToCount: count), !data.isEmpty else { return nil }
    return Array(data)
  }

  /// Up to `count` bytes from `offset`; `nil` at the end.
  package func read(at offset: UInt64, upTo count: Int) throws -> [UInt8]? {
    try handle.seek(toOffset: offset)
    return try read(upTo: count)
  }

  /// Everything written, read from the first byte.
  package func readAll() throws -> [UInt8] {
    try rewind()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Int(try handle.seekToEnd()))
    try rewind()
    while let chunk = try read(upTo: 1 << 20) { bytes.append(contentsOf: chunk) }
    return bytes
  }

  /// How many bytes the file holds.
  package func size() throws -> UInt64 {
    let here = try handle.offset()
    defer { try? handle.seek(toOffset: here) }
    return try handle.seekToEnd()
  }

  /// Closes the file, which frees its space.
  package func close() {
    try? handle.close()
  }
}
