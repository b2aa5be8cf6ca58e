import Observation
import SetteeCore

/// A live query's results as an observable model that SwiftUI binds to directly: Couchbase
/// Lite's `CBLUITableSource` (a table's rows kept in step with a live query), for Swift.
///
/// ```swift
/// struct AdultsList: View {
///   @State var adults = LiveModel(people.observe(try! FindQuery(matching: Field("age") >= 18)))
///   var body: some View {
///     List(adults.rows, id: \.id) { Text($0["name"]?.stringValue ?? "") }
///       .overlay { if adults.isLoading { ProgressView() } }
///       .task { await adults.run() }          // follows the query while the view is shown
///   }
/// }
/// ```
///
/// ``value`` is `nil` until the first result; each later result replaces it when a
/// committed write changed it (see ``LiveQuery``). An error ends the run and is kept in
/// ``error``; ``run()`` again starts over.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor @Observable
public final class LiveModel<Value: Sendable> {
  /// The latest result; `nil` before the first.
  public private(set) var value: Value?
  /// Whether the first result has not come yet (or a new run has started).
  public private(set) var isLoading = true
  /// The error that ended the last run, if any.
  public private(set) var error: SetteeError?
  /// How many results have come (the first included): a cheap way to see an update.
  public private(set) var updates = 0

  @ObservationIgnored private let query: LiveQuery<Value>

  /// A model of `query`'s results; nothing runs before ``run()``.
  public nonisolated init(_ query: LiveQuery<Value>) { self.query = query }

  /// Follows the query until the calling task is cancelled (SwiftUI's `.task` cancels it
  /// when the view goes) or an error ends it.
  public func run() async {
    isLoading = true
    error = nil
    do {
      for try await result in query {
        value = result.value
        updates += 1
        isLoading = false
      }
    } catch is CancellationError {
    } catch {
      self.error = SetteeError.from(error, "the live query failed")
      isLoading = false
    }
  }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension LiveModel where Value == [Document] {
  /// The documents of the latest result (none before the first).
  public var rows: [Document] { value ?? [] }
  /// How many documents the latest result holds.
  public var count: Int { value?.count ?? 0 }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension LiveModel where Value == ViewResult {
  /// The rows of the latest view result (none before the first).
  public var rows: [ViewRow] { value?.rows ?? [] }
  /// How many rows the latest result holds.
  public var count: Int { value?.rows.count ?? 0 }
}
