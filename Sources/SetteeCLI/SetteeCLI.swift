import ArgumentParser
import Foundation
import SetteeCore

/// The `settee` command-line tool.
public enum SetteeCLI {
  /// Runs the tool with the arguments as the operating system gave them (bytes, without the
  /// program name). An argument that is not valid UTF-8 is refused with a typed error that
  /// names it, rather than having its bad bytes replaced with U+FFFD.
  public static func main(rawArguments: [[UInt8]]) async -> Int32 {
    var arguments: [String] = []
    for (index, bytes) in rawArguments.enumerated() {
      guard let argument = String(validatingUTF8: bytes) else {
        let offset = firstInvalidUTF8Offset(bytes) ?? 0
        Console.error(
          SetteeError(
            .invalidArgument,
            "argument \(index + 1) is not valid UTF-8 (byte 0x\(String(bytes[offset], radix: 16, uppercase: true)) at byte offset \(offset))"
          ))
        return 1
      }
      arguments.append(argument)
    }
    return await main(arguments)
  }

  /// The offset of the first byte that does not belong to a valid UTF-8 sequence.
  static func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int? {
    var offset = 0
    var decoder = UTF8()
    var iterator = bytes.makeIterator()
    while true {
      switch decoder.decode(&iterator) {
      case .scalarValue(let scalar): offset += UTF8.width(scalar)
      case .emptyInput: return nil
      case .error: return min(offset, bytes.count - 1)
      }
    }
  }

  /// Runs the tool with `arguments` (without the program name) and returns the exit status:
  /// 0 on success, 1 for an error (printed as JSON on stderr), 2 for a usage error.
  ///
  /// Commands that wait on async work (`serve`, `replicate`, `changes`) are
  /// `AsyncParsableCommand`s and are awaited; the others run as they are.
  public static func main(_ arguments: [String]) async -> Int32 {
    NetworkCommands.arguments.withLock { $0 = arguments }
    do {
      // `settee help serve`: the help of the command that runs in settee-net.
      if arguments.count >= 2, arguments[0] == "help",
        let command = NetworkCommands.commands.withLock({ $0 }).first(where: {
          $0.configuration.commandName == arguments[1]
        }), command is any HandOverCommand.Type
      {
        try NetworkCommands.handOver(
          arguments[1], arguments: [arguments[1], "--help"] + arguments.dropFirst(2))
      }
      var command = try SetteeCommand.parseAsRoot(arguments)
      if var asynchronous = command as? any AsyncParsableCommand {
        try await asynchronous.run()
      } else {
        try command.run()
      }
      return 0
    } catch let error as SetteeError {
      Console.error(error)
      return 1
    } catch {
      // Help, version and usage errors from ArgumentParser, or a ValidationError.
      let code = SetteeCommand.exitCode(for: error)
      if code == .success {
        Console.out(SetteeCommand.fullMessage(for: error) + "\n")
        return 0
      }
      if code == .validationFailure {
        // ArgumentParser quotes the offending argument whole, which may be megabytes.
        var message = SetteeCommand.message(for: error)
        if message.unicodeScalars.count > 500 {
          message = String(String.UnicodeScalarView(message.unicodeScalars.prefix(500))) + "…"
        }
        Console.error(name: "usage", reason: message + " (see 'settee help')")
        return 2
      }
      if let exit = error as? ExitCode { return exit.rawValue }
      Console.error(name: "error", reason: SetteeCommand.message(for: error))
      return 1
    }
  }
}

package struct SetteeCommand: ParsableCommand {
  package static var configuration: CommandConfiguration {
    CommandConfiguration(
    commandName: "settee",
    abstract: "An embedded JSON document database on SQLite.",
    discussion:
      "Documents live in one SQLite file (--db, default ./settee.db), in named collections (--collection, default _default). JSON shapes follow CouchDB's HTTP bodies.",
    version: SetteeVersion.string,
    subcommands: [
      DemoCommand.self, ImportCommand.self, ExportCommand.self, GetCommand.self,
      PutCommand.self, DeleteCommand.self, ChangesCommand.self, ConflictsCommand.self,
      ResolveCommand.self, RevsLimitCommand.self, LocalCommand.self, AttachmentCommand.self,
      PurgeCommand.self, CompactCommand.self,
      RevsDiffCommand.self, IndexCommand.self, FindCommand.self,
      ExplainCommand.self, WhereCommand.self, WhereIndexCommand.self, QueryableCommand.self,
      DefaultsCommand.self, AliasCommand.self, ViewCommand.self, AllDocsCommand.self,
      MetadataCommand.self,
      CheckCommand.self, RebuildCommand.self, DescribeCommand.self, BackupCommand.self,
    ] + NetworkCommands.commands.withLock { $0 }
    )
  }

  /// `--db` and `--collection` given before the subcommand (`settee --db x.db get id`).
  @OptionGroup package var options: GlobalOptions

  package init() {}
}
