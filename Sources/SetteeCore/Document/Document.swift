/// A stored JSON document: its id, revision, deletion flag and body.
///
/// The body holds every member but the special ones (`_id`, `_rev`, `_deleted`), in the
/// order they were written.
public struct Document: Sendable, Hashable {
  /// The document id.
  public var id: String
  /// The current revision; `nil` for a document not stored yet.
  public var rev: RevisionID?
  /// Whether this revision is a deletion (a tombstone).
  public var isDeleted: Bool
  /// Every member but `_id`, `_rev` and `_deleted`, in written order.
  public var body: JSONObject
  /// The document's other live leaves (CouchDB's `_conflicts`) when a read asked for them
  /// (a find with ``FindQuery/conflicts``); empty otherwise, and never written.
  public var conflicts: [RevisionID] = []
  /// The revision's attachments. On a write, `nil` keeps those of the revision edited (as
  /// stubs) and a list states them all: inline ones are stored, stubs keep the edited
  /// revision's, and any other goes (`[]` removes every one). A deletion or a revision
  /// from a peer has exactly those listed. Reads of a document (`get`, `find`) leave it
  /// `nil`; reads that ask for attachments fill it.
  public var attachments: [Attachment]?
  /// What ``json`` is when set: a result of a find in CouchDB's dialect with `fields`,
  /// which CouchDB gives without `_id` and `_rev` unless they are asked for
  /// (``MangoMatcher/extract(_:fields:)``).
  package var projection: JSONObject?

  /// A document from its parts (nothing is checked; writes check it).
  public init(id: String, rev: RevisionID? = nil, isDeleted: Bool = false, body: JSONObject = [:]) {
    self.id = id
    self.rev = rev
    self.isDeleted = isDeleted
    self.body = body
  }

  /// A member of the body, or `_id` / `_rev`.
  public subscript(key: String) -> JSON? {
    switch key {
    case "_id": .string(id)
    case "_rev": rev.map { .string($0.description) }
    default: body[key]
    }
  }

  /// The value at a dotted path (`"pet.species"`, `"tags.0"`), `_id` and `_rev` included;
  /// `nil` when the path leads nowhere (see ``JSON/subscript(path:)``).
  public subscript(path path: String) -> JSON? {
    JSON.object(json)[path: path]
  }

  /// The document as JSON: `_id` and `_rev` first, then `_deleted` for a tombstone, then
  /// the body's members, then `_attachments` and `_conflicts` when it has any (CouchDB's
  /// shape).
  public var json: JSONObject {
    if let projection { return projection }
    var members = [JSONObject.Member(key: "_id", value: .string(id))]
    if let rev { members.append(.init(key: "_rev", value: .string(rev.description))) }
    if isDeleted { members.append(.init(key: "_deleted", value: .bool(true))) }
    members.append(contentsOf: body.members)
    if let attachments, !attachments.isEmpty {
      members.append(
        .init(
          key: "_attachments",
          value: .object(JSONObject(attachments.map { ($0.name, .object($0.json)) }))))
    }
    if !conflicts.isEmpty {
      members.append(
        .init(key: "_conflicts", value: .array(conflicts.map { .string($0.description) })))
    }
    return JSONObject(uniqueMembers: members)
  }

  /// The document's JSON text, as ``json`` prints.
  public func jsonBytes() -> [UInt8] {
    JSONWriter.bytes(.object(json))
  }
}

extension Document: CustomStringConvertible {
  /// The document as JSON, `_id` and `_rev` first (what `print(document)` shows).
  public var description: String { JSONWriter.string(.object(json)) }
}
