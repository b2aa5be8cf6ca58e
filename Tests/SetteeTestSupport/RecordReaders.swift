import SetteeCore

extension JSONRecordReader {
  /// A reader of `text`, handed to it `chunkSize` bytes at a time (records then straddle
  /// chunks, as they do in a file read in pieces).
  package init(text: String, chunkSize: Int = 4096) {
    var remaining = Array(text.utf8)[...]
    self.init(maxRecordBytes: 1 << 20) {
      guard !remaining.isEmpty else { return nil }
      defer { remaining = remaining.dropFirst(chunkSize) }
      return Array(remaining.prefix(chunkSize))
    }
  }
}
