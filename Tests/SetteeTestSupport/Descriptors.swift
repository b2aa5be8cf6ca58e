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
  package func readAllBytes() -> [UInt8] {
    var bytes: [UInt8] = []
    while let chunk = readSomeBytes(), !chunk.isEmpty { bytes += chunk }
    return bytes
  }

  /// What one `read` returns (empty at the end of the file), or nil on an error.
  package func readSomeBytes(upTo count: Int = 65536) -> [UInt8]? {
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
  package func writeAllBytes(_ bytes: [UInt8]) -> Bool {
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
package func receiveRetrying(
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
package func sendRetrying(_ socket: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
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

/// A pipe to a child process whose ends are close-on-exec here: the child gets its end
/// (posix_spawn's `dup2` clears the flag on its copy), and no other process started
/// meanwhile inherits either. Foundation's `Pipe` is inheritable, and its `Process` does
/// not close other descriptors in the child: a `settee serve` another test started at
/// that moment held a copy of a short command's output pipe, whose reader then waited
/// for the server's end rather than its own child's (a 7-second `settee replicate`
/// measured 285 s under the full suite).
package final class ChildPipe: @unchecked Sendable {
  package let fileHandleForReading: FileHandle
  package let fileHandleForWriting: FileHandle

  package init() {
    // pipe2 makes both ends close-on-exec at once (a `pipe` then `fcntl` leaves a moment
    // for another thread's spawn); Swift's Glibc module leaves it out, so it is looked up.
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else {
      fatalError("this C library has no pipe2")
    }
    var descriptors: [Int32] = [-1, -1]
    guard unsafeBitCast(symbol, to: Pipe2.self)(&descriptors, Int32(O_CLOEXEC)) == 0 else {
      fatalError("pipe2 failed: \(String(cString: strerror(errno)))")
    }
    fileHandleForReading = FileHandle(fileDescriptor: descriptors[0], closeOnDealloc: true)
    fileHandleForWriting = FileHandle(fileDescriptor: descriptors[1], closeOnDealloc: true)
  }
}

extension Process {
  /// Starts the process with these pipes for its standard streams (`nil`: the null
  /// device) and closes this process's copies of the ends the child uses, so that a
  /// reader sees the end of the output when the child exits.
  package func run(output: ChildPipe?, errors: ChildPipe?, input: ChildPipe? = nil) throws {
    standardOutput = output?.fileHandleForWriting ?? FileHandle.nullDevice
    standardError = errors?.fileHandleForWriting ?? FileHandle.nullDevice
    standardInput = input?.fileHandleForReading ?? FileHandle.nullDevice
    try run()
    try? output?.fileHandleForWriting.close()
    try? errors?.fileHandleForWriting.close()
    try? input?.fileHandleForReading.close()
  }
}
