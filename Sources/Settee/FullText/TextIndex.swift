import Foundation
import GRDB
import SetteeCore

extension TextIndex {
  /// What the SQL compiler needs of a TEXT index: its table and column names.
  struct Query: Sendable, Equatable {
    var table: SQLFragment
    var columns: [String: String]

    /// The FTS query for a `$search` string.
    func match(_ search: String) throws -> String {
      try TextQuery.translate(search, columns: columns)
    }

    /// `SELECT docid … MATCH ?`: the rowids of the documents that match.
    func rids(_ search: String) throws -> SQLFragment {
      SQLFragment("SELECT docid FROM ") + table + SQLFragment(" WHERE ") + table
        + SQLFragment(" MATCH ")
        + .value(try match(search))
    }
  }

  var query: Query { Query(table: table, columns: columns) }
}

/// A TEXT index: an FTS4 table whose rows are documents (`docid` is the document's rowid)
/// and whose columns are the indexed fields, normalized by ``TextNormalizer``, plus the
/// document id.
struct TextIndex: Sendable {
  var stored: StoredIndex
  /// The statements that keep the table in step with writes, written once.
  private let delete: String
  private let insert: String

  init(stored: StoredIndex) {
    self.stored = stored
    let table = TextIndex.table(stored)
    delete = (SQLFragment("DELETE FROM ") + table + SQLFragment(" WHERE docid = ?")).text
    let columns = [SQLFragment("docid")] + TextIndex.columnNames(stored)
    insert =
      (SQLFragment("INSERT INTO ") + table + SQLFragment(" (") + .joined(columns, separator: ", ")
      + SQLFragment(") VALUES (")
      + .joined(Array(repeating: SQLFragment("?"), count: columns.count), separator: ", ")
      + SQLFragment(")")).text
  }

  var table: SQLFragment { TextIndex.table(stored) }

  static func table(_ stored: StoredIndex) -> SQLFragment { .identifier("fts_\(stored.xid)") }

  /// The FTS columns: one per field, then the document id.
  static func columnNames(_ stored: StoredIndex) -> [SQLFragment] {
    stored.definition.fields.indices.map { .identifier("f\($0)") } + [.identifier("id")]
  }

  /// Field name (as users write it, and `_id`) → FTS column.
  var columns: [String: String] {
    var columns = ["_id": "id"]
    for (position, field) in stored.definition.fields.enumerated() {
      columns[field.description] = "f\(position)"
    }
    return columns
  }

  static func create(_ index: StoredIndex, db: SQLConnection) throws {
    // The tokenizer comes from a checked definition: "simple" or "porter", nothing else.
    let tokenizer =
      index.definition.settings["tokenize"] == "porter"
      ? SQLFragment("porter") : SQLFragment("simple")
    try db.execute(
      sql: (SQLFragment("CREATE VIRTUAL TABLE ") + table(index) + SQLFragment(" USING fts4(")
        + .joined(columnNames(index), separator: ", ") + SQLFragment(", tokenize=") + tokenizer
        + SQLFragment(")")).text)
  }

  /// Replaces a document's row (none for a deleted document); `json` is the document with
  /// its `_id` and `_rev`.
  func update(rid: Int64, document: Document, json: JSON, isNew: Bool, db: SQLConnection) throws {
    if !isNew { try db.cachedStatement(sql: delete).execute(arguments: [rid]) }
    guard !document.isDeleted else { return }
    var values: [DatabaseValueConvertible?] = [rid]
    for field in stored.definition.fields {
      let text = PathResolver.candidates(json, field).map(TextNormalizer.text(of:)).joined(
        separator: " ")
      values.append(TextNormalizer.normalize(text))
    }
    values.append(TextNormalizer.normalize(document.id))
    try db.cachedStatement(sql: insert).execute(arguments: StatementArguments(values))
  }
}

/// Okapi BM25 relevance from FTS4's `matchinfo(…, 'pcnalx')`, the ranking SQLite's FTS
/// documentation derives; higher is more relevant.
enum Relevance {
  static let function = DatabaseFunction("settee_rank", argumentCount: 1, pure: true) { values in
    guard let data = Data.fromDatabaseValue(values[0]) else { return 0.0 }
    let info: [UInt32] = data.withUnsafeBytes { Array($0.bindMemory(to: UInt32.self)) }
    return bm25(info)
  }

  static func bm25(_ info: [UInt32], k1: Double = 1.2, b: Double = 0.75) -> Double {
    guard info.count >= 3 else { return 0 }
    let phrases = Int(info[0])
    let columns = Int(info[1])
    let documents = Double(info[2])
    // Layout: p c n, then a (average tokens per column) c values, l (tokens in this row)
    // c values, then x: 3 values per phrase and column.
    let averages = 3
    let lengths = averages + columns
    let hits = lengths + columns
    guard info.count >= hits + 3 * phrases * columns else { return 0 }
    var score = 0.0
    for phrase in 0..<phrases {
      for column in 0..<columns {
        let base = hits + 3 * (phrase * columns + column)
        let inRow = Double(info[base])
        let documentsWithHit = Double(info[base + 2])
        guard inRow > 0 else { continue }
        let idf = log((documents - documentsWithHit + 0.5) / (documentsWithHit + 0.5) + 1)
        let length = Double(info[lengths + column])
        let average = max(Double(info[averages + column]), 1)
        score += idf * inRow * (k1 + 1) / (inRow + k1 * (1 - b + b * length / average))
      }
    }
    return score
  }
}
