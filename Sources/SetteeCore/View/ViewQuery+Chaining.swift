extension ViewQuery {
  // Options one call at a time, each returning the query changed (GRDB's request style):
  //
  //     ViewQuery().startingAt(["Safeway"]).endingAt(["Safeway", [:]]).grouped(level: 1)
  //
  // A key is never optional here, so `.key(nil)` is the JSON `null` key, where
  // `ViewQuery(key: nil)` means "no key".

  /// Only rows with `key` (`nil` is the JSON `null` key).
  public func key(_ key: JSON) -> ViewQuery { changed { $0.key = key } }

  /// Only rows with these keys, in the order of the list (backwards when descending).
  public func keys(_ keys: [JSON]) -> ViewQuery { changed { $0.keys = keys } }

  /// The range starts at `key` (in a descending query, the high end), and, among rows with
  /// that key, at `documentID`.
  public func startingAt(_ key: JSON, documentID: String? = nil) -> ViewQuery {
    changed {
      $0.startKey = key
      $0.startKeyDocID = documentID
    }
  }

  /// The range ends at `key` (in a descending query, the low end), including rows with
  /// that key unless `inclusive` is `false`, and, among them, at `documentID`.
  public func endingAt(_ key: JSON, documentID: String? = nil, inclusive: Bool = true)
    -> ViewQuery
  {
    changed {
      $0.endKey = key
      $0.endKeyDocID = documentID
      $0.inclusiveEnd = inclusive
    }
  }

  /// Highest keys first.
  public func descending(_ descending: Bool = true) -> ViewQuery {
    changed { $0.descending = descending }
  }

  /// Leaves out the first `count` rows (or groups).
  public func skipping(_ count: Int) -> ViewQuery { changed { $0.skip = count } }

  /// Returns at most `count` rows (or groups); `0` returns none, as in CouchDB.
  public func limited(to count: Int) -> ViewQuery { changed { $0.limit = count } }

  /// Reduces (or, with `false`, returns the map rows of a view that has a reduce).
  public func reducing(_ reduce: Bool = true) -> ViewQuery { changed { $0.reduce = reduce } }

  /// Groups reduced rows by whole key, or by the first `level` elements of array keys.
  public func grouped(level: Int? = nil) -> ViewQuery {
    changed {
      if let level { $0.groupLevel = level } else { $0.group = true }
    }
  }

  /// Attaches each row's document.
  public func includingDocuments(_ include: Bool = true) -> ViewQuery {
    changed { $0.includeDocs = include }
  }

  /// Couchbase Lite's prefix matching at `level` (see ``prefixMatchLevel``).
  public func matchingPrefix(level: Int) -> ViewQuery { changed { $0.prefixMatchLevel = level } }

  /// Whether the view is brought up to date first.
  public func staleness(_ stale: Staleness) -> ViewQuery { changed { $0.stale = stale } }

  /// Counts the rows before the first one returned (``ViewResult/offset``).
  public func countingOffset(_ include: Bool = true) -> ViewQuery {
    changed { $0.includeOffset = include }
  }

  private func changed(_ change: (inout ViewQuery) -> Void) -> ViewQuery {
    var query = self
    change(&query)
    return query
  }
}
