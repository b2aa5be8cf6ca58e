import Settee

extension TemporaryDirectory {
  /// A collection of a file in this directory, written without a full sync: a replica
  /// for the replication tests.
  package func replica(_ file: String, _ name: String) throws -> DocumentCollection {
    try Database(path: path(file), configuration: .init(fullSync: false)).collection(name)
  }
}
