import Settee
import SetteeCore

/// One side of a replication, as CouchDB's replication protocol uses it: a collection of a
/// local file (``LocalPeer``) or a database at a URL (``HTTPPeer``).
protocol ReplicationPeer: Sendable {
  /// What names the peer in a replication id: the URL without credentials, or the file's
  /// uuid and the collection's name.
  func identity() async throws -> String
  /// How messages and logs name the peer (never with credentials).
  var label: String { get }
  /// Whether the database exists.
  func exists() async throws -> Bool
  /// Creates the database (`create_target`); one that exists is left as it is.
  func create() async throws
  /// A local document (`_local/…`) in CouchDB's shape, or `nil`.
  func localDocument(_ id: String) async throws -> JSONObject?
  /// Writes a local document (its `_rev`, when given, is the one read).
  func putLocalDocument(_ document: JSONObject) async throws
  /// Up to `limit` changes after `since` that pass `filter`, every leaf listed
  /// (`style=all_docs`); with `wait`, a long poll that waits that long for a first change.
  func changes(since: JSON, limit: Int, filter: ReplicationFilter, wait: Duration?)
    async throws -> ChangesPage
  /// CouchDB's `_revs_diff`.
  func revsDiff(_ offered: [String: [RevisionID]]) async throws -> [String: RevisionDifference]
  /// The asked revisions (or the leaves that follow them) with `_revisions`; `withData`,
  /// their attachments' data too, except attachments the target has from
  /// `attachmentsSince`; without, every attachment as a stub (with its `length` and
  /// `revpos`).
  func documents(_ wanted: [WantedRevisions], withData: Bool) async throws -> [BulkDocument]
  /// Documents a source sent, made ready for ``write(_:)`` ahead of it (a file reads each
  /// text into its stored form here, outside its write transaction; a URL sends the texts
  /// as they are, and its server checks them).
  ///
  /// - Throws: ``BulkDocumentError`` naming the first text that is not a JSON object.
  func prepare(_ documents: [BulkDocument]) throws -> [BulkDocument]
  /// Writes documents as the source has them (`new_edits: false`); the refused ones.
  func write(_ documents: [BulkDocument]) async throws -> [WriteFailure]
  /// The asked revision (or the leaves that follow it) with `_revisions` and the data of
  /// the attachments the target lacks (after `attachmentsSince`) in a temporary file: a
  /// document too large to hold (``SpooledDocument``).
  func spool(_ wanted: WantedRevisions) async throws -> [SpooledDocument]
  /// Writes a spooled document as the source has it (`new_edits: false`), its attachments
  /// read from its file as they are sent; `nil` when written, the refusal otherwise.
  func write(_ document: SpooledDocument) async throws -> WriteFailure?
  /// Makes what was written durable (`_ensure_full_commit`).
  func ensureFullCommit() async throws
  /// How many revisions were asked of `_bulk_get` and how many it gave, since the peer was
  /// made (CouchDB's `bulk_get_attempts` and `bulk_get_docs`); a file's are zero.
  var bulkGetCounts: BulkGetCounts { get }
}

/// What a replication copies: every document, the listed ids, or what a Mango selector
/// matches (CouchDB's `_doc_ids` and `_selector` filters).
public enum ReplicationFilter: Sendable, Hashable {
  /// Every document.
  case none
  /// The documents with these ids (CouchDB's `doc_ids`).
  case documentIDs([String])
  /// The live documents this Mango selector matches (CouchDB's `selector`).
  case selector(JSONObject)
  /// The changes a design document's JavaScript filter function keeps (CouchDB's
  /// `filter: "d/f"`), given `queryParameters` as `req.query` (CouchDB's `query_params`);
  /// or, named `"_view"`, the documents the map function of the view `queryParameters`'
  /// `view` (`"d/v"`) emits a row for. An HTTP source runs it; a Settee file source runs
  /// it on JavaScriptCore.
  case design(String, queryParameters: JSONObject)

  /// `query_params` as a filter sees them in `req.query`: strings, as CouchDB passes
  /// them in a query string (a value that is not a string is its JSON text).
  public static func queryParameters(_ object: JSONObject) -> JSONObject {
    var parameters: JSONObject = [:]
    for member in object {
      parameters[member.key] =
        member.value.stringValue.map(JSON.string) ?? .string(JSONWriter.string(member.value))
    }
    return parameters
  }

