import SetteeCore

/// What the `where` face keeps for a database: settings and parses as last read, the
/// collections' operation queues, and their parsed-document caches.
final class WhereState: FaceState {
  /// The collections' `where` settings as last read, checked by their version.
  let fieldsCache = Locked<[Int64: (version: Int64, fields: WhereFields)]>([:])
  /// `where` strings and `orderBy` clauses as last parsed.
  let parseCache = Locked(WhereParseCache())
  /// The order of the collections' queued operations.
  let collectionQueues = CollectionQueues()
  /// The parsed-document caches and their size settings, by collection name.
  let documentCaches = Locked<[[UInt8]: (size: Int, cache: DocumentCache)]>([:])

  init() {}
}

extension Database {
  /// The collections' `where` settings as last read.
  var whereFieldsCache: Locked<[Int64: (version: Int64, fields: WhereFields)]> {
    faceState(WhereState.self).fieldsCache
  }
  /// `where` strings and `orderBy` clauses as last parsed.
  var whereParseCache: Locked<WhereParseCache> { faceState(WhereState.self).parseCache }
  /// The order of the collections' queued operations.
  var collectionQueues: CollectionQueues { faceState(WhereState.self).collectionQueues }
  /// The `where` face's parsed-document caches, by collection name.
  var documentCaches: Locked<[[UInt8]: (size: Int, cache: DocumentCache)]> {
    faceState(WhereState.self).documentCaches
  }
}
