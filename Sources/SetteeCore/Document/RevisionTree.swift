/// A document's revision tree as CouchDB keeps it, held in memory: the reference that the
/// stored tree is checked against (issue 31's differential test), and the statement of
/// the rules in one place.
///
/// - A revision id is `N-<suffix>`: a generation `N` of at least 1 and any non-empty suffix,
///   kept byte for byte (a peer's `10-ABC` stays `10-ABC`; Settee's own are MD5 hex).
/// - Revisions arrive as paths (newest first, as `_revisions` gives them); a path that
///   shares no revision with the tree starts a branch of its own (a stemmed history), and
///   one that reaches further back than a root grafts the root onto its ancestors.
/// - The winner is the greatest `(not deleted, generation, suffix bytes)` among the leaves:
///   a live leaf beats a deleted one whatever its generation; no clock, so every replica
///   picks the same one.
/// - Stemming keeps the newest `limit` revisions of every path from a leaf; it never
///   changes the leaves, so never the winner.
package struct RevisionTree: Sendable, Equatable {
  /// A revision id: its generation and suffix.
  package struct Rev: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let generation: Int
    package let suffix: [UInt8]

    /// Parses `N-<suffix>`; `nil` without a generation of at least 1 (decimal, no sign or
    /// leading zero) or without a suffix.
    package init?(_ text: String) {
      let bytes = Array(text.utf8)
      guard let dash = bytes.firstIndex(of: UInt8(ascii: "-")), dash > 0, dash < bytes.count - 1,
        bytes[0] != UInt8(ascii: "0"), dash <= 18
      else { return nil }
      var generation = 0
      for byte in bytes[..<dash] {
        let digit = byte &- UInt8(ascii: "0")
        guard digit < 10 else { return nil }
        generation = generation * 10 + Int(digit)
      }
      self.generation = generation
      suffix = Array(bytes[(dash + 1)...])
    }

    package init(generation: Int, suffix: String) {
      self.generation = generation
      self.suffix = Array(suffix.utf8)
    }

    package var description: String { "\(generation)-" + String(decoding: suffix, as: UTF8.self) }

    /// By generation, then suffix bytes.
    package static func < (lhs: Rev, rhs: Rev) -> Bool {
      if lhs.generation != rhs.generation { return lhs.generation < rhs.generation }
      return lhs.suffix.lexicographicallyPrecedes(rhs.suffix)
    }
  }

  /// A leaf: the end of a branch.
  package struct Leaf: Sendable, Hashable {
    package var rev: Rev
    package var deleted: Bool

    /// Whether this leaf wins over `other`: live first, then the greater revision.
    package func beats(_ other: Leaf) -> Bool {
      if deleted != other.deleted { return !deleted }
      return other.rev < rev
    }
  }

  /// What an insert did.
  package enum Insertion: Sendable, Equatable {
    /// The newest revision is new to the tree.
    case added
    /// The newest revision was already there: nothing changed but ancestry it may have
    /// grafted on.
    case alreadyPresent
  }

  /// Each revision's parent (`nil` for a root).
  private var parents: [Rev: Rev?] = [:]
  /// The revisions that are deletions.
  private var deletions: Set<Rev> = []

  package init() {}

  /// Every revision in the tree.
  package var revisions: Set<Rev> { Set(parents.keys) }

  /// Whether the tree holds `rev`.
  package func contains(_ rev: Rev) -> Bool { parents[rev] != nil }

  /// Inserts a path of revisions, newest first, each the parent's child (generations
  /// falling by one); `deleted` is the newest revision's.
  ///
  /// - Returns: `nil` for a path whose generations do not fall by one, else what it did.
  package mutating func insert(path: [Rev], deleted: Bool) -> Insertion? {
    guard let newest = path.first else { return nil }
    for (child, parent) in zip(path, path.dropFirst())
    where parent.generation != child.generation - 1 {
      return nil
    }
    let present = contains(newest)
    // From the oldest: each revision gets its parent from the path unless it has one.
    for position in path.indices.reversed() {
      let rev = path[position]
      let parent = position + 1 < path.count ? path[position + 1] : nil
      if let known = parents[rev] {
        if known == nil, let parent { parents[rev] = .some(parent) }
      } else {
        parents[rev] = .some(parent)
      }
    }
    if present { return .alreadyPresent }
    if deleted { deletions.insert(newest) }
    return .added
  }

  /// The leaves, the winner first, then by the same order.
  package var leaves: [Leaf] {
    var inner: Set<Rev> = []
    for case let parent? in parents.values { inner.insert(parent) }
    return parents.keys.filter { !inner.contains($0) }
      .map { Leaf(rev: $0, deleted: deletions.contains($0)) }
      .sorted { $0.beats($1) }
  }

  /// The winning leaf (``Leaf/beats(_:)``); `nil` for an empty tree.
  package var winner: Leaf? { leaves.first }

  /// `rev` and its known ancestors, newest first (what `_revisions` lists).
  package func ancestry(of rev: Rev) -> [Rev] {
    var path: [Rev] = []
    var next: Rev? = contains(rev) ? rev : nil
    while let current = next {
      path.append(current)
      next = parents[current] ?? nil
    }
    return path
  }

  /// Keeps only the newest `limit` revisions of every path from a leaf.
  package mutating func stem(limit: Int) {
    guard limit >= 1 else { return }
    var kept: Set<Rev> = []
    for leaf in leaves { kept.formUnion(ancestry(of: leaf.rev).prefix(limit)) }
    for rev in parents.keys where !kept.contains(rev) { parents[rev] = nil }
    for (rev, parent) in parents {
      if let parent, !kept.contains(parent) { parents[rev] = .some(nil) }
    }
    deletions.formIntersection(kept)
  }

  /// CouchDB's `revs_diff` for one document: the revisions of `revs` the tree lacks, and
  /// the leaves whose generation is below the highest of them (the revisions a peer may
  /// already hold as their ancestors), in the order CouchDB lists them: the winner's
  /// (live leaves, then deleted ones, each greatest first).
  package func missing(_ revs: [Rev]) -> (missing: [Rev], possibleAncestors: [Rev]) {
    var seen: Set<Rev> = []
    let missing = revs.filter { !contains($0) && seen.insert($0).inserted }
    guard let highest = missing.map(\.generation).max() else { return ([], []) }
    let ancestors = leaves.map(\.rev).filter { $0.generation < highest }
    return (missing, ancestors)
  }
}