  /// The filter as it enters the replication id. (CouchDB's id also digests the filter
  /// function's source; Settee's names the function and its parameters.)
  var json: JSON {
    switch self {
    case .none: return .null
    case .documentIDs(let ids): return ["doc_ids": .array(ids.sorted().map(JSON.string))]
    case .selector(let selector): return ["selector": .object(selector)]
    case .design(let name, let parameters):
      return ["filter": .string(name), "query_params": .object(parameters)]
    }
  }
}

/// One document's changes in a page of the feed.
struct ChangeRow: Sendable {
  var id: String
  var seq: JSON
  /// Every leaf, the winner first.
  var revs: [RevisionID]
  var deleted: Bool
}

/// A page of the changes feed: its rows, and the sequence to continue from.
struct ChangesPage: Sendable {
  var rows: [ChangeRow]
  var lastSeq: JSON
  /// How many changes remain after this page, when the peer says.
  var pending: Int?
}

/// Revisions of one document to fetch, and the revisions whose attachments the target
/// already holds.
struct WantedRevisions: Sendable {
  var id: String
  var revs: [RevisionID]
  var attachmentsSince: [RevisionID]
}

/// A text a source sent as a document that is not a JSON object: its place in the batch,
/// and why.
struct BulkDocumentError: Error {
  var index: Int
  var reason: String
}

extension [BulkDocument] {
  /// Each text read into its stored form (``BulkDocument/init(text:limits:)``).
  func readTexts(limits: DocumentLimits) throws -> [BulkDocument] {
    try enumerated().map { index, document in
      guard case .text(let text) = document else { return document }
      do { return try BulkDocument(text: text, limits: limits) } catch {
        throw BulkDocumentError(index: index, reason: "\(error)")
      }
    }
  }
}

/// A document the target refused.
/// Revisions asked of `_bulk_get`, and revisions it gave.
struct BulkGetCounts: Sendable {
  var docs = 0
  var attempts = 0
}

/// A revision the target refused: which document, and the target's error and reason.
public struct ReplicationFailure: Sendable, Hashable {
  /// The document.
  public var id: String
  /// The target's error name (CouchDB's: `forbidden`, `missing_stub`, `too_large` …).
  public var error: String
  /// The target's reason.
  public var reason: String

  /// A refusal.
  public init(id: String, error: String, reason: String) {
    self.id = id
    self.error = error
    self.reason = reason
  }
}

struct WriteFailure: Sendable {
  var id: String
  var error: String
  var reason: String
}

/// Why a replication stopped or retries: the peer (never with credentials), and what it
/// answered or what went wrong on the way.
public struct ReplicationError: Error, Sendable, CustomStringConvertible {
  /// The peer, as ``ReplicationPeer/label`` names it.
  public var peer: String
  /// The HTTP status, when the peer answered.
  public var status: Int?
  /// CouchDB's error name (`not_found`, `unauthorized` …), or Settee's for what is not an
  /// answer (`unreachable`, `timeout`, `bad_response`).
  public var error: String
  /// What happened, in words.
  public var reason: String
  /// Whether it happened while the replication opened its databases (checked that they
  /// exist, made the target): CouchDB answers such a failure `404 db_not_found`.
  public var whileOpening = false

  /// Whether trying again later may succeed: the peer was unreachable, timed out, answered
  /// 5xx or 429, or sent something that is not CouchDB's answer.
  public var isTransient: Bool {
    if ["unreachable", "timeout", "bad_response"].contains(error) { return true }
    guard let status else { return false }
    return status >= 500 || status == 429 || status == 408
  }

  /// `peer: status error: reason`.
  public var description: String {
    "\(peer): \(status.map { "\($0) " } ?? "")\(error): \(reason)"
  }
}

extension BulkDocument {
  /// The document's JSON text: as the peer sent it, or printed.
  var text: [UInt8] {
    switch self {
    case .object(let object): JSONWriter.bytes(.object(object))
    case .encoded(_, let text), .text(let text): text
    }
  }

  /// Its `_id`, for reports.
  var id: String { idAndRev.id?.stringValue ?? "" }

  /// Its size in a request: the text a peer sent, or for a parsed document its
  /// attachments' base64 and a kilobyte for the rest (a document read from text has none:
  /// one with `_attachments` is parsed).
  var estimatedBytes: Int {
    switch self {
    case .encoded(_, let text), .text(let text): return text.count
    case .object(let object):
      var bytes = 1024
      for attachment in object["_attachments"]?.objectValue ?? [:] {
        bytes += attachment.value["data"]?.stringValue?.utf8.count ?? 0
      }
      return bytes
    }
  }
}

