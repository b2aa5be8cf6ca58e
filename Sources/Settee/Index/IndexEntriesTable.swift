import GRDB
import GRDBSQLite
import SetteeCore

/// `settee_index_entries(id, rev, body)`: the entries one document puts into the JSON index
/// being built, as rows of keys (`k0…`) and covered values (`v0…`): a table-valued function,
/// so that one `INSERT … SELECT … ORDER BY` builds a whole index in key order, with one row
/// per entry however many entries a document gives.
///
/// It finds each field's value in the stored body without parsing the body
/// (``JSONScanner``): a scalar or object is keyed from its text (``CollationKey/appendPlain``
/// for plain ones) and covered by that same text; an array is parsed alone and gives
/// ``IndexKeys``' entries. Documents it cannot answer that way (an array along a field's
/// path, `_id` or `_rev` fields, a partial filter, names with escapes) are parsed whole and
/// given ``IndexKeys``' rows, the reference that writes use too.
///
/// Registered through SQLite's C API (GRDB has no virtual tables) only while a build runs
/// (``during(_:index:_:)``), with that build's index as its data.
enum IndexEntriesTable {
  /// What the table serves during one build, and the first error it met.
  final class Build {
    let index: StoredIndex
    var definition: IndexDefinition { index.definition }
    /// The fields' member names, or nil when every document must be parsed.
    let paths: JSONScanner.Paths?
    /// Documents that gave more than one entry.
    var multiDocuments = 0
    var error: (any Error)?

    init(_ index: StoredIndex) {
      self.index = index
      let definition = index.definition
      let scannable =
        definition.partialFilter == nil
        && definition.fields.allSatisfy { field in
          field.components.first.map { $0 != "_id" && $0 != "_rev" } ?? false
        }
      paths = scannable ? JSONScanner.Paths(definition.fields.map(\.components)) : nil
    }
  }

  static let name = "settee_index_entries"

  /// Runs `body` with the table registered on `db` for building `index`, and removes it
  /// afterwards. An error the table met (a document with too many entries, a damaged body)
  /// is thrown as itself, in place of SQLite's report of it.
  static func during<T>(
    _ db: SQLConnection, index: StoredIndex, _ body: (Build) throws -> T
  ) throws
    -> T
  {
    let build = Build(index)
    let retained = Unmanaged.passRetained(build)
    let status = sqlite3_create_module_v2(
      db.sqliteConnection, name, module, retained.toOpaque(), nil)
    guard status == SQLITE_OK else {
      retained.release()
      throw SetteeError(.storage, "could not register \(name) (SQLite error \(status))")
    }
    defer {
      sqlite3_create_module_v2(db.sqliteConnection, name, nil, nil, nil)
      retained.release()
    }
    do {
      return try body(build)
    } catch {
      throw build.error ?? error
    }
  }

  // MARK: - The module

  /// The table as SQLite holds it: SQLite's part first, as its API requires.
  private struct Table {
    var base = sqlite3_vtab()
    let build: Unmanaged<Build>
  }

  /// A cursor over one document's entries.
  private struct Cursor {
    var base = sqlite3_vtab_cursor()
    let state: Unmanaged<Entries>
  }

  /// A key and its value, as ranges of ``Entries/bytes`` (the value's start is -1 for NULL).
  private struct Cell {
    var keyStart: Int32
    var keyEnd: Int32
    var valueStart: Int32
    var valueEnd: Int32
  }

  /// One document's entries, and the buffers that make them (kept between documents).
  private struct Buffers {
    var bytes: [UInt8] = []
    /// Row after row, a cell per field.
    var cells: [Cell] = []
    /// Each field's cells, before they are combined into rows.
    var fieldCells: [Cell] = []
    var fieldEnds: [Int] = []
    var lookups: [JSONScanner.Lookup] = []
  }

  private final class Entries {
    let build: Build
    var buffers = Buffers()
    var row = 0
    var rows = 0

    init(build: Build) { self.build = build }
  }

