import HTTPTypes
import NIOCore
import SetteeCore

/// How fast request bodies must arrive: at least `minimumRate` bytes a second over each
/// `window` (the server's idle timeout) while the server waits for them. A slower body is
/// cut (issue 44: ten clients sending 60 MiB and then a byte a second held 750 MB of a
/// server for as long as they liked): its connection's input is closed, so that the rest
/// is not read, and the request is answered `408 request_timeout` before the connection
/// closes. Headers sent this slowly are cut by the idle timeout itself.
///
/// One watchdog serves the whole server: ``run()`` wakes a quarter of the window at a time
/// and looks at every body being read, so that a body costs two short locked updates (a
/// task per body cost a `_find` a third of its time, a timer on its event loop a fifth).
final class BodyWatchdog: Sendable {
  /// Each stretch of waiting that is measured.
  let window: Duration
  /// Bytes a second, on average over a window.
  let minimumRate: Int
  /// Bytes a window must bring.
  private let least: Int

  private struct Watched: Sendable {
    let progress: BodyProgress
    let channel: any Channel
  }
  private let watched = Locked<[ObjectIdentifier: Watched]>([:])

  init(window: Duration, minimumRate: Int) {
    self.window = window
    self.minimumRate = minimumRate
    let seconds = Double(window.components.seconds) + Double(window.components.attoseconds) / 1e18
    least = Int((Double(minimumRate) * seconds).rounded(.up))
  }

  /// Watches `progress`, a body being read on `channel`, until ``stop(_:)``.
  func watch(_ progress: BodyProgress, on channel: any Channel) {
    watched.withLock { $0[ObjectIdentifier(progress)] = Watched(progress: progress, channel: channel) }
  }

  /// Stops watching `progress`.
  func stop(_ progress: BodyProgress) {
    _ = watched.withLock { $0.removeValue(forKey: ObjectIdentifier(progress)) }
  }

  /// Looks at every body a quarter of the window at a time until cancelled, closing the
  /// input of each whose last window brought too little. The window slides, so that a
  /// burst at the start keeps a body for little more than a window.
  func run() async {
    while !Task.isCancelled {
      try? await Task.sleep(for: window / BodyProgress.slices)
      let slow = watched.withLock { table in
        var channels: [any Channel] = []
        for (key, entry) in table where entry.progress.endSlice(cuttingBelow: least) {
          channels.append(entry.channel)
          table[key] = nil
        }
        return channels
      }
      for channel in slow { channel.close(mode: .input, promise: nil) }
    }
  }

  /// The answer to a body cut for its pace.
  var timedOut: CouchError {
    CouchError(
      .requestTimeout, "request_timeout",
      "the request body arrived slower than \(minimumRate) bytes a second for \(window): the connection is closed"
    )
  }
}

/// A request's share of the watchdog: its connection.
struct BodyPace: Sendable {
  let watchdog: BodyWatchdog
  let channel: any Channel
}

/// How much of a body arrived in each quarter of the last window, and whether it was cut;
/// shared by the task reading the body and the one watching it.
final class BodyProgress: Sendable {
  /// The parts a window is measured in.
  static let slices = 4
  private struct State {
    var slices = [Int](repeating: 0, count: BodyProgress.slices)
    var current = 0
    var ended = 0
    var isCut = false
    var isDone = false
  }
  private let state = Locked(State())

  /// Counts `count` bytes received.
  func received(_ count: Int) {
    state.withLock { $0.slices[$0.current] += count }
  }

  /// Ends a slice: `true` when the body is cut because the window that ends here (once a
  /// whole one has passed) brought fewer than `least` bytes, never once the body is done.
  func endSlice(cuttingBelow least: Int) -> Bool {
    state.withLock { state in
      guard !state.isDone else { return false }
      state.ended += 1
      if state.ended >= Self.slices && state.slices.reduce(0, +) < least { state.isCut = true }
      state.current = (state.current + 1) % Self.slices
      state.slices[state.current] = 0
      return state.isCut
    }
  }

  /// Ends the watch: whether the body was cut before.
  func finish() -> Bool {
    state.withLock { state in
      state.isDone = true
      return state.isCut
    }
  }
}

/// A body collected whole as it arrives: in memory up to ``memoryLimit``, then in a
/// ``TemporaryFile``, so that bodies still arriving hold little memory however many they
/// are; it is read into memory only once it is whole.
struct BodyCollector {
  /// What one body keeps in memory while it arrives.
  static let memoryLimit = 1 << 20
  private var bytes: [UInt8] = []
  private var file: TemporaryFile?

  /// Adds the next bytes.
  mutating func append(_ chunk: ByteBufferView) throws {
    if let file {
      try file.write(chunk)
    } else if bytes.count + chunk.count <= Self.memoryLimit {
      bytes.append(contentsOf: chunk)
    } else {
      let file = try TemporaryFile(for: "a request body")
      try file.write(bytes)
      try file.write(chunk)
      bytes = []
      self.file = file
    }
  }

  /// The whole body.
  consuming func finish() throws -> [UInt8] {
    guard let file else { return bytes }
    defer { file.close() }
    return try file.readAll()
  }
}
