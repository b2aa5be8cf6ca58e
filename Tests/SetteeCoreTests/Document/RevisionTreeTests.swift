import SetteeCore
import Testing

/// The in-memory revision tree, the reference of the stored one (issue 31): CouchDB's
/// rules for leaves, the winner, grafting, stemming and `revs_diff`, as tables and as
/// invariants over random histories.
@Suite("Revision tree (reference model)")
struct RevisionTreeTests {
  typealias Rev = RevisionTree.Rev

  static func rev(_ text: String) -> Rev { Rev(text)! }
  static func path(_ texts: String...) -> [Rev] { texts.map(rev) }

  @Test(arguments: [
    ("1-abc", 1, "abc"), ("10-ABC", 10, "ABC"),
    ("2-0123456789abcdef0123456789abcdef", 2, "0123456789abcdef0123456789abcdef"),
    ("3-a-b", 3, "a-b"), ("7-é", 7, "é"),
  ])
  func peerRevisionsAreKeptByteForByte(_ text: String, _ generation: Int, _ suffix: String) {
    let parsed = Rev(text)
    #expect(parsed?.generation == generation)
    #expect(parsed?.suffix == Array(suffix.utf8))
    #expect(parsed?.description == text)
  }

  @Test(arguments: [
    "", "1", "1-", "-abc", "0-abc", "01-abc", "x-abc", "+1-abc", "1234567890123456789-a",
  ])
  func revisionsWithoutAGenerationOrSuffixAreRefused(_ text: String) {
    #expect(Rev(text) == nil)
  }

  /// Suffixes compare as bytes: "Z" (0x5A) before "a" (0x61), "é" after both.
  @Test func suffixesCompareAsBytes() {
    #expect(Self.rev("1-Z") < Self.rev("1-a"))
    #expect(Self.rev("1-a") < Self.rev("1-é"))
    #expect(Self.rev("1-b") < Self.rev("1-ba"))
    #expect(Self.rev("2-a") > Self.rev("1-zzz"))
  }

  /// Histories inserted as paths newest first, each with its deletion flag.
  typealias Inserts = [([String], Bool)]

  /// (histories inserted as paths newest first, with their deletion flags) → leaves,
  /// winner first. The table's type is written out: inferred, this literal of nested
  /// tuples took the type checker 17 s, a third of the test target's build.
  static let histories: [(Inserts, [String])] = [
    // A linear history: one leaf.
    ([(["1-a"], false), (["2-b", "1-a"], false), (["3-c", "2-b"], false)], ["3-c"]),
    // Two edits of 1-a: a conflict; the greater suffix wins.
    ([(["2-b", "1-a"], false), (["2-c", "1-a"], false)], ["2-c", "2-b"]),
    // A live leaf beats a deleted one of a higher generation.
    ([(["3-d", "2-b", "1-a"], true), (["2-c", "1-a"], false)], ["2-c", "3-d"]),
    // Every leaf deleted: the greatest deleted one.
    ([(["2-b", "1-a"], true), (["2-c", "1-a"], true)], ["2-c", "2-b"]),
    // CouchDB's conflict example (_revisions start 2 / 3 from 1-abc).
    (
      [
        (["2-1111", "1-abc"], false), (["3-2222", "2-1111"], false),
        (["2-3333", "1-abc"], false),
      ], ["3-2222", "2-3333"]
    ),
    // A history that shares nothing with the tree starts a branch of its own.
    ([(["2-b", "1-a"], false), (["5-e", "4-d"], false)], ["5-e", "2-b"]),
    // Resolving: the losing branch deleted; the live leaf wins.
    (
      [(["2-b", "1-a"], false), (["2-c", "1-a"], false), (["3-x", "2-c"], true)],
      ["2-b", "3-x"]
    ),
  ]

  @Test(arguments: histories)
  func leavesAndTheWinner(_ inserts: Inserts, _ expected: [String]) {
    var tree = RevisionTree()
    for (texts, deleted) in inserts {
      #expect(tree.insert(path: texts.map(Self.rev), deleted: deleted) == .added)
    }
    #expect(tree.leaves.map(\.rev.description) == expected)
    #expect(tree.winner?.rev.description == expected.first)
  }

  @Test func anExistingRevisionIsANoOpThatReportsSuccess() {
    var tree = RevisionTree()
    #expect(tree.insert(path: Self.path("2-b", "1-a"), deleted: false) == .added)
    let before = tree
    #expect(tree.insert(path: Self.path("2-b", "1-a"), deleted: true) == .alreadyPresent)
    #expect(tree == before)
    // An interior revision too.
    #expect(tree.insert(path: Self.path("1-a"), deleted: false) == .alreadyPresent)
    #expect(tree.leaves.map(\.rev.description) == ["2-b"])
  }

