import Foundation
import SetteeCore

/// A file (or standard input, `-`, or a pipe) read in chunks through a POSIX descriptor,
/// again after `EINTR` (Foundation's `FileHandle` reads end in a `try!` that a signal
/// interrupting the call turns into a crash).
package final class InputFile {
  package let path: String
  private let descriptor: Int32
  private let owned: Bool
  /// The size in bytes when known (regular files), for progress.
  package let size: Int?

  /// Reads `handle` (a pipe's end, standard input), named `name` in errors; the handle
  /// stays its owner's to close.
  package init(_ handle: FileHandle, name: String) {
    path = name
    descriptor = handle.fileDescriptor
    owned = false
    size = nil
  }

  package init(path: String) throws {
    self.path = path
    if path == "-" {
      descriptor = STDIN_FILENO
      owned = false
      size = nil
      return
    }
    owned = true
    descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else {
      throw SetteeError(.io, "cannot open \(path): \(String(cString: strerror(errno)))")
    }
    var info = stat()
    if fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
      size = Int(info.st_size)
    } else {
      size = nil
    }
  }

  deinit {
    if owned && descriptor >= 0 { close(descriptor) }
  }

  /// The next chunk of up to `count` bytes; `nil` at the end.
  package func read(upTo count: Int = 1 << 20) throws -> [UInt8]? {
    var chunk = [UInt8](repeating: 0, count: count)
    while true {
      let got = chunk.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, count) }
      if got < 0 {
        if errno == EINTR { continue }
        throw SetteeError(.io, "cannot read \(path): \(String(cString: strerror(errno)))")
      }
      if got == 0 { return nil }
      chunk.removeSubrange(got...)
      return chunk
    }
  }

  /// The whole input as bytes.
  package func readAll() throws -> [UInt8] {
    var bytes: [UInt8] = []
    while let chunk = try read() { bytes.append(contentsOf: chunk) }
    return bytes
  }
}
