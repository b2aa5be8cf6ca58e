import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Reads and writes on pipes and sockets that survive `EINTR`.
///
/// Foundation's `readDataToEndOfFile()`, `availableData` and `write(_:)` end in a `try!`:
/// a signal that interrupts the system call (`SIGCHLD` from one of the many processes the
/// suites start, delivered to the reading thread) stops the whole test process. These
/// retry instead.
extension FileHandle {
  /// Every byte until the end of the file.
  public func readAllBytes() -> [UInt8] {
    var bytes: [UInt8] = []
    while let chunk = readSomeBytes(), !chunk.isEmpty { bytes += chunk }
    return bytes
  }

  /// What one `read` returns (empty at the end of the file), or nil on an error.
  public func readSomeBytes(upTo count: Int = 65536) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: count)
    while true {
      let read = buffer.withUnsafeMutableBytes {
        Foundation.read(fileDescriptor, $0.baseAddress, count)
      }
      if read >= 0 { return Array(buffer[0..<read]) }
      if errno != EINTR { return nil }
    }
  }

  /// Writes every byte of `bytes`; false when the other end went away.
  @discardableResult
  public func writeAllBytes(_ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes {
        Foundation.write(fileDescriptor, $0.baseAddress, $0.count)
      }
      if written < 0 && errno == EINTR { continue }
      if written <= 0 { return false }
      offset += written
    }
    return true
  }
}

/// `recv` on a socket, again after `EINTR`.
public func receiveRetrying(
  _ socket: Int32, _ buffer: inout [UInt8], flags: Int32 = 0
) -> Int {
  while true {
    let count = recv(socket, &buffer, buffer.count, flags)
    if count < 0 && errno == EINTR { continue }
    return count
  }
}

/// `send` of all of `bytes` on a socket, again after `EINTR`; false when it failed.
@discardableResult
public func sendRetrying(_ socket: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
  var offset = 0
  while offset < bytes.count {
    let count = send(
      socket, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
    if count < 0 && errno == EINTR { continue }
    if count <= 0 { return false }
    offset += count
  }
  return true
}