  nonisolated(unsafe) private static let module: UnsafeMutablePointer<sqlite3_module> = {
    precondition(MemoryLayout<Table>.offset(of: \Table.base) == 0)
    precondition(MemoryLayout<Cursor>.offset(of: \Cursor.base) == 0)
    let module = UnsafeMutablePointer<sqlite3_module>.allocate(capacity: 1)
    module.initialize(to: sqlite3_module())
    module.pointee.iVersion = 1
    // No xCreate: an eponymous table only, used as `settee_index_entries(id, rev, body)`.
    module.pointee.xConnect = { connection, aux, _, _, table, _ in
      IndexEntriesTable.connect(connection, aux: aux, table: table)
    }
    module.pointee.xBestIndex = { table, info in IndexEntriesTable.bestIndex(table, info) }
    module.pointee.xDisconnect = { table in
      let pointer = UnsafeMutableRawPointer(table!).assumingMemoryBound(to: Table.self)
      pointer.deinitialize(count: 1)
      pointer.deallocate()
      return SQLITE_OK
    }
    module.pointee.xOpen = { table, cursor in
      let build = UnsafeMutableRawPointer(table!).assumingMemoryBound(to: Table.self).pointee
        .build.takeUnretainedValue()
      let pointer = UnsafeMutablePointer<Cursor>.allocate(capacity: 1)
      pointer.initialize(to: Cursor(state: .passRetained(Entries(build: build))))
      cursor!.pointee = UnsafeMutableRawPointer(pointer).assumingMemoryBound(
        to: sqlite3_vtab_cursor.self)
      return SQLITE_OK
    }
    module.pointee.xClose = { cursor in
      let pointer = UnsafeMutableRawPointer(cursor!).assumingMemoryBound(to: Cursor.self)
      pointer.pointee.state.release()
      pointer.deinitialize(count: 1)
      pointer.deallocate()
      return SQLITE_OK
    }
    module.pointee.xFilter = { cursor, _, _, count, arguments in
      IndexEntriesTable.filter(cursor!, Int(count), arguments)
    }
    module.pointee.xNext = { cursor in
      entries(cursor).row += 1
      return SQLITE_OK
    }
    module.pointee.xEof = { cursor in
      let entries = entries(cursor)
      return entries.row >= entries.rows ? 1 : 0
    }
    module.pointee.xColumn = { cursor, context, column in
      IndexEntriesTable.column(entries(cursor), context, Int(column))
      return SQLITE_OK
    }
    module.pointee.xRowid = { cursor, rowid in
      rowid!.pointee = Int64(entries(cursor).row)
      return SQLITE_OK
    }
    return module
  }()

  private static func entries(_ cursor: UnsafeMutablePointer<sqlite3_vtab_cursor>?) -> Entries {
    UnsafeMutableRawPointer(cursor!).assumingMemoryBound(to: Cursor.self).pointee.state
      .takeUnretainedValue()
  }

