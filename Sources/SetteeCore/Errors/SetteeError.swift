/// The one error type Settee throws.
///
/// Match on the code to handle a kind of failure:
///
/// ```swift
/// do {
///   try people.put(["_id": "mike", "age": 13])
/// } catch SetteeError.Code.conflict {
///   // someone else updated "mike" first
/// }
/// ```
public struct SetteeError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What went wrong, as a value that can be matched and that can grow new cases.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Base: Hashable, Sendable, CaseIterable {
      case invalidJSON, invalidDocument, invalidID, invalidRevision, reservedField
      case documentTooLarge, nestingTooDeep, conflict, notFound, invalidArgument
      case storage, io, invalidQuery, invalidIndex, noUsableIndex
      case busy, readOnly, notSetteeDatabase, corruption, limitExceeded, viewNotRegistered
      case uniqueViolation, missingStub
    }
    private let base: Base
    private init(_ base: Base) { self.base = base }

    /// Every code there is (tables that map codes, such as the server's statuses, are
    /// tested against it).
    package static var all: [Code] { Base.allCases.map(Code.init) }

    /// The input is not well-formed JSON.
    public static let invalidJSON = Code(.invalidJSON)
    /// The input is JSON but not a valid document (not an object, a bad special member).
    public static let invalidDocument = Code(.invalidDocument)
    /// A document id is empty, not a string, or reserved.
    public static let invalidID = Code(.invalidID)
    /// A revision is not of the form `N-<hex digest>`.
    public static let invalidRevision = Code(.invalidRevision)
    /// A top-level field starts with `_` and is not one the engine knows.
    public static let reservedField = Code(.reservedField)
    /// A document is larger than ``DocumentLimits/maxDocumentBytes``.
    public static let documentTooLarge = Code(.documentTooLarge)
    /// A document nests deeper than ``DocumentLimits/maxNestingDepth``.
    public static let nestingTooDeep = Code(.nestingTooDeep)
    /// A write named a revision that is not the document's current one.
    public static let conflict = Code(.conflict)
    /// The document does not exist or is deleted.
    public static let notFound = Code(.notFound)
    /// An argument or option has a value Settee cannot use.
    public static let invalidArgument = Code(.invalidArgument)
    /// A selector, sort, projection or query option is malformed; the message names the
    /// operator and the field path.
    public static let invalidQuery = Code(.invalidQuery)
    /// An index definition is malformed, or clashes with an existing index of that name.
    public static let invalidIndex = Code(.invalidIndex)
    /// The query names an index (`use_index`) that does not exist or cannot serve it, or
    /// needs a kind of index (a TEXT index for `$text`) that the collection lacks.
    public static let noUsableIndex = Code(.noUsableIndex)
    /// Another connection or process held the write lock for longer than the configured
    /// busy timeout (``Database/Configuration/busyTimeout``); nothing was written.
    public static let busy = Code(.busy)
    /// A write to a database opened read-only, or to a file or directory the process may
    /// not write.
    public static let readOnly = Code(.readOnly)
    /// The file exists but is not a Settee database (another SQLite database, or not
    /// SQLite at all); Settee left it untouched.
    public static let notSetteeDatabase = Code(.notSetteeDatabase)
    /// Stored data is damaged: a body that is not JSON, an index entry that does not match
    /// its document, or a page SQLite cannot read. The message names what is damaged.
    public static let corruption = Code(.corruption)
    /// The input is beyond one of Settee's documented limits (fields in an index, path
    /// components, regular expression work); the message names the limit.
    public static let limitExceeded = Code(.limitExceeded)
    /// A view whose map (or custom reduce) function is Swift code was queried in a process
    /// that has not registered that code, and the query needs it (to catch up, or to
    /// reduce); `stale: ok` queries of its map rows still work.
    public static let viewNotRegistered = Code(.viewNotRegistered)
    /// A write would give two live documents the same values in a unique index of the
    /// collection's `where` face (or such an index was asked for over documents that
    /// already do); the message names the index, the value and the documents. Nothing was
    /// written.
    public static let uniqueViolation = Code(.uniqueViolation)
    /// A revision names an attachment by a stub (`"stub": true`) that neither the revision
    /// it edits nor the file holds (CouchDB's `missing_stub`). Nothing was written.
    public static let missingStub = Code(.missingStub)
    /// SQLite reported an error.
    public static let storage = Code(.storage)
    /// Reading or writing a file failed.
    public static let io = Code(.io)

    /// The CouchDB-style `error` name used in JSON error bodies.
    public var name: String {
      switch base {
      case .invalidJSON, .invalidArgument, .nestingTooDeep: "bad_request"
      case .invalidDocument, .reservedField: "doc_validation"
      case .invalidID: "illegal_docid"
      case .invalidRevision: "bad_request"
      case .documentTooLarge: "document_too_large"
      case .conflict: "conflict"
      case .notFound: "not_found"
      case .storage: "storage_error"
      case .io: "io_error"
      case .invalidQuery: "invalid_query"
      case .invalidIndex: "invalid_index"
      case .noUsableIndex: "no_usable_index"
      case .busy: "busy"
      case .readOnly: "read_only"
      case .notSetteeDatabase: "not_a_settee_database"
      case .corruption: "corruption"
      case .viewNotRegistered: "view_not_registered"
      case .limitExceeded: "limit_exceeded"
      case .uniqueViolation: "unique_violation"
      case .missingStub: "missing_stub"
      }
    }

    public var description: String {
      switch base {
      case .invalidJSON: "invalidJSON"
      case .invalidDocument: "invalidDocument"
      case .invalidID: "invalidID"
      case .invalidRevision: "invalidRevision"
      case .reservedField: "reservedField"
      case .documentTooLarge: "documentTooLarge"
      case .nestingTooDeep: "nestingTooDeep"
      case .conflict: "conflict"
      case .notFound: "notFound"
      case .invalidArgument: "invalidArgument"
      case .storage: "storage"
      case .io: "io"
      case .invalidQuery: "invalidQuery"
      case .invalidIndex: "invalidIndex"
      case .noUsableIndex: "noUsableIndex"
      case .busy: "busy"
      case .readOnly: "readOnly"
      case .notSetteeDatabase: "notSetteeDatabase"
      case .corruption: "corruption"
      case .limitExceeded: "limitExceeded"
      case .viewNotRegistered: "viewNotRegistered"
      case .uniqueViolation: "uniqueViolation"
      case .missingStub: "missingStub"
      }
    }

    /// Lets `catch SetteeError.Code.conflict` match a thrown ``SetteeError``.
    public static func ~= (code: Code, error: any Error) -> Bool {
      (error as? SetteeError)?.code == code
    }

    /// The same match where the thrown type is known to be ``SetteeError`` (typed throws).
    public static func ~= (code: Code, error: SetteeError) -> Bool {
      error.code == code
    }
  }

  /// Where in the input the problem is.
  public struct Location: Hashable, Sendable, CustomStringConvertible {
    /// 1-based line in a text input (a file, a JSON string), if known.
    public var line: Int?
    /// 1-based column (in bytes) on that line, if known.
    public var column: Int?
    /// 0-based position of the record in a batch or import, if known.
    public var record: Int?

    /// A location; any part may be unknown.
    package init(line: Int? = nil, column: Int? = nil, record: Int? = nil) {
      self.line = line
      self.column = column
      self.record = record
    }

    public var description: String {
      var parts: [String] = []
      if let record { parts.append("record \(record)") }
      if let line { parts.append("line \(line)") }
      if let column { parts.append("column \(column)") }
      return parts.joined(separator: ", ")
    }
  }

  /// What kind of failure, to match on.
  public var code: Code
  /// A sentence for people; it quotes the offending input.
  public var message: String
  /// The document id concerned, if any.
  public var documentID: String?
  /// Where in the input the problem is, when it came from text.
  public var location: Location?
  /// The underlying error's description (for example SQLite's message), if any.
  public var cause: String?
  /// The error Settee caught and turned into this one (GRDB's `DatabaseError` for SQLite's,
  /// Foundation's for files), if any: for logs and for code that needs more than ``code``.
  /// It takes no part in comparing errors.
  public var underlyingError: (any Error)?
  /// CouchDB's `error` name for this failure, where a query in CouchDB's dialect
  /// (``QueryDialect/couchDB``) fails as CouchDB fails it (`bad_arg`, `invalid_operator`,
  /// `unsupported_mixed_sort`, …); `nil` where ``Code/name`` says it.
  public var couchDBError: String?

  /// An error with a code and a message that quotes the offending input.
  ///
  /// - Parameters:
  ///   - cause: what the underlying error says, shown in ``reason``.
  ///   - underlyingError: the error this one stands for, if any.
  public init(
    _ code: Code, _ message: String, documentID: String? = nil, location: Location? = nil,
    cause: String? = nil, underlyingError: (any Error)? = nil
  ) {
    self.code = code
    self.message = message
    self.documentID = documentID
    self.location = location
    self.cause = cause
    self.underlyingError = underlyingError
  }

  public static func == (lhs: SetteeError, rhs: SetteeError) -> Bool {
    lhs.code == rhs.code && lhs.message == rhs.message && lhs.documentID == rhs.documentID
      && lhs.location == rhs.location && lhs.cause == rhs.cause
      && lhs.couchDBError == rhs.couchDBError
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(code)
    hasher.combine(message)
    hasher.combine(documentID)
    hasher.combine(location)
    hasher.combine(cause)
    hasher.combine(couchDBError)
  }

  /// The message with its location, as shown to users.
  public var reason: String {
    var text = message
    if let location, location != Location() { text += " (at \(location))" }
    if let cause { text += ": \(cause)" }
    return text
  }

  public var description: String { "\(couchDBError ?? code.name): \(reason)" }

  /// A query error in CouchDB's dialect: code `invalidQuery` (`noUsableIndex` for
  /// `no_usable_index`), with CouchDB's error name.
  package static func couchDB(_ name: String, _ message: String) -> SetteeError {
    var error = SetteeError(name == "no_usable_index" ? .noUsableIndex : .invalidQuery, message)
    error.couchDBError = name
    return error
  }

  /// Returns this error with the position of the record in a batch or import added.
  package func at(record: Int? = nil, line: Int? = nil) -> SetteeError {
    var copy = self
    var location = copy.location ?? Location()
    if let record { location.record = record }
    if let line { location.line = line }
    copy.location = location
    return copy
  }
}
