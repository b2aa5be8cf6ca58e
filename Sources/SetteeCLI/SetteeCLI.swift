import ArgumentParser
import Foundation
import SetteeCore

/// The `settee` command-line tool.
public enum SetteeCLI {
  /// Runs the tool with `arguments` (without the program name) and returns the exit status:
  /// 0 on success, 1 for an error (printed as JSON on stderr), 2 for a usage error.
  public static func main(_ arguments: [String]) -> Int32 {
    do {
      var command = try SetteeCommand.parseAsRoot(arguments)
      try command.run()
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
        Console.error(
          name: "usage", reason: SetteeCommand.message(for: error) + " (see 'settee help')")
        return 2
      }
      if let exit = error as? ExitCode { return exit.rawValue }
      Console.error(name: "error", reason: SetteeCommand.message(for: error))
      return 1
    }
  }
}

struct SetteeCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "settee",
    abstract: "An embedded JSON document database on SQLite.",
    discussion:
      "Documents live in one SQLite file (--db, default ./settee.db), in named collections (--collection, default _default). JSON shapes follow CouchDB's HTTP bodies.",
    subcommands: [
      DemoCommand.self, ImportCommand.self, ExportCommand.self, GetCommand.self,
      PutCommand.self, DeleteCommand.self, ChangesCommand.self, IndexCommand.self, FindCommand.self,
      ExplainCommand.self, BenchCommand.self,
    ]
  )

  /// `--db` and `--collection` given before the subcommand (`settee --db x.db get id`).
  @OptionGroup var options: GlobalOptions
}