  private static func connect(
    _ connection: OpaquePointer?, aux: UnsafeMutableRawPointer?,
    table: UnsafeMutablePointer<UnsafeMutablePointer<sqlite3_vtab>?>?
  ) -> Int32 {
    guard let aux, let table else { return SQLITE_ERROR }
    let build = Unmanaged<Build>.fromOpaque(aux)
    let positions = build.takeUnretainedValue().definition.fields.indices
    let columns =
      positions.map { "k\($0)" } + positions.map { "v\($0)" }
      + ["id HIDDEN", "rev HIDDEN", "body HIDDEN"]
    let status = sqlite3_declare_vtab(
      connection, "CREATE TABLE x(" + columns.joined(separator: ", ") + ")")
    guard status == SQLITE_OK else { return status }
    let pointer = UnsafeMutablePointer<Table>.allocate(capacity: 1)
    pointer.initialize(to: Table(build: build))
    table.pointee = UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: sqlite3_vtab.self)
    return SQLITE_OK
  }

  private static func build(_ table: UnsafeMutablePointer<sqlite3_vtab>?) -> Build {
    UnsafeMutableRawPointer(table!).assumingMemoryBound(to: Table.self).pointee.build
      .takeUnretainedValue()
  }

  /// The plan: the table needs all three of `id`, `rev` and `body` equal to known values
  /// (the outer loop's document); SQLite is told that any other plan cannot be.
  private static func bestIndex(
    _ table: UnsafeMutablePointer<sqlite3_vtab>?, _ info: UnsafeMutablePointer<sqlite3_index_info>?
  ) -> Int32 {
    guard let info else { return SQLITE_ERROR }
    // Columns: k…, v…, then id, rev and body.
    let hidden = Int32(2 * build(table).definition.fields.count)
    var used: Set<Int32> = []
    for position in 0..<Int(info.pointee.nConstraint) {
      let constraint = info.pointee.aConstraint[position]
      let argument = constraint.iColumn - hidden
      guard (0..<3).contains(argument), constraint.usable != 0,
        constraint.op == UInt8(SQLITE_INDEX_CONSTRAINT_EQ), !used.contains(argument)
      else { continue }
      used.insert(argument)
      info.pointee.aConstraintUsage[position].argvIndex = argument + 1
      info.pointee.aConstraintUsage[position].omit = 1
    }
    guard used.count == 3 else { return SQLITE_CONSTRAINT }
    info.pointee.estimatedCost = 1
    info.pointee.estimatedRows = 1
    return SQLITE_OK
  }

  /// Computes the entries of the document `arguments` hold (id, rev, body).
  private static func filter(
    _ cursor: UnsafeMutablePointer<sqlite3_vtab_cursor>, _ count: Int,
    _ arguments: UnsafeMutablePointer<OpaquePointer?>?
  ) -> Int32 {
    let entries = entries(cursor)
    let build = entries.build
    // Worked on outside the class (whose every property access is checked).
    var buffers = Buffers()
    swap(&buffers, &entries.buffers)
    defer { swap(&buffers, &entries.buffers) }
    entries.row = 0
    entries.rows = 0
    guard count == 3, let arguments else { return SQLITE_ERROR }
    let empty = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    let body = RawStatement.bytes(ofArgument: arguments[2]) ?? empty
    func id() -> String {
      String(decoding: RawStatement.bytes(ofArgument: arguments[0]) ?? empty, as: UTF8.self)
    }
    do {
      if let paths = build.paths,
        let rows = try scan(body, paths, build, &buffers, documentID: id)
      {
        entries.rows = rows
      } else {
        entries.rows = try parse(
          body, id: id(),
          rev: String(
            decoding: RawStatement.bytes(ofArgument: arguments[1]) ?? empty, as: UTF8.self),
          build, &buffers)
      }
      if entries.rows > 1 { build.multiDocuments += 1 }
      return SQLITE_OK
    } catch {
      if build.error == nil { build.error = error }
      let message = "\(error)"
      let copy = sqlite3_malloc(Int32(message.utf8.count + 1))
      if let copy {
        message.withCString { copy.copyMemory(from: $0, byteCount: message.utf8.count + 1) }
      }
      cursor.pointee.pVtab.pointee.zErrMsg = copy?.assumingMemoryBound(to: CChar.self)
      return SQLITE_ERROR
    }
  }

  /// The entries of a document whose fields ``JSONScanner`` finds (one cell for a missing
  /// field or a scalar or object, keyed and covered by its text; a cell per entry for an
  /// array, parsed alone); returns how many rows, or nil for a document that must be parsed
  /// whole.
  private static func scan(
    _ body: UnsafeBufferPointer<UInt8>, _ paths: JSONScanner.Paths, _ build: Build,
    _ buffers: inout Buffers, documentID: () -> String
  ) throws -> Int? {
    buffers.bytes.removeAll(keepingCapacity: true)
    buffers.fieldCells.removeAll(keepingCapacity: true)
    buffers.fieldEnds.removeAll(keepingCapacity: true)
    paths.lookUp(in: body, into: &buffers.lookups)
    var single = true
    for lookup in buffers.lookups {
      switch lookup {
      case .unsupported:
        return nil
      case .missing:
        buffers.fieldCells.append(missing(&buffers.bytes))
      case .value(let span):
        let text = UnsafeBufferPointer(rebasing: body[span])
        if text.first == UInt8(ascii: "[") {
          guard let array = try? JSONParser.parse(text) else { return nil }
          let keys = IndexKeys.keys(candidates: [array])
          single = single && keys.count == 1
          for entry in keys { buffers.fieldCells.append(cell(entry, &buffers.bytes)) }
        } else {
          let keyStart = Int32(buffers.bytes.count)
          if !CollationKey.appendPlain(jsonText: text, to: &buffers.bytes) {
            guard let value = try? JSONParser.parse(text) else { return nil }
            CollationKey.append(value, to: &buffers.bytes)
          }
          let keyEnd = Int32(buffers.bytes.count)
          buffers.bytes.append(contentsOf: text)
          buffers.fieldCells.append(
            Cell(
              keyStart: keyStart, keyEnd: keyEnd, valueStart: keyEnd,
              valueEnd: Int32(buffers.bytes.count)))
        }
      }
      buffers.fieldEnds.append(buffers.fieldCells.count)
    }
    if single {
      swap(&buffers.cells, &buffers.fieldCells)
      return 1
    }
    // The Cartesian product, the first field varying slowest (as IndexKeys.rows).
    var counts: [Int] = []
    var start = 0
    for end in buffers.fieldEnds {
      counts.append(end - start)
      start = end
    }
    let rows = try IndexKeys.rowCount(
      counts, documentID: documentID(), indexName: build.definition.name)
    buffers.cells.removeAll(keepingCapacity: true)
    for row in 0..<rows {
      var rest = row
      var fieldStart = 0
      var rowCells: [Cell] = []
      for (field, end) in buffers.fieldEnds.enumerated() {
        let stride = counts[(field + 1)...].reduce(1, *)
        rowCells.append(buffers.fieldCells[fieldStart + rest / stride])
        rest %= stride
        fieldStart = end
      }
      buffers.cells.append(contentsOf: rowCells)
    }
    return rows
  }

  /// The entries of a document parsed whole: ``StoredIndex/rows(_:)``, as writes make them
  /// (none when a partial index's filter does not match it); returns how many rows.
  private static func parse(
    _ body: UnsafeBufferPointer<UInt8>, id: String, rev: String, _ build: Build,
    _ buffers: inout Buffers
  ) throws -> Int {
    buffers.bytes.removeAll(keepingCapacity: true)
    buffers.cells.removeAll(keepingCapacity: true)
    let document = Document(
      id: id, rev: try DocumentReader.storedRevision(rev, documentID: id),
      body: try DocumentReader.parseBody(body, documentID: id))
    let rows = try build.index.rows(JSON.object(document.json))
    for row in rows {
      for entry in row { buffers.cells.append(cell(entry, &buffers.bytes)) }
    }
    return rows.count
  }

  private static func missing(_ bytes: inout [UInt8]) -> Cell {
    let keyStart = Int32(bytes.count)
    bytes.append(contentsOf: StoredIndex.missingKey)
    return Cell(keyStart: keyStart, keyEnd: Int32(bytes.count), valueStart: -1, valueEnd: -1)
  }

  /// Writes an entry's key and value (as JSON text).
  private static func cell(_ entry: IndexKeys.Entry, _ bytes: inout [UInt8]) -> Cell {
    guard let key = entry.key, let value = entry.value else { return missing(&bytes) }
    let keyStart = Int32(bytes.count)
    bytes.append(contentsOf: key)
    let keyEnd = Int32(bytes.count)
    JSONWriter.write(value, into: &bytes)
    return Cell(
      keyStart: keyStart, keyEnd: keyEnd, valueStart: keyEnd, valueEnd: Int32(bytes.count))
  }

  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  private static func column(_ entries: Entries, _ context: OpaquePointer?, _ column: Int) {
    let fields = entries.build.definition.fields.count
    guard column < 2 * fields, entries.row < entries.rows else {
      sqlite3_result_null(context)
      return
    }
    let cell = entries.buffers.cells[entries.row * fields + column % fields]
    entries.buffers.bytes.withUnsafeBufferPointer { bytes in
      let start = UnsafeRawPointer(bytes.baseAddress!)
      if column < fields {
        sqlite3_result_blob(
          context, start + Int(cell.keyStart), cell.keyEnd - cell.keyStart, transient)
      } else if cell.valueStart < 0 {
        sqlite3_result_null(context)
      } else {
        sqlite3_result_text(
          context, (start + Int(cell.valueStart)).assumingMemoryBound(to: CChar.self),
          cell.valueEnd - cell.valueStart, transient)
      }
    }
  }
}
