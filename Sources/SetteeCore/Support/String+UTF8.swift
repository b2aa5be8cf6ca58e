extension String {
  /// The string these bytes spell in UTF-8, or `nil` when they are not valid UTF-8 (never
  /// repaired with U+FFFD). `String(validating:as:)` needs macOS 15 and iOS 18; before
  /// them, the repairing decoder is run and its bytes compared (repair changes them exactly
  /// when the input is not valid).
  package init?<Bytes: Collection<UInt8>>(validatingUTF8 bytes: Bytes) {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
      guard let string = String(validating: bytes, as: UTF8.self) else { return nil }
      self = string
    } else {
      let decoded = String(decoding: bytes, as: UTF8.self)
      guard decoded.utf8.elementsEqual(bytes) else { return nil }
      self = decoded
    }
  }
}
