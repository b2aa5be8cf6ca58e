import SetteeCore

/// Why a design document is refused before it is written, in CouchDB's terms: its
/// `error` (`invalid_design_doc` for a member of the wrong type, `compilation_error` for
/// a view function that does not compile) and `reason`.
public struct DesignDocumentRefusal: Error, Sendable, Equatable {
  /// CouchDB's error name: `invalid_design_doc` or `compilation_error`.
  public var error: String
  /// What is wrong, naming the member or the view.
  public var reason: String
}

/// CouchDB's checks of a design document before it is stored: the members it reads have
/// the types it reads them as (CouchDB 3's `validate_ddoc_fields`), and the map and
/// reduce functions of a JavaScript design document compile. A design document CouchDB
/// refuses would otherwise be stored and fail on every query of its views.
public enum DesignDocumentCheck {
  /// A JSON type, as CouchDB names it in its refusals.
  enum Kind: String {
    case object, string, boolean, array

    func holds(_ value: JSON) -> Bool {
      switch (self, value) {
      case (.object, .object), (.string, .string), (.boolean, .bool), (.array, .array): true
      default: false
      }
    }
  }

  /// One step of a checked path: a member's name, or every member (`nil`), with the
  /// types its value may have.
  typealias Step = (name: String?, kinds: [Kind])

  /// The paths CouchDB checks; the map function's type depends on the language.
  static func paths(mapKinds: [Kind]?) -> [[Step]] {
    // `nil`: a language whose views are not CouchDB's (Settee's declarative ones, checked
    // by their own rules when they are defined): its views are not checked here.
    var paths: [[Step]] = [
      [("filters", [.object]), (nil, [.object, .string])],
      [("language", [.string])],
      [("lists", [.object]), (nil, [.object, .string])],
      [("options", [.object])],
      [("options", [.object]), ("include_design", [.boolean])],
      [("options", [.object]), ("local_seq", [.boolean])],
      [("options", [.object]), ("partitioned", [.boolean])],
      [("rewrites", [.string, .array])],
      [("shows", [.object]), (nil, [.object, .string])],
      [("updates", [.object]), (nil, [.object, .string])],
      [("validate_doc_update", [.string])],
    ]
    if let mapKinds {
      paths += [
        [("views", [.object]), ("lib", [.object])],
        [("views", [.object]), (nil, [.object]), ("reduce", [.string])],
        [("views", [.object]), (nil, [.object]), ("map", mapKinds)],
      ]
    }
    return paths
  }

  /// Checks `design` (a design document's members) as CouchDB checks it on a write.
  ///
  /// - Parameter timeLimit: how long compiling may take, in seconds.
  /// - Throws: ``DesignDocumentRefusal``. Compilation is checked only where JavaScriptCore
  ///   is available (``DesignFunctions/isAvailable``).
  public static func check(
    _ design: JSONObject, timeLimit: Double = DesignFunctions.defaultTimeLimit
  ) throws {
    let language = design["language"]?.stringValue ?? "javascript"
    let mapKinds: [Kind]? =
      switch language {
      case "javascript": [.string]
      case "query": [.object]
      default: nil  // Settee's declarative views and other languages define their own
      }
    for path in paths(mapKinds: mapKinds) {
      try check(.object(design), path[...], at: [])
    }
    guard language == "javascript", DesignFunctions.isAvailable,
      case .object(let views)? = design["views"]
    else { return }
    for member in views where member.key != "lib" {
      let name = member.key
      guard case .string(let map)? = member.value["map"] else { continue }
      do {
        _ = try DesignFunctions.compiled(
          ddoc: design, map: map, reduce: member.value["reduce"]?.stringValue,
          library: views["lib"] ?? .null, timeLimit: timeLimit, in: nil)
      } catch let error as SetteeError where error.code == .invalidArgument {
        let message =
          error.message.hasPrefix("compilation_error: ")
          ? String(error.message.dropFirst("compilation_error: ".count)) : error.message
        throw DesignDocumentRefusal(
          error: "compilation_error",
          reason: "Compilation of the map function in the '\(name)' view failed: \(message)")
      }
    }
  }

  /// Checks the members `steps` reach from `value` (a missing member passes).
  private static func check(_ value: JSON, _ steps: ArraySlice<[Step].Element>, at path: [String])
    throws
  {
    guard let step = steps.first, case .object(let object) = value else { return }
    let members: [(String, JSON)] =
      if let name = step.name { object[name].map { [(name, $0)] } ?? [] } else {
        object.map { ($0.key, $0.value) }
      }
    for (name, member) in members {
      let here = path + [name]
      guard step.kinds.contains(where: { $0.holds(member) }) else {
        throw DesignDocumentRefusal(
          error: "invalid_design_doc",
          reason:
            "`\(here.joined(separator: "."))` field must have \(step.kinds.map(\.rawValue).joined(separator: " or ")) type"
        )
      }
      try check(member, steps.dropFirst(), at: here)
    }
  }
}