  @Test func aLongerHistoryGraftsAStemmedRootOntoItsAncestors() {
    var tree = RevisionTree()
    _ = tree.insert(path: Self.path("4-d", "3-c"), deleted: false)
    #expect(tree.ancestry(of: Self.rev("4-d")).map(\.description) == ["4-d", "3-c"])
    #expect(
      tree.insert(path: Self.path("4-d", "3-c", "2-b", "1-a"), deleted: false) == .alreadyPresent)
    #expect(
      tree.ancestry(of: Self.rev("4-d")).map(\.description) == ["4-d", "3-c", "2-b", "1-a"])
  }

  @Test func pathsWhoseGenerationsDoNotFallByOneAreRefused() {
    var tree = RevisionTree()
    #expect(tree.insert(path: Self.path("3-c", "1-a"), deleted: false) == nil)
    #expect(tree.insert(path: [], deleted: false) == nil)
    #expect(tree.revisions.isEmpty)
  }

  @Test func stemmingKeepsTheNewestRevisionsOfEveryBranch() {
    var tree = RevisionTree()
    _ = tree.insert(path: Self.path("5-e", "4-d", "3-c", "2-b", "1-a"), deleted: false)
    _ = tree.insert(path: Self.path("2-x", "1-a"), deleted: false)
    let leaves = tree.leaves
    tree.stem(limit: 2)
    #expect(tree.leaves == leaves)
    #expect(tree.revisions.map(\.description).sorted() == ["1-a", "2-x", "4-d", "5-e"])
    #expect(tree.ancestry(of: Self.rev("5-e")).map(\.description) == ["5-e", "4-d"])
  }

  @Test func revsDiffNamesTheMissingAndTheirPossibleAncestors() {
    var tree = RevisionTree()
    _ = tree.insert(path: Self.path("2-b", "1-a"), deleted: false)
    _ = tree.insert(path: Self.path("4-q", "3-p"), deleted: true)
    let (missing, ancestors) = tree.missing(Self.path("3-c", "2-b", "2-z", "3-c", "5-y"))
    #expect(missing.map(\.description) == ["3-c", "2-z", "5-y"])
    // Leaves below generation 5, the highest missing: 2-b and the deleted 4-q.
    #expect(ancestors.map(\.description) == ["2-b", "4-q"])
    #expect(tree.missing(Self.path("2-b", "1-a")) == ([], []))
  }

  /// Random histories: the winner is a leaf that beats every other; every leaf's
  /// ancestry falls by one generation; stemming keeps the leaves (so the winner) and no
  /// path longer than the limit; inserting the same paths again changes nothing.
  @Test(arguments: 1...20)
  func invariantsHoldOverRandomHistories(seed: UInt64) {
    var random = SplitMix64(seed: seed)
    var tree = RevisionTree()
    var paths: [([Rev], Bool)] = []
    for step in 0..<40 {
      let leaves = tree.leaves
      let base =
        leaves.isEmpty || random.next() % 5 == 0
        ? nil : leaves[Int(random.next() % UInt64(leaves.count))].rev
      let generation = (base?.generation ?? 0) + 1
      let new = Rev(generation: generation, suffix: "s\(seed)x\(step)y\(random.next() % 1000)")
      let path = [new] + (base.map { tree.ancestry(of: $0) } ?? [])
      let deleted = random.next() % 4 == 0
      #expect(tree.insert(path: path, deleted: deleted) == .added)
      paths.append((path, deleted))
    }
    let leaves = tree.leaves
    guard let winner = tree.winner else {
      Issue.record("no winner")
      return
    }
    #expect(leaves.dropFirst().allSatisfy { winner.beats($0) })
    for leaf in leaves {
      let ancestry = tree.ancestry(of: leaf.rev)
      #expect(zip(ancestry, ancestry.dropFirst()).allSatisfy { $0.generation == $1.generation + 1 })
    }
    let again = tree
    for (path, deleted) in paths {
      #expect(tree.insert(path: path, deleted: deleted) == .alreadyPresent)
    }
    #expect(tree == again)
    tree.stem(limit: 3)
    #expect(tree.leaves == leaves)
    #expect(tree.leaves.allSatisfy { tree.ancestry(of: $0.rev).count <= 3 })
  }
}