extension BulkDocument {
  /// More attachments with data than this in a document, or one larger than
  /// ``largeAttachment``, and a URL target is sent it on its own (CouchDB's replicator's
  /// limits).
  static let attachmentsInABatch = 8
  /// The largest attachment (bytes) a document written in a `_bulk_docs` batch carries.
  static let largeAttachment = 64 * 1024

  /// The document, when a URL target is sent it on its own as `multipart/related`: one
  /// with more than ``attachmentsInABatch`` attachments with data, or one over
  /// ``largeAttachment``.
  package var sentAlone: JSONObject? {
    guard let object = withAttachments,
      case .object(let attachments)? = object["_attachments"]
    else { return nil }
    var withData = 0
    for attachment in attachments {
      guard let data = attachment.value["data"]?.stringValue else { continue }
      withData += 1
      // Base64: four characters for three bytes, less the padding.
      let padding = data.utf8.reversed().prefix(2).filter { $0 == UInt8(ascii: "=") }.count
      if data.utf8.count / 4 * 3 - padding > Self.largeAttachment { return object }
    }
    return withData > Self.attachmentsInABatch ? object : nil
  }

  /// When the document names attachments the target lacks (stubs written after the newest
  /// of `since` it descends from, or any stub when it descends from none of them): its
  /// revision and how many bytes of attachment data it needs. `nil` for a document whose
  /// stubs the target can resolve, or without attachments.
  package func attachmentDataNeeded(since: (String) -> [RevisionID])
    -> (id: String, rev: RevisionID, bytes: Int)?
  {
    guard let object = withAttachments,
      case .object(let attachments)? = object["_attachments"], !attachments.isEmpty,
      let id = object["_id"]?.stringValue, let text = object["_rev"]?.stringValue,
      let rev = try? RevisionID(parsing: text)
    else { return nil }
    let held = Self.heldGeneration(rev, object["_revisions"], id: id, since: since(id))
    var bytes = 0
    var needed = false
    for attachment in attachments {
      guard attachment.value["stub"] == true || attachment.value["data"] == nil else {
        continue  // its data is here already
      }
      guard Self.writtenAt(attachment.value) > held else { continue }
      needed = true
      bytes +=
        attachment.value["encoded_length"]?.intValue ?? attachment.value["length"]?.intValue ?? 0
    }
    return needed ? (id, rev, bytes) : nil
  }

  /// The generation an attachment stub says its data was written at: its `revpos`, or
  /// "unknown" (never held) when it has none or 0 (what CouchDB keeps for a
  /// `new_edits: false` write that gave none), so that its data is fetched, not assumed.
  static func writtenAt(_ stub: JSON) -> Int {
    let revpos = stub["revpos"]?.intValue ?? 0
    return revpos > 0 ? revpos : Int.max
  }

  /// The newest generation of `since` that `rev` descends from by its `_revisions` (0 for
  /// none): the attachments written up to it the target holds already. Malformed
  /// `_revisions` are the target's to refuse; the revision alone counts then.
  static func heldGeneration(
    _ rev: RevisionID, _ revisions: JSON?, id: String, since: [RevisionID]
  ) -> Int {
    var ancestry: Set<RevisionID> = [rev]
    if let revisions, let history = try? Document.parseRevisions(revisions, documentID: id) {
      ancestry.formUnion(history)
    }
    return since.filter(ancestry.contains).map(\.generation).max() ?? 0
  }

  /// The document as an object when it may carry `_attachments` (a text is parsed only
  /// when it names them); `nil` when it cannot.
  private var withAttachments: JSONObject? {
    switch self {
    case .encoded: return nil  // read from text only without `_attachments`
    case .object(let parsed): return parsed
    case .text(let text):
      guard Self.mentionsAttachments(text), case .object(let parsed)? = try? JSONParser.parse(text)
      else { return nil }
      return parsed
    }
  }

  /// Whether a document's text holds the name `_attachments` (a quick look before parsing
  /// it: most documents have none).
  static func mentionsAttachments(_ text: [UInt8]) -> Bool {
    // Anchored on `_`, rare in JSON text where quotes are everywhere.
    text.withUnsafeBytes { $0.firstIndex(of: Array(#""_attachments""#.utf8), anchor: 1) != nil }
  }
}
