import Foundation

/// A fresh directory under the system's temporary directory, removed when released.
package final class TemporaryDirectory: @unchecked Sendable {
  // @unchecked: the only state is an immutable URL.
  package let url: URL

  package init() {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("settee-tests-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  /// The path of a file named `name` inside the directory.
  package func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  deinit { try? FileManager.default.removeItem(at: url) }
}
