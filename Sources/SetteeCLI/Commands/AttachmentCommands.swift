import ArgumentParser
import Foundation
import Settee
import SetteeCore

struct AttachmentCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "attachment",
    abstract: "Write, read and remove a document's attachments (streamed, any size).",
    subcommands: [
      AttachmentPutCommand.self, AttachmentGetCommand.self, AttachmentDeleteCommand.self,
      AttachmentListCommand.self,
    ])
}

struct AttachmentPutCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "put",
    abstract: "Add or replace an attachment from a file (or - for standard input).",
    discussion:
      #"Makes a new revision of the document (created with an empty body when it does not exist and no --rev is given). Prints {"ok":true,"id":…,"rev":…}."#
  )

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The document id.") var id: String
  @Argument(help: "The attachment name.") var name: String
  @Argument(help: "The file to read, or - for standard input.") var file: String
  @Option(help: "The revision edited (the document's current one, or any leaf).") var rev: String?
  @Option(help: "The MIME type.") var contentType = "application/octet-stream"

  func run() throws {
    let revision = try rev.map { try RevisionID(parsing: $0) }
    try Document.validateID(id)
    try Attachment.validateName(name, documentID: id)
    let collection = try local.merged(with: root.options).openCollection(readOnly: false)
    let result: WriteResult
    if file == "-" {
      let input = try InputFile(path: "-")
      result = try collection.putAttachment(
        name, to: id, rev: revision, contentType: contentType
      ) { try input.read(upTo: 256 * 1024) }
    } else {
      result = try collection.putAttachment(
        name, to: id, rev: revision, contentType: contentType,
        contentsOf: URL(fileURLWithPath: file))
    }
    Console.outJSON(result.couchJSON)
  }
}

struct AttachmentGetCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "get",
    abstract: "Write an attachment's bytes (as stored) to standard output, streamed.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The document id.") var id: String
  @Argument(help: "The attachment name.") var name: String
  @Option(help: "A leaf revision (the winner by default).") var rev: String?

  func run() throws {
    let revision = try rev.map { try RevisionID(parsing: $0) }
    let collection = try local.merged(with: root.options).openCollection(readOnly: true)
    guard try collection.readAttachment(name, of: id, rev: revision, { Console.out($0) }) != nil
    else {
      throw SetteeError(
        .notFound, "missing: document \(JSON.string(id)) has no attachment \(JSON.string(name))",
        documentID: id)
    }
  }
}

struct AttachmentDeleteCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "delete", abstract: "Remove an attachment (a new revision of the document).")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The document id.") var id: String
  @Argument(help: "The attachment name.") var name: String
  @Option(help: "The revision edited.") var rev: String

  func run() throws {
    let revision = try RevisionID(parsing: rev)
    let result = try local.merged(with: root.options).openCollection(readOnly: false)
      .deleteAttachment(name, from: id, rev: revision)
    Console.outJSON(result.couchJSON)
  }
}

struct AttachmentListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list",
    abstract: "Print a revision's attachments as CouchDB's \"_attachments\" stubs.")

  @OptionGroup var local: GlobalOptions
  @ParentCommand var root: SetteeCommand
  @Argument(help: "The document id.") var id: String
  @Option(help: "A leaf revision (the winner by default).") var rev: String?

  func run() throws {
    let revision = try rev.map { try RevisionID(parsing: $0) }
    let attachments = try local.merged(with: root.options).openCollection(readOnly: true)
      .attachments(of: id, rev: revision)
    Console.outJSON(.object(JSONObject(attachments.map { ($0.name, .object($0.json)) })))
  }
}
